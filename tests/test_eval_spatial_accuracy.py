"""spatial-accuracy bench: real perceive + spatial branch on a real game; the model is a FAKE.

The spatial calls are answered by the facts oracle (a FAKE perfect extractor/resolver fed from
the game's ground truth), so the KG must match the world; a model that extracts nothing scores 0.
"""

from __future__ import annotations

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory.config import AgentConfig
from robomemory.eval.kg_oracle import FactsOracle
from robomemory.eval.spatial_accuracy import evaluate_game, kg_locations, summarize_games
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


def test_empty_extractor_scores_zero(cfg):
    def nothing(schema, _):
        return {"relations": []} if schema.__name__ == "ExtractedRelations" else {}

    rows = evaluate_game(
        bundled_game("cooking_1room"),
        cfg,
        _llm(nothing),
        DeterministicFakeEmbedding(size=32),
        "acc-empty",
    )
    assert all(r["f1"] == 0.0 for r in rows) and any(r["truth"] for r in rows)


def test_kg_locations_reads_holds_and_location_relations():
    triples = [
        Triple(subject="I", relation="hold", object="knife"),
        Triple(subject="apple", relation="is in", object="fridge"),
        Triple(subject="pear", relation="on", object="table", invalidated_at_step=3),
        Triple(subject="kitchen", relation="north of", object="hall"),
    ]
    assert kg_locations(triples) == {"knife": "inventory", "apple": "fridge"}
