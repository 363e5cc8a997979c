"""Configuration is validated strictly: at construction, on assignment, one line for the CLI."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from robomemory.cli import main
from robomemory.config import AgentConfig, ModelConfig, UtilityConfig, config_error_line
from robomemory.errors import PREFIX as ERROR
from robomemory.memory.base import MemoryHandles
from robomemory.models import make_llm
from robomemory.prompts.planner import CriticVerdict
from robomemory.testing import ScriptedChatModel

BAD = [
    (ModelConfig, {"temperature": -5}, "temperature"),
    (ModelConfig, {"max_tokens": -1}, "max_tokens"),
    (ModelConfig, {"deadline_s": 0}, "deadline_s"),
    (ModelConfig, {"timeout_s": math.inf}, "timeout_s"),
    (UtilityConfig, {"q_init": math.inf}, "q_init"),
    (UtilityConfig, {"delta": math.nan}, "delta"),
    (UtilityConfig, {"reward_success": -math.inf}, "reward_success"),
    (AgentConfig, {"max_stepz": 3}, "max_stepz"),
    (AgentConfig, {"memory": {"spatial": {"top_m": 2}}}, "memory.spatial.top_m"),
    (AgentConfig, {"max_steps": -1}, "max_steps"),
]


@pytest.mark.parametrize(("model", "values", "field"), BAD, ids=lambda v: str(v)[:30])
def test_invalid_values_and_unknown_fields_are_refused(model, values, field):
    with pytest.raises(ValidationError) as info:
        model(**values)
    line = config_error_line(info.value)
    assert "\n" not in line and line.startswith(f"invalid configuration: {field}:")


def test_invalid_assignment_after_construction_is_refused():
    cfg = AgentConfig()
    with pytest.raises(ValidationError):
        cfg.max_steps = -3
    with pytest.raises(ValidationError):
        cfg.model.temperature = -5
    with pytest.raises(ValidationError):
        cfg.memory.utility.q_init = math.inf
    with pytest.raises(ValidationError):
        cfg.memory.utility.max_stepz = 1  # unknown field
    assert cfg.max_steps == 30 and cfg.model.temperature == 0.0


@pytest.mark.parametrize("robot_id", ["a/b", "a b", "a.b", "../up", "", "-lead", "ü"])
def test_unsafe_robot_ids_are_refused_with_one_line(robot_id):
    with pytest.raises(ValidationError) as info:
        AgentConfig(robot_id=robot_id)
    assert "may use only letters, digits, '-' and '_'" in config_error_line(info.value)


def test_accepted_robot_ids_never_share_a_memory():
    ids = ["a_b", "a-b", "ab", "A_b", "kitchen-bot", "r2"]
    for robot_id in ids:
        AgentConfig(robot_id=robot_id)
    handles = [MemoryHandles.for_robot(r, "e") for r in ids]
    assert len({h.semantic_collection for h in handles}) == len(ids)
    assert len({h.spatial_graph_id for h in handles}) == len(ids)


def test_retries_stop_at_the_call_deadline():
    """max_retries=10**6 against a model that never answers well: the deadline ends it."""
    model = ScriptedChatModel(responder=lambda schema, messages: "not json", calls=[])
    llm = make_llm(ModelConfig(max_retries=10**6, deadline_s=0.3), chat_model=model)
    result = llm.for_node("critic").call(
        CriticVerdict, "system", "user", CriticVerdict(approve=True, reason="fallback")
    )
    assert not result.ok and result.value.reason == "fallback"
    assert "deadline of 0.3 s spent" in result.error
    assert 1 <= len(model.calls) < 10**6


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--max-steps", "-1"], "invalid configuration: max_steps: Input should be greater"),
        (["--robot-id", "a/b"], "invalid configuration: robot_id: robot id 'a/b' may use only"),
    ],
)
def test_run_prints_one_line_for_a_bad_option(argv, expected, tmp_path, capsys):
    code = main(["run", "--home", str(tmp_path), *argv])
    out = capsys.readouterr()
    assert code == 2
    lines = [line for line in (out.out + out.err).splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(ERROR + expected), lines
    assert out.err.strip() == lines[0]  # on stderr


def test_resuming_an_unknown_thread_fails_fast_with_one_line(tmp_path, capsys, monkeypatch):
    def no_model(*args, **kwargs):
        raise AssertionError("the model was built for a thread that cannot resume")

    monkeypatch.setattr("robomemory.factory.make_llm", no_model)
    code = main(["run", "--home", str(tmp_path), "--thread", "nope", "--resume"])
    out = capsys.readouterr()
    lines = [line for line in (out.out + out.err).splitlines() if line.strip()]
    assert code == 2 and lines == [f"{ERROR}no checkpoint for thread 'nope'"]


@pytest.mark.parametrize("field", ["max_steps", "max_plan_len", "n_queries", "max_candidates"])
def test_true_is_no_number(field):
    with pytest.raises(ValidationError, match="True is not a number"):
        AgentConfig(**{field: True})
    with pytest.raises(ValidationError):
        AgentConfig().model_copy().__setattr__(field, False)
    assert getattr(AgentConfig(**{field: 3}), field) == 3
