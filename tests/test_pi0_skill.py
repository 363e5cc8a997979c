"""The π0 skill loop: a FAKE arm (no hardware here) against the real dummy policy server."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from robot_servers import policy_server

from robomemory.core import Action, Outcome
from robomemory.executors.arm import FakeArm, aloha_joint_limits
from robomemory.executors.pi0 import Pi0Client
from robomemory.executors.skills import (
    ERR_ARM,
    ERR_BAD_CHUNK,
    ERR_POLICY_SERVER,
    ERR_POLICY_TIMEOUT,
    ModelSuccessCheck,
    Pi0Skill,
    SkillConfig,
)
from robomemory.prompts.robot import SkillCheck
from robomemory.structured import StructuredLLM
from robomemory.testing import ScriptedChatModel

FAST = {"control_hz": 2000.0, "actions_per_chunk": 10, "max_steps": 40}


@pytest.fixture(scope="module")
def url():
    with policy_server(
        "--fail-on",
        "explode",
        "--wild-on",
        "wild",
        "--bad-shape-on",
        "broken",
        "--slow-on",
        "slowly",
        "--slow-s",
        "1.0",
    ) as (_, port):
        yield f"ws://127.0.0.1:{port}"


@pytest.fixture
def client(url):
    c = Pi0Client(url, infer_timeout_s=5.0)
    yield c
    c.close()


def skill_for(client, arm, check=None, **cfg):
    return Pi0Skill(client, arm, SkillConfig(**{**FAST, **cfg}), success_check=check)


def test_runs_chunks_until_max_steps_and_reports_a_fresh_frame(client):
    arm = FakeArm()
    res = skill_for(client, arm).run(Action(verb="pick_up", args=["banana"]))
    assert res.outcome == Outcome.SUCCEEDED
    assert len(arm.applied) == 40 and res.details["chunks"] == 4
    assert res.details["prompt"] == "pick up the banana"
    # Each chunk starts from the state after the previous chunk (closed loop through the arm).
    np.testing.assert_allclose(arm.applied[10], arm.applied[9] + 0.001, atol=1e-5)
    assert res.observation.images[0].startswith("data:image/jpeg;base64,")
    assert arm.stop_calls == 0


def test_success_check_stops_early_and_templates_are_configurable(client):
    arm = FakeArm()
    seen = []

    def check(instruction, obs, steps):
        seen.append((instruction, steps))
        return steps >= 20

    templates = {"turn_on": "switch on the {0} please"}
    res = skill_for(client, arm, check, check_every_chunks=1, templates=templates).run(
        Action(verb="turn_on", args=["faucet"])
    )
    assert res.outcome == Outcome.SUCCEEDED and len(arm.applied) == 20
    assert seen == [("switch on the faucet please", 10), ("switch on the faucet please", 20)]


def test_never_done_is_failed_and_stops_the_arm(client):
    arm = FakeArm()
    res = skill_for(client, arm, lambda *a: False, check_every_chunks=3).run(
        Action(verb="open", args=["oven"])
    )
    assert res.outcome == Outcome.FAILED and len(arm.applied) == 40
    assert arm.stop_calls == 1


def test_actions_are_clamped_to_joint_limits(client):
    arm = FakeArm()
    limits = aloha_joint_limits()
    res = skill_for(client, arm, max_steps=10).run(Action(verb="pick_up", args=["wild thing"]))
    assert res.outcome == Outcome.SUCCEEDED
    applied = np.stack(arm.applied)
    assert np.all(applied >= limits.low) and np.all(applied <= limits.high)
    np.testing.assert_allclose(applied[0][::2], limits.high[::2])
    assert res.details["clamped"] == 10 * 14


def test_arm_fault_stops_the_arm_with_an_error(client):
    arm = FakeArm(fail_after=5)
    res = skill_for(client, arm).run(Action(verb="pick_up", args=["cup"]))
    assert res.outcome == Outcome.ERROR and res.error_code == ERR_ARM
    assert len(arm.applied) == 5 and arm.stop_calls == 1
    assert "arm fault" in res.message


def test_policy_error_and_bad_chunk_stop_the_arm(client):
    arm = FakeArm()
    res = skill_for(client, arm).run(Action(verb="pick_up", args=["explode"]))
    assert res.outcome == Outcome.ERROR and res.error_code == ERR_POLICY_SERVER
    assert "dummy policy failure" in res.message and arm.applied == [] and arm.stop_calls == 1
    res = skill_for(client, arm).run(Action(verb="close", args=["broken drawer"]))
    assert res.outcome == Outcome.ERROR and res.error_code == ERR_BAD_CHUNK
    assert arm.stop_calls == 2


def test_cancel_mid_skill(client):
    cancel = threading.Event()
    arm = FakeArm(on_apply=lambda n, _a: cancel.set() if n == 13 else None)
    res = skill_for(client, arm).run(Action(verb="pick_up", args=["apple"]), cancel=cancel)
    assert res.outcome == Outcome.CANCELED
    assert len(arm.applied) == 13 and arm.stop_calls == 1


def test_skill_timeout_covers_a_slow_policy(client):
    arm = FakeArm()
    res = skill_for(client, arm).run(Action(verb="pick_up", args=["slowly"]), timeout_s=0.3)
    assert res.outcome == Outcome.TIMEOUT
    assert arm.applied == [] and arm.stop_calls == 1
    # Without a skill deadline, a slow policy is an ERROR of the policy (its own timeout).
    client.infer_timeout_s = 0.3
    res = skill_for(client, arm).run(Action(verb="pick_up", args=["slowly"]))
    assert res.outcome == Outcome.ERROR and res.error_code == ERR_POLICY_TIMEOUT


def test_model_success_check_sends_the_camera_frame(client):
    seen = []

    def responder(schema, messages):
        assert schema is SkillCheck
        parts = messages[-1].content
        seen.append([p["type"] for p in parts])
        return SkillCheck(done=True, reason="banana in gripper")

    llm = StructuredLLM(ScriptedChatModel(responder=responder), vision=True)
    check = ModelSuccessCheck(llm)
    arm = FakeArm()
    res = skill_for(client, arm, check, check_every_chunks=2).run(
        Action(verb="pick_up", args=["banana"])
    )
    assert res.outcome == Outcome.SUCCEEDED and len(arm.applied) == 20
    assert seen == [["text", "image_url"]] and check.last_reason == "banana in gripper"


def test_clip_frames_reach_the_planner(client):
    arm = FakeArm()
    res = skill_for(client, arm, clip_frames=3).run(Action(verb="pick_up", args=["banana"]))
    assert len(res.observation.images) == 3
    assert len(set(res.observation.images)) == 3  # frames from different moments of the skill
