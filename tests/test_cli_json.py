"""``--json`` on the commands that print a table: stdout is one JSON document holding the
table's rows (parsed here), and nothing else. Stores are REAL (Qdrant Edge, SQLite); the model
answers of the memory set-up are scripted (a fake)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory.cli import main as cli_main
from robomemory.commands.json_out import markdown_rows
from robomemory.config import MemoryConfig
from robomemory.memory.base import Triple
from robomemory.memory.longterm import NewItem
from robomemory.memory.stores.graph_store import GraphChange
from robomemory.memory.system import MemorySystem
from robomemory.structured import StructuredLLM
from robomemory.testing import ScriptedChatModel


def json_out(argv: list[str], capsys) -> object:
    """Run the command; assert exit 0; stdout parsed as JSON."""
    capsys.readouterr()
    assert cli_main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A data folder whose robot has one moved cup and one lesson with a Q update."""
    emb = DeterministicFakeEmbedding(size=32)
    system = MemorySystem.open(MemoryConfig(data_dir=tmp_path / "memory"), emb, "robot-7")
    vecs = {n: emb.embed_query(n) for n in ("cup", "table", "drawer")}
    store = system.spatial.store
    first = store.apply(
        GraphChange(
            key="e1:1",
            step=1,
            episode_id="e1",
            vertices=vecs,
            add=[Triple(subject="cup", relation="on", object="table")],
        )
    )
    store.apply(
        GraphChange(
            key="e1:2",
            step=2,
            episode_id="e1",
            vertices=vecs,
            add=[Triple(subject="cup", relation="in", object="drawer")],
            invalidate=[first.added[0]],
        )
    )
    llm = StructuredLLM(ScriptedChatModel(responder=lambda s, m: {"event": "ADD"})).for_node("t")
    pid = system.semantic.update(
        NewItem("cups are kept in drawers", "task"),
        idx=0,
        task="find the cup",
        episode_id="e1",
        llm=llm,
    )["item_id"]
    system.semantic.update_utility([pid], 1.0, "e2")
    system.close()
    return tmp_path


def test_inspect_json_holds_the_three_tables_rows(home, capsys):
    data = json_out(
        ["inspect", "--robot", "robot-7", "--data", str(home / "memory"), "--json"], capsys
    )
    assert data["robot"] == "robot-7"
    triples = {(t["subject"], t["relation"], t["object"]): t for t in data["triples"]}
    assert triples["cup", "in", "drawer"]["valid"] is True
    assert triples["cup", "on", "table"]["valid"] is False
    assert triples["cup", "on", "table"]["invalidated_at"] == 2
    [item] = data["items"]
    assert item["text"] == "cups are kept in drawers" and item["kind"] == "semantic"
    assert item["q"] > 0 and len(item["id"]) > 8  # the whole id, not the table's 8 characters
    events = [r["event"] for r in data["history"]]
    assert "ADD" in events and "Q" in events


TRACE = {
    "thread_id": "t1",
    "task": "find the cup",
    "end_reason": "done",
    "success": True,
    "gc": 1.0,
    "steps": 2,
    "trajectory": [
        {"step": 1, "action": "open(drawer)", "outcome": "ok", "message": "Opened.", "score": 0},
        {
            "step": 2,
            "action": "take(cup)",
            "outcome": "ok",
            "message": "Taken.",
            "score": 1,
            "plan": ["take(cup)"],
            "verdict": {"approve": True, "reason": "it is there"},
            "map": {"added": ["robot holds cup"], "removed": ["cup in drawer"]},
        },
    ],
}


def test_show_json_has_one_row_per_step(tmp_path, capsys):
    path = tmp_path / "t1.json"
    path.write_text(json.dumps(TRACE))
    data = json_out(["show", str(path), "--json"], capsys)
    assert data["thread_id"] == "t1" and data["success"] is True
    assert [r["action"] for r in data["rows"]] == ["open(drawer)", "take(cup)"]
    assert data["rows"][1]["verdict"]["approve"] is True
    assert data["rows"][1]["map"]["removed"] == ["cup in drawer"]
    assert data["rows"][0]["map"] == {"added": [], "removed": []}


def test_summary_claims_json_on_stdout_and_to_a_file(tmp_path, capsys):
    episodes = tmp_path / "run" / "episodes"
    episodes.mkdir(parents=True)
    trajectory = [
        {"step": 1, "action": "open(box)", "message": "You open the box.", "summary": "Start."},
        {"step": 2, "action": "look()", "message": "", "summary": "The robot rolled the box."},
    ]
    (episodes / "a.json").write_text(json.dumps({"trajectory": trajectory}))
    run = str(tmp_path / "run")
    data = json_out(["bench", "summary-claims", run, "--json"], capsys)
    assert data[run]["flagged"] == 1
    out = tmp_path / "claims.json"  # --json PATH: written there, the table printed
    assert cli_main(["bench", "summary-claims", run, "--json", str(out)]) == 0
    assert json.loads(out.read_text()) == data
    assert "step summaries claiming" in capsys.readouterr().out


def test_markdown_rows_read_a_table_by_column():
    text = "A title.\n\n| suite | SR |\n|---|---|\n| `tiny` | 0.5 |\n| `x` | — |\n\nafter\n"
    assert markdown_rows(text) == [{"suite": "`tiny`", "SR": "0.5"}, {"suite": "`x`", "SR": "—"}]
    assert markdown_rows("no table") == []


# ---- one name for the data folder: --home; --data still taken, with a note -------------------
NOTE = "robomemory: note: --data is deprecated"


def test_home_and_the_deprecated_data_read_the_same_memory(home, capsys):
    by_home = json_out(["inspect", "--robot", "robot-7", "--home", str(home), "--json"], capsys)
    capsys.readouterr()
    argv = ["inspect", "--robot", "robot-7", "--data", str(home / "memory"), "--json"]
    assert cli_main(argv) == 0  # inspect's --data named the memory folder itself: still so
    said = capsys.readouterr()
    assert json.loads(said.out) == by_home
    (note,) = said.err.splitlines()
    assert note.startswith(NOTE) and "--home" in note


def test_show_takes_home_and_data_alike(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ROBOMEMORY_HOME", str(tmp_path / "elsewhere"))
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "t1.json").write_text(json.dumps(TRACE))
    by_home = json_out(["show", "--home", str(tmp_path), "--json"], capsys)
    assert by_home["thread_id"] == "t1"
    assert cli_main(["show", "--data", str(tmp_path), "--json"]) == 0
    said = capsys.readouterr()
    assert json.loads(said.out) == by_home and said.err.startswith(NOTE)


def test_run_takes_data_as_home(tmp_path, capsys):
    from robomemory.cli import build_parser

    parser, _ = build_parser(["run"])
    args = parser.parse_args(["run", "--data", str(tmp_path)])
    assert args.home == tmp_path
    assert capsys.readouterr().err.startswith(NOTE)
    assert parser.parse_args(["run", "--home", str(tmp_path)]).home == tmp_path
    assert capsys.readouterr().err == ""
