"""The fake model (``--model fake``), the model-free ``first`` agent and ``bench table``.

Real: TextWorld games, the graph, Qdrant local mode, SQLite checkpoints, git.
FAKE: the model's answers (the project's own first-candidate model, or a model that must not
be called); the embedder (a deterministic hash).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from rich.console import Console

from robomemory.config import AgentConfig, ModelConfig
from robomemory.core import Action, ActionSpace, VerbSpec
from robomemory.eval.bench import table
from robomemory.eval.metrics import EpisodeRecord
from robomemory.eval.report import write_json_atomic
from robomemory.eval.runner import SuiteRunner
from robomemory.eval.suites import get_suite
from robomemory.models import make_llm
from robomemory.prompts.planner import CriticVerdict, make_plan_model
from robomemory.testing import scripted_llm


def _never(_messages):
    raise AssertionError("the first agent asked the suite's model")


def test_the_fake_provider_answers_the_first_candidate_and_approves():
    llm = make_llm(ModelConfig(provider="fake"))
    space = ActionSpace(
        verbs=[VerbSpec(name="go", arg_kinds=["direction"]), VerbSpec(name="look")],
        targets={"direction": ["north", "south"]},
    )
    candidates = [Action(verb="go", args=["south"]), Action(verb="look")]
    plan = make_plan_model(space, 3, candidates)
    out = llm.for_node("planner").call(plan, "system", "user", fallback=lambda: None)
    assert out.value.next == "go(south)" and out.value.then == []
    verdict = llm.for_node("critic").call(CriticVerdict, "s", "u", fallback=lambda: None)
    assert verdict.value.approve is True
    assert ModelConfig(provider="fake").label == "fake:first-candidate"
    assert ModelConfig(provider="local").label.startswith("local:qwen")


def test_the_first_agent_plays_without_the_suites_model(tmp_path):
    """``first`` runs RoboMemory's graph on the fake model: the suite's model (here one that
    fails the test if asked) is never called, no token is counted, and the record says so.
    Steps the effects table decides ask no model; the second game (a cut) leaves it choices,
    which the fake model makes."""
    suite = get_suite("tiny")
    assert [t.id for t in suite.tasks[:2]] == ["tw-cooking_1room", "tw-cooking_1room_cut"]
    runner = SuiteRunner(
        suite,
        tmp_path / "out",
        config=AgentConfig(),
        llm=scripted_llm({"Plan": _never, "BaselineTurn": _never}),
        embedder=DeterministicFakeEmbedding(size=32),
        show_progress=False,
    )
    records = runner.run(["first"], attempts=1, episodes=2)
    assert len(records) == 2
    for record in records:
        assert record.error is None
        assert record.model == "fake:first-candidate"
        assert record.usage["planner"]["calls"] <= record.steps  # decided steps: no call
        assert record.prompt_tokens == 0 and record.completion_tokens == 0
        assert record.success  # the bundled games are won by the table's first candidate
    assert records[1].usage["planner"]["calls"] > 0  # the fake model chose where left a choice


def _record(
    agent: str, task: str, success: bool, steps: int, wall: float, calls: int = 0
) -> EpisodeRecord:
    return EpisodeRecord(
        suite="s", task_id=task, agent=agent, success=success, gc=1.0 if success else 0.5,
        steps=steps, wall_s=wall, usage={"policy": {"calls": calls}},
    )  # fmt: skip


def _table_run(out: Path, commit: str = "a" * 40, react_calls: int = 40) -> table.TableManifest:
    manifest = table.TableManifest(
        commit=commit,
        started="2026-12-06 07:00 UTC",
        suites=[
            table.TableSuite(name="tw-x", split="test", folder="tw-x-test", tasks=2),
            table.TableSuite(name="tw-y", split="dev", folder="tw-y", tasks=1),
        ],
        agents=["robomemory", "react", "first"],
        model="local:qwen",
        cores=2,
        loads={"tw-x-test": table.SuiteLoad(started="07:00", load_start=0.5)},
    )
    write_json_atomic(out / table.MANIFEST, manifest.model_dump(mode="json"))
    for agent, task, won, steps, wall in [
        ("robomemory", "t1", True, 10, 80.0),
        ("robomemory", "t2", False, 40, 320.0),
        ("react", "t1", False, 40, 160.0),
        ("first", "t1", True, 8, 1.0),
    ]:
        rec = _record(agent, task, won, steps, wall, react_calls if agent == "react" else 0)
        write_json_atomic(out / "tw-x-test" / "episodes" / f"{rec.key}.json", rec.model_dump())
    return manifest


def test_the_table_is_rendered_from_its_run_alone(tmp_path):
    _table_run(tmp_path)
    text = table.render_table(tmp_path)
    assert "commit `aaaaaaa`" in text and "model `local:qwen`" in text
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    x, y = rows
    cells = [c.strip() for c in x.strip("|").split("|")]
    assert cells[:4] == ["`tw-x`", "test", "listed", "2"]
    assert cells[4:7] == ["0.500 / 0.750", "25.0", "8.00"]  # robomemory on both tasks
    assert cells[7] == "0.000 / 0.500 (1 of 2)"  # react on one task only
    assert cells[10] == "1.000 / 1.000 (1 of 2)" and cells[-1] == "2.00×"
    assert y.count("not run") == 3 and y.count("—") == 6  # no records: no figures, no ratio
    assert "`tw-x-test`: 07:00, load 0.5, not finished" in text


def test_no_seconds_ratio_where_react_asked_no_model(tmp_path):
    """Every react step decided by the table: its seconds are the world's, no step's cost."""
    _table_run(tmp_path, react_calls=0)
    x = next(ln for ln in table.render_table(tmp_path).splitlines() if ln.startswith("| `tw-x"))
    assert x.rstrip(" |").endswith("— (react asked no model)")


def test_a_table_run_resumes_only_at_its_commit(tmp_path):
    kept = _table_run(tmp_path)
    assert table.open_manifest(tmp_path, kept) == kept
    other = kept.model_copy(update={"commit": "b" * 40})
    with pytest.raises(ValueError, match="a row never mixes commits"):
        table.open_manifest(tmp_path, other)
    fewer = kept.model_copy(update={"agents": ["robomemory"]})
    with pytest.raises(ValueError, match="agents"):
        table.open_manifest(tmp_path, fewer)


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_table_needs_a_commit_and_no_uncommitted_change(tmp_path):
    with pytest.raises(ValueError, match="no git checkout"):
        table.git_commit(tmp_path)
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    _git(tmp_path, "add", "a.py")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a")
    assert table.git_commit(tmp_path) == _git(tmp_path, "rev-parse", "HEAD")
    (tmp_path / "new.txt").write_text("an untracked result\n")  # results may be written
    assert table.git_commit(tmp_path)
    (tmp_path / "a.py").write_text("x = 2\n")
    with pytest.raises(ValueError, match="uncommitted changes"):
        table.git_commit(tmp_path)


def test_the_docs_block_cites_its_run_and_links_from_each_document(tmp_path):
    out = tmp_path / "docs" / "results" / "table-x"
    out.mkdir(parents=True)
    _table_run(out)
    readme, results = tmp_path / "README.md", tmp_path / "docs" / "RESULTS.md"
    start = "<!-- bench-table:begin docs/results/old -->\nold\n<!-- bench-table:end -->"
    readme.write_text(f"# r\n\n{start}\n\nafter\n")
    results.write_text(f"# R\n{start}\n")
    for doc in (readme, results):
        block = table.docs_block(out, tmp_path, doc)
        doc.write_text(table.replace_block(doc.read_text(), block, doc.name))
    [(cited, block)] = table.cited_blocks(readme.read_text())
    assert cited == "docs/results/table-x" and readme.read_text().endswith("\n\nafter\n")
    assert "| `tw-x` | test |" in block and "time and load" not in block  # the README's brief
    assert "[records](results/table-x/tw-x-test/)" in results.read_text()
    with pytest.raises(ValueError, match="no <!-- bench-table:begin"):
        table.replace_block("no markers", block, "X.md")


def test_a_table_run_plays_each_suite_and_writes_its_table(tmp_path):
    """Two agents on one task of the bundled games, through run_table: records, reports,
    the manifest's loads and the table (a re-run resumes, playing nothing again)."""
    out = tmp_path / "run"
    out.mkdir()
    manifest = table.TableManifest(
        commit="c" * 40,
        started="now",
        suites=table.table_suites([("tiny", "dev")], episodes=1),
        agents=["first", "react"],
        model="fake:first-candidate",
        episodes=1,
    )
    manifest = table.open_manifest(out, manifest)
    llm = scripted_llm({})  # react's turns: the first candidate, as the fake model gives
    args = {
        "config": AgentConfig(),
        "llm": llm,
        "embedder": DeterministicFakeEmbedding(size=32),
        "show_progress": False,
    }
    table.run_table(out, args, manifest, Console(quiet=True))
    assert sorted(p.name for p in (out / "tiny" / "episodes").glob("*.json")) == [
        f"first__none__a1__{get_suite('tiny').tasks[0].id}.json",
        f"react__none__a1__{get_suite('tiny').tasks[0].id}.json",
    ]
    kept = json.loads((out / table.MANIFEST).read_text())
    assert kept["loads"]["tiny"]["ended"] is not None
    text = (out / table.TABLE).read_text()
    assert "| `tiny` | dev | listed | 1 |" in text
    stamp = (out / "tiny" / "episodes").stat().st_mtime_ns
    table.run_table(out, args, table.open_manifest(out, manifest), Console(quiet=True))
    assert (out / "tiny" / "episodes").stat().st_mtime_ns == stamp


def test_a_tales_row_stands_beside_the_scores_tales_published(tmp_path):
    entry = table.TableSuite(name="tales-twx", split="test", folder="tales-twx", tasks=16)
    manifest = table.TableManifest(
        commit="d" * 40, started="now", suites=[entry], agents=["first"], model="fake:x"
    )
    write_json_atomic(tmp_path / table.MANIFEST, manifest.model_dump(mode="json"))
    for task, gc in [("TWXCoinCollector", 1.0), ("TWXSorting", 0.25)]:
        rec = EpisodeRecord(suite="tales-twx", task_id=task, agent="first", gc=gc, steps=9)
        write_json_atomic(tmp_path / "tales-twx" / "episodes" / f"{rec.key}.json", rec.model_dump())
    text = table.render_table(tmp_path)
    assert "| first (ours, listed actions) | 62.5 (2 of 16 tasks) |" in text
    assert "| Llama-3.1-8B-Instruct (TALES', no list) | 50.3 |" in text
    assert "docs/website/_includes/table.md" in text
