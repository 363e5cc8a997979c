"""Spatial KG ground truth on real TextWorld games, and the resolver load staying bounded.

The relation extractor and resolver are FAKE (FactsOracle: answers read from the game's facts,
or a scripted resolver); the graph store, Algorithm 2 and the TextWorld games are real.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory.cli import main as cli_main
from robomemory.config import SpatialConfig
from robomemory.eval.bench.kg_growth import run_kg_growth
from robomemory.memory.spatial import SpatialMemory
from robomemory.memory.stores.graph_nx import NetworkxGraphStore
from robomemory.structured import StructuredLLM
from robomemory.testing import ScriptedChatModel, message_text


@pytest.mark.parametrize("game", ["cooking_6rooms_cut_cook", "cooking_1room"])
def test_where_is_matches_the_game_after_the_walkthrough(game):
    report = run_kg_growth(game, DeterministicFakeEmbedding(size=64), SpatialConfig())
    assert report.wrong == []
    assert report.checked == report.objects and report.objects >= 5
    assert report.rows[-1].history > 0  # moves left invalidated edges behind as history
    assert any(r.resolver_called and r.invalidated for r in report.rows)


def test_kg_growth_command_prints_json(capsys):
    code = cli_main(
        ["bench", "kg-growth", "--game", "custom_3rooms", "--embedder", "fake", "--json"]
    )
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["correct"] == doc["checked"] > 0
    row = doc["rows"][-1]
    assert {"step", "vertices", "edges", "sent_vertices", "sent_edges", "ratio"} <= set(row)


def test_kg_growth_accepts_a_generated_game_file(tmp_path, capsys):
    """A `tw-make custom` world given by path: the resolver load stays small, where-is right."""
    game = tmp_path / "world.z8"
    tw_make = Path(sys.executable).parent / "tw-make"
    subprocess.run(
        [
            tw_make,
            "custom",
            "--world-size",
            "6",
            "--nb-objects",
            "24",
            "--quest-length",
            "3",
            "--seed",
            "5",
            "--output",
            game,
            "--silent",
        ],  # fmt: skip
        check=True,
        timeout=300,
    )
    code = cli_main(["bench", "kg-growth", "--game", str(game), "--embedder", "fake", "--json"])
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert code == 0 and summary["where_is_correct"] == summary["where_is_checked"] > 5
    assert summary["final_edges"] > 30 and summary["resolver_calls"] > 5
    assert summary["sent_edges_max"] <= 20 < summary["local_edges_max"]


def test_kg_growth_names_a_missing_game_file(capsys):
    code = cli_main(["bench", "kg-growth", "--game", "/nowhere/world.z8", "--embedder", "fake"])
    assert code == 2 and "no game file /nowhere/world.z8" in capsys.readouterr().err


def test_resolver_load_stays_bounded_as_the_graph_grows():
    """50 rooms visited one after another: the KG grows linearly, G_local does not."""

    def responder(schema, messages):
        text = message_text(messages)
        if schema.__name__ == "ExtractedTriples":
            room = re.search(r"Observation: (\S+)", text).group(1)
            rels = [("I", "at", room)] + [(f"{room} item{i}", "at", room) for i in range(3)]
            return {"relations": [{"subject": s, "relation": r, "object": o} for s, r, o in rels]}
        stale = re.findall(r"^(\d+): I at (\S+)$", text, flags=re.M)
        return {"delete": [int(i) for i, _ in stale]}

    llm = StructuredLLM(ScriptedChatModel(responder=responder), max_retries=0).for_node("s")
    mem = SpatialMemory(
        SpatialConfig(top_n=3, k_hops=2),
        NetworkxGraphStore("g"),
        DeterministicFakeEmbedding(size=64),
    )
    sent, local = [], []
    for step in range(50):
        room = f"room{step}"
        stats = mem.update(room, [room, "I"], step=step, episode_id="e", llm=llm)
        sent.append(stats.sent_edges)
        local.append(stats.local_edges)
    assert stats.edges == 50 * 3 + 1
    assert max(local) <= 3 * (1 + 3 + 9) + 4  # (n per query)·(D^0+D^1+D^2) old edges + new ones
    assert sent[1:] == [2] * 49  # the resolver sees "I at <last room>" and "I at <this room>"
    assert [t.text() for t in mem.triples() if t.subject == "I"] == ["I at room49"]
