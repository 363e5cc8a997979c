"""spatial-accuracy bench: real perceive + spatial branch on a real game; the model is a FAKE.

The spatial calls are answered by the facts oracle (a FAKE perfect extractor/resolver fed from
the game's ground truth), so the KG must match the world; a model that extracts nothing scores 0.
"""

from __future__ import annotations

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory.config import AgentConfig
from robomemory.eval.bench.kg_oracle import FactsOracle
from robomemory.eval.bench.spatial_accuracy import evaluate_game, kg_locations, summarize_games
from robomemory.executors.envs.textworld import bundled_game
from robomemory.memory.base import Triple
from robomemory.structured import StructuredLLM
from robomemory.testing import ScriptedChatModel


def _llm(spatial_answer):
    def responder(schema, messages):
        if schema.__name__ in ("ExtractedRelations", "ResolverDecision"):
            return spatial_answer(schema, messages)
        if schema.__name__ == "StepSummary":
            return {"summary": "I looked around."}
        if schema.__name__ == "MemoryQueries":
            return {"queries": ["where are the ingredients"]}
        return {"summary": "earlier steps"}

    return StructuredLLM(ScriptedChatModel(responder=responder, calls=[]), max_retries=0)


@pytest.fixture
def cfg(tmp_path):
    c = AgentConfig().ablate(["longterm"])
    c.memory.data_dir = tmp_path / "mem"
    return c


def test_oracle_spatial_model_scores_high(cfg):
    oracle = FactsOracle()
    rows = evaluate_game(
        bundled_game("cooking_1room"),
        cfg,
        _llm(oracle),
        DeterministicFakeEmbedding(size=32),
        "acc-test",
        before_step=lambda ex: oracle.observe(ex.current_facts()),
    )
    assert len(rows) >= 3
    last = rows[-1]
    assert last["truth"] > 0 and last["recall"] == pytest.approx(1.0)
    assert last["precision"] == pytest.approx(1.0)
    summary = summarize_games({"g": rows})
    assert summary["overall"]["f1"] > 0.8 and summary["by_step"][0]["step"] == 0


def test_pooled_figures_do_not_count_an_empty_step_as_a_miss():
    from robomemory.eval.bench.spatial_accuracy import micro_prf

    zero = {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    empty = {"step": 0, "correct": 0, "predicted": 0, "truth": 0, **zero}
    seen = {"step": 1, "correct": 2, "predicted": 2, "truth": 4, "precision": 1.0, "recall": 0.5}
    seen["f1"] = 0.67
    assert micro_prf([empty, seen]) == pytest.approx({"precision": 1.0, "recall": 0.5, "f1": 2 / 3})
    assert summarize_games({"g": [empty, seen]})["overall"]["f1"] == pytest.approx(0.335)


def test_empty_extractor_places_only_what_the_robot_holds(cfg):
    """With an extractor that says nothing, the KG knows only the robot's own facts (its place
    and holdings, from grounding): nothing is located before the robot takes something."""

    def nothing(schema, _):
        return {"relations": []} if schema.__name__ == "ExtractedRelations" else {}

    rows = evaluate_game(
        bundled_game("cooking_1room"),
        cfg,
        _llm(nothing),
        DeterministicFakeEmbedding(size=32),
        "acc-empty",
    )
    assert any(r["truth"] for r in rows)
    assert rows[0]["f1"] == 0.0  # holding nothing at the start: nothing located
    assert max(r["recall"] for r in rows) < 0.5  # only held objects, never the rest


def test_kg_locations_reads_holds_and_location_relations():
    triples = [
        Triple(subject="I", relation="hold", object="knife"),
        Triple(subject="apple", relation="is in", object="fridge"),
        Triple(subject="pear", relation="on", object="table", invalidated_at_step=3),
        Triple(subject="kitchen", relation="north of", object="hall"),
    ]
    assert kg_locations(triples) == {"knife": "inventory", "apple": "fridge"}


@pytest.mark.parametrize("with_episodes", [True, False])
def test_accuracy_into_a_suite_folder_updates_its_report(tmp_path, monkeypatch, with_episodes):
    from robomemory.cli import build_parser
    from robomemory.eval.bench import spatial_accuracy
    from robomemory.eval.metrics import EpisodeRecord
    from robomemory.eval.report import write_json_atomic

    summary = {
        "games": [{"game": "g", "steps": 2, "precision": 1.0, "recall": 0.5, "f1": 0.67}],
        "by_step": [{"step": 1, "precision": 1.0, "recall": 0.5, "f1": 0.67}],
        "overall": {"precision": 1.0, "recall": 0.5, "f1": 0.67},
        "micro": {"precision": 1.0, "recall": 0.5, "f1": 0.67},
    }

    def fake_run(suite, cfg, out, episodes=None):  # the model-backed part is tested above
        write_json_atomic(out / "spatial_accuracy.json", summary)
        return summary

    monkeypatch.setattr(spatial_accuracy, "run", fake_run)
    if with_episodes:
        record = EpisodeRecord(
            suite="tiny", task_id="g", agent="react", ablation="none", attempt=1, success=False
        )
        write_json_atomic(tmp_path / "episodes" / f"{record.key}.json", record.model_dump())
    argv = ["bench", "spatial-accuracy", "--out", str(tmp_path)]
    parser, handlers = build_parser(argv)
    assert handlers["bench:spatial-accuracy"].main(parser.parse_args(argv)) == 0
    md = tmp_path / "summary.md"
    assert md.exists() == with_episodes
    if with_episodes:
        assert (
            "Spatial accuracy" in md.read_text() and "| g | 2 | 1.000 | 0.500 |" in md.read_text()
        )
