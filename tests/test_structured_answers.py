"""Hostile model answers are invalid answers: too deep, loosely typed ids. FAKE model."""

from __future__ import annotations

import inspect

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from pydantic import BaseModel, ValidationError

from robomemory import prompts
from robomemory.config import MemoryConfig
from robomemory.memory.longterm import NewItem
from robomemory.memory.system import MemorySystem
from robomemory.nodes import perceive as perceive_node
from robomemory.prompts import condenser, longterm, perceive, planner, robot, spatial, temporal
from robomemory.prompts.spatial import resolver_model
from robomemory.structured import MAX_ANSWER_DEPTH, StructuredLLM, json_depth, parse_answer
from robomemory.testing import ScriptedChatModel

DEEP = ["[" * 1100, '{"a": ' + "[" * 1100, "[" * 1100 + "]" * 1100, '{"delete": ' + "[" * 5000]


def all_schemas() -> list[type[BaseModel]]:
    """Every response schema the prompt modules define, and one of each built per prompt."""
    found: list[type[BaseModel]] = []
    for module in (condenser, longterm, perceive, planner, robot, spatial, temporal):
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseModel) and obj.__module__ == module.__name__:
                found.append(obj)
    found.append(resolver_model((1, 2, 3)))
    found.append(spatial.grounded_relations_model(("apple", "fridge"), "kitchen"))
    found.append(longterm.insights_model(("look()",)))
    return found


def test_prompt_modules_are_all_checked():
    assert {m.__name__ for m in (condenser, longterm, perceive, planner, robot, spatial, temporal)}
    assert prompts.__name__ == "robomemory.prompts"
    assert len(all_schemas()) >= 12


@pytest.mark.parametrize("schema", all_schemas(), ids=lambda s: s.__name__)
@pytest.mark.parametrize("answer", DEEP, ids=["open", "in-object", "closed", "very-deep"])
def test_a_too_deep_answer_is_an_invalid_answer_for_every_schema(schema, answer):
    with pytest.raises(ValueError):
        parse_answer(schema, answer)
    model = ScriptedChatModel(responder=lambda s, m: answer, calls=[])
    node = StructuredLLM(model, max_retries=1).for_node("t")
    fallback = object.__new__(schema)
    out = node.call(schema, "system", "user", fallback=fallback)
    assert not out.ok and out.value is fallback
    assert node.usage.calls == 2 and node.usage.fallbacks == 1


def test_depth_counts_brackets_outside_strings_only():
    assert json_depth('{"a": "[[[[[[", "b": [[1]]}') == 3
    assert json_depth('"\\"[[["') == 0
    assert json_depth("[" * 1000) == MAX_ANSWER_DEPTH + 1


def test_a_deep_updater_answer_is_a_noop_and_consolidation_goes_on(tmp_path):
    cfg = MemoryConfig(data_dir=tmp_path / "mem")
    cfg.spatial.enabled = False
    memory = MemorySystem.open(cfg, DeterministicFakeEmbedding(size=16), "r1")
    try:
        llm = StructuredLLM(ScriptedChatModel(responder=lambda s, m: "[" * 1100, calls=[]))
        args = {"idx": 0, "task": "t", "llm": llm.for_node("t")}
        first = memory.semantic.update(
            NewItem("doors open with a key", "action"), episode_id="e0", **args
        )
        second = memory.semantic.update(
            NewItem("doors stay shut", "action"), episode_id="e1", **args
        )
        assert (first["event"], second["event"]) == ("ADD", "NOOP")
    finally:
        memory.close()


def test_grounded_extractor_cannot_place_a_thing_the_observation_does_not_name():
    """The map adds only what perception names: an answer placing "meal" (named by a recipe's
    text, not shown) or putting a shown thing in an unshown holder is refused by the schema."""
    model = spatial.grounded_relations_model(("apple", "fridge"), "kitchen")
    ok = model.model_validate_json('{"apple": ["in", "fridge"]}')
    assert spatial.grounded_triples(ok) == [("apple", "in", "fridge")]
    with pytest.raises(ValidationError):
        model.model_validate_json('{"meal": ["on", "table"]}')
    with pytest.raises(ValidationError):
        model.model_validate_json('{"apple": ["on", "table"]}')


def test_the_summarizer_sees_the_world_s_answer_not_the_action():
    """Shown the action, a small model reports what it expects the action did; the planner
    sees the action verbatim, so the summarizer is given only what the world said."""
    text = perceive.summarizer_user("You dice the onion.", "kitchen", ["onion"])
    assert text == "Robot is in: kitchen\nNames here: onion\nObservation:\nYou dice the onion."
    assert "Last action" in perceive.perceive_user("dice(onion)", "You dice the onion.")
    long = perceive.summarizer_user("x" * 5000)
    assert len(long) == len("Observation:\n") + perceive.OBSERVATION_CHARS


def test_a_short_answer_of_the_world_is_its_own_summary():
    """No model call, and no chance of a wrong word, for what is already one short text."""
    short = perceive_node.verbatim_summary("You dice the\n\n red onion.", "kitchen")
    assert short == "In kitchen: You dice the red onion."
    assert perceive_node.verbatim_summary("You take the cup.") == "You take the cup."
    assert perceive_node.verbatim_summary("x " * perceive_node.VERBATIM_CHARS, "kitchen") is None
    assert perceive_node.verbatim_summary("   ", "kitchen") is None


def test_a_step_summed_up_without_a_model_names_the_place_and_what_is_here():
    names = ["fridge", "oven", "yellow apple"]
    line = perceive_node.seen_summary("A long room.\n\nYou see a fridge.", "kitchen", names)
    assert line == "In kitchen: fridge, oven, yellow apple"
    assert perceive_node.seen_summary("You see  nothing.", None, []) == "You see nothing."
    many = perceive_node.seen_summary("", "kitchen", [f"thing {i}" for i in range(40)])
    assert len(many) <= perceive.SUMMARY_CHARS and many.startswith("In kitchen: thing 0")


def test_a_summary_cut_at_its_bound_ends_on_a_whole_word():
    cut = (
        "The robot is in the kitchen, with a fridge, an oven, a table, a counter, a stove, "
        "a yellow apple, a cookbook, and a chicken le"
    )[: perceive.SUMMARY_CHARS]
    assert len(cut) == perceive.SUMMARY_CHARS
    assert perceive_node.whole_words(cut) == (
        "The robot is in the kitchen, with a fridge, an oven, a table, a counter, a stove, "
        "a yellow apple, a cookbook"
    )
    said = "The robot opened the book and read the recipe. It names milk, salt and a pepper th"
    assert perceive_node.whole_words(said.ljust(120, "x")[:120]) == said[:46]  # the whole sentence
    assert (
        perceive_node.whole_words(" The robot opened the fridge. ")
        == "The robot opened the fridge."
    )
    assert perceive.StepSummary.model_json_schema()["properties"]["summary"]["maxLength"] == 120


def test_a_short_answer_in_the_same_place_keeps_the_steps_queries():
    from robomemory.nodes.perceive import kept_queries

    last = ["knife location", "recipe steps"]
    assert kept_queries(last, short_answer=True, moved=False) == last
    assert kept_queries(last, short_answer=False, moved=False) == []  # a room, a document
    assert kept_queries(last, short_answer=True, moved=True) == []  # "You move to the hall."
    assert kept_queries([], short_answer=True, moved=False) == []  # the task's first step
    task = "cook a meal"  # the first step's query was the task: the next one asks Q
    assert kept_queries([task], short_answer=True, moved=False, task=task) == []
    assert kept_queries([], short_answer=False, moved=False, task=task, first=True) == [task]
