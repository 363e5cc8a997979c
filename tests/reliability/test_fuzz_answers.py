"""≥ 500 fuzzed model answers across every node of real episodes (FAKE fuzzing model; real
TextWorld, Qdrant, graph store, checkpointer): no crash, no hang, no long-term item deleted
or rewritten without a strictly valid decision, no broken spatial-graph invariant."""

from __future__ import annotations

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from reliability.fuzz import fuzz_llm
from robomemory import build_agent
from robomemory.config import AgentConfig
from robomemory.core import RELATIONS
from robomemory.executors.envs.textworld import TextWorldExecutor, bundled_game

pytestmark = [pytest.mark.reliability, pytest.mark.timeout(1800)]

ANSWERS = 500


def kg_breaks(memory) -> list[str]:
    """Invariants of the spatial graph: well-formed edges, windows, no duplicate live edge."""
    if memory.spatial is None:
        return []
    breaks, live = [], set()
    for t in memory.spatial.triples(include_invalid=True):
        if not t.subject or not t.object or t.relation not in RELATIONS:
            breaks.append(f"malformed edge {t}")
        if t.invalidated_at_step is not None and t.invalidated_at_step < t.valid_from_step:
            breaks.append(f"edge invalidated before it was valid: {t}")
        if t.valid:
            key = (t.subject, t.relation, t.object)
            if key in live:
                breaks.append(f"duplicate live edge {key}")
            live.add(key)
    return breaks


def test_fuzzed_answers_crash_nothing_and_delete_nothing(tmp_path):
    cfg = AgentConfig(robot_id="fuzz-bot", max_steps=4)
    cfg.memory.data_dir = tmp_path / "memory"
    embedder = DeterministicFakeEmbedding(size=32)
    answers, episodes, violations = 0, 0, []
    items_before: dict[str, str] = {}
    while answers < ANSWERS:
        llm, fuzzer = fuzz_llm(seed=episodes)
        executor = TextWorldExecutor(bundled_game("cooking_1room"))
        with build_agent(cfg, executor, llm=llm, embedder=embedder) as agent:
            result = agent.run(thread_id=f"fuzz-{episodes}")  # a crash fails the test here
            assert result.end_reason, result
            memory = agent.context.memory
            items = {i.id: i.text for m in memory.longterm() for i in m.items()}
            for item_id, text in items_before.items():
                if item_id not in items:
                    violations.append(f"episode {episodes}: item {item_id} deleted ({text!r})")
                elif items[item_id] != text:
                    violations.append(f"episode {episodes}: item {item_id} rewritten")
            violations += [f"episode {episodes}: {b}" for b in kg_breaks(memory)]
            items_before = items
        executor.close()
        answers += fuzzer.answers
        episodes += 1
    print(f"{answers} fuzzed answers over {episodes} episodes; {len(violations)} violations")
    assert not violations, "\n".join(violations)
