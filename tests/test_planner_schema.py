"""The planner's response schema is built from the executor's action space."""

import pytest
from pydantic import ValidationError

from robomemory.core import Action, ActionSpace, VerbSpec
from robomemory.prompts.planner import make_plan_model, to_action

SPACE = ActionSpace(
    verbs=[
        VerbSpec(name="navigate_to", arg_kinds=["place"]),
        VerbSpec(name="examine", arg_kinds=["object"]),
        VerbSpec(name="put_down_to", arg_kinds=["object", "receptacle"]),
        VerbSpec(name="look"),
    ],
    targets={"place": ["kitchen"], "object": ["apple", "cookbook"], "receptacle": ["table"]},
)


def _plan(*steps):
    return {"steps": list(steps)}


def test_arguments_are_limited_to_known_names_of_the_right_kind():
    model = make_plan_model(SPACE, 5)
    ok = model.model_validate(
        _plan(
            {"action": "examine", "args": ["apple"]},
            {"action": "put_down_to", "args": ["apple", "table"]},
            {"action": "navigate_to", "args": ["kitchen"]},
            {"action": "look", "args": []},
        )
    )
    assert [str(to_action(s)) for s in ok.steps] == [
        "examine(apple)",
        "put_down_to(apple, table)",
        "navigate_to(kitchen)",
        "look()",
    ]
    for bad in (
        {"action": "examine", "args": ["kitchen"]},  # a place is not an object
        {"action": "examine", "args": ["banana"]},  # never seen
        {"action": "examine", "args": []},  # wrong arity
        {"action": "examine"},  # arguments left out
        {"action": "fly", "args": []},  # not a verb
    ):
        with pytest.raises(ValidationError):
            model.model_validate(_plan(bad))


def test_verbs_without_any_known_target_are_left_out():
    space = SPACE.model_copy(update={"targets": {**SPACE.targets, "place": []}})
    model = make_plan_model(space, 5)
    with pytest.raises(ValidationError):
        model.model_validate(_plan({"action": "navigate_to", "args": ["kitchen"]}))
    assert "navigate_to" not in str(model.model_json_schema())


def test_plan_length_is_bounded():
    model = make_plan_model(SPACE, 2)
    with pytest.raises(ValidationError):
        model.model_validate(_plan(*[{"action": "look", "args": []}] * 3))


def test_a_minimum_plan_length_makes_the_planner_name_later_steps():
    look = {"action": "look", "args": []}
    model = make_plan_model(SPACE, 3, min_len=2)
    with pytest.raises(ValidationError):
        model.model_validate(_plan(look))
    assert len(model.model_validate(_plan(look, look)).steps) == 2
    grounded = make_plan_model(SPACE, 3, [Action(verb="look")], min_len=2)
    with pytest.raises(ValidationError):
        grounded.model_validate({"next": "look()", "then": []})
    with pytest.raises(ValidationError):  # nor left out: the grammar must ask for it
        grounded.model_validate({"next": "look()"})
    assert "then" in grounded.model_json_schema()["required"]
    assert grounded.model_validate({"next": "look()", "then": [look]}).then
    with pytest.raises(ValueError, match="1 <= 4 <= 3"):
        make_plan_model(SPACE, 3, min_len=4)


def test_the_config_refuses_a_minimum_plan_length_above_the_maximum():
    from robomemory.config import AgentConfig

    with pytest.raises(ValidationError, match="exceeds max_plan_len"):
        AgentConfig(min_plan_len=4, max_plan_len=3)
    assert AgentConfig(min_plan_len=3, max_plan_len=3).min_plan_len == 3


def test_bench_plan_len_sets_both_bounds():
    import argparse

    from robomemory.eval.bench.suite import add_arguments, config_from_args

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--suite", "tiny", "--out", "x", "--plan-len", "5"])
    cfg = config_from_args(args)
    assert (cfg.min_plan_len, cfg.max_plan_len) == (5, 5)
    with pytest.raises(SystemExit, match="--plan-len: invalid configuration: max_plan_len"):
        config_from_args(parser.parse_args(["--suite", "tiny", "--out", "x", "--plan-len", "0"]))
