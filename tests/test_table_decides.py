"""Under the effects table the model is asked only where the table leaves a choice: a real
TextWorld game, real stores, a FAKE model that answers the first candidate and counts calls."""

from __future__ import annotations

import pytest

from robomemory.eval.baselines import BaselineAgent
from robomemory.executors.envs.textworld import TextWorldExecutor, bundled_game
from robomemory.prompts.planner import ROW_WORDS
from robomemory.structured import StructuredLLM
from robomemory.testing import message_text
from robomemory.testing.chat import ScriptedChatModel, minimal_instance
from robomemory.testing.first_candidate import first_candidate_llm


def _planned(agent_config, make_agent, decides: bool):
    agent_config.table_decides = decides
    agent_config.max_steps = 20
    llm = first_candidate_llm()
    agent = make_agent(agent_config, TextWorldExecutor(bundled_game("cooking_1room_cut")), llm)
    result = agent.run(thread_id=f"decides-{decides}")
    return result, llm.chat_model.calls.count("Plan")


@pytest.mark.parametrize("decides", [True, False])
def test_steps_the_table_decides_ask_no_model_and_win_the_same(agent_config, make_agent, decides):
    result, plans = _planned(agent_config, make_agent, decides)
    assert result.success
    if decides:
        assert 0 < plans < result.steps  # some steps decided by the table, some asked
    else:
        assert plans == result.steps


def test_the_planner_reads_each_candidates_row(agent_config, make_agent):
    agent_config.table_decides = False
    agent_config.max_steps = 3
    prompts: list[str] = []

    def responder(schema, messages):
        if schema.__name__ == "Plan":
            prompts.append(message_text(messages))
        return minimal_instance(schema.model_json_schema())

    llm = StructuredLLM(ScriptedChatModel(responder=responder, calls=[], metered=False))
    agent = make_agent(agent_config, TextWorldExecutor(bundled_game("cooking_1room_cut")), llm)
    agent.run(thread_id="rows")
    listed = [ln for ln in prompts[0].splitlines() if ln[:1].isdigit()]
    words = set(ROW_WORDS.values())
    assert listed and all(ln.split(" [", 1)[1].split("]")[0] in words for ln in listed)


def test_react_is_decided_for_the_same_way(agent_config):
    agent_config.max_steps = 20
    llm = first_candidate_llm()
    agent = BaselineAgent(
        "react", agent_config, TextWorldExecutor(bundled_game("cooking_1room_cut")), llm
    )
    result = agent.run()
    turns = llm.chat_model.calls.count("BaselineTurn")
    assert result.success and 0 < turns < result.steps


def test_the_planner_chooses_only_among_what_the_table_leaves_open(agent_config, make_agent):
    agent_config.max_steps = 20
    seen: list[list[str]] = []  # the rows of each list the planner was shown

    def responder(schema, messages):
        if schema.__name__ == "Plan":
            listed = [ln for ln in message_text(messages).splitlines() if ln[:1].isdigit()]
            seen.append([ln.split(" [", 1)[1].split("]")[0] for ln in listed])
        return minimal_instance(schema.model_json_schema())

    llm = StructuredLLM(ScriptedChatModel(responder=responder, calls=[], metered=False))
    agent = make_agent(agent_config, TextWorldExecutor(bundled_game("cooking_1room_cut")), llm)
    agent.run(thread_id="open")
    assert seen
    open_words = {ROW_WORDS["unknown"], ROW_WORDS["helped"]}
    for rows in seen:  # one row of the table, and what it cannot judge
        assert len({r for r in rows if r not in open_words}) <= 1


def test_steps_the_table_decides_ask_no_queries_summaries_or_compression(agent_config, make_agent):
    agent_config.max_steps = 20
    agent_config.memory.temporal.capacity = 2  # a compression is due at most steps
    llm = first_candidate_llm()
    agent = make_agent(agent_config, TextWorldExecutor(bundled_game("cooking_1room_cut")), llm)
    result = agent.run(thread_id="foresight")

    def asked(step: dict) -> set[str]:
        return {c["schema"] for c in step["calls"]}

    decided = [t for t in result.trajectory[1:] if t["plan_reason"].startswith("table:")]
    planned = [t for t in result.trajectory[1:] if "Plan" in asked(t)]
    assert result.success and decided and planned
    assert not any({"MemoryQueries", "StepSummary", "TemporalSummary"} & asked(t) for t in decided)
    # what waited is compressed where a planner reads it: its memory is back within N entries
    assert any("TemporalSummary" in asked(t) for t in planned)
    assert all(t["recall_text"]["temporal"].count("\n- ") < 2 for t in planned)
