"""The planner's response schema is built from the executor's action space."""

import pytest
from pydantic import ValidationError

from robomemory.core import ActionSpace, VerbSpec
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
