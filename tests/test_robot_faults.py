"""The executor fault table: every policy and navigation fault is one clear ActionResult within
its timeout, the arm is stopped, and the next action still runs.

Real: the openpi-protocol dummy policy server (strict ALOHA layout, blocking its event loop as
openpi does) with its wire-fault knobs, and the rosbridge-protocol server. FAKES: the arm
(FakeArm) and Nav2 behind rosbridge (goal x picks the scenario, see tests/rosbridge_server.py).
"""

from __future__ import annotations

import time

import pytest
from robot_servers import policy_server, rosbridge_server

from robomemory.core import Action, Outcome
from robomemory.executors.arm import FakeArm
from robomemory.executors.robot import RobotExecutor
from robomemory.executors.skills import ERR_POLICY, ERR_POLICY_PROTOCOL, SkillConfig

pytestmark = pytest.mark.reliability

WAYPOINTS = """
waypoints:
  counter: {x: 1.0, y: 0.0}
  sink: {x: 2.0, y: 0.0}
  hallway: {x: 3.0, y: 0.0}
  wall: {x: 4.0, y: 0.0}
  nowhere: {x: 5.0, y: 0.0}
  stairs: {x: 6.0, y: 0.0}
  door: {x: 7.0, y: 0.0}
"""
POLICY_KNOBS = (
    "--layout", "aloha", "--block",
    "--slow-on", "slow", "--slow-s", "1.5",
    "--garbage-on", "garbage",
    "--truncate-on", "truncated",
    "--short-buffer-on", "short",
    "--close-mid-frame-on", "severed",
)  # fmt: skip
OBJECTS = ["cup", "slow cup", "garbage cup", "truncated cup", "short cup", "severed cup"]


def fast() -> SkillConfig:
    return SkillConfig(control_hz=2000, actions_per_chunk=10, max_steps=20)


def make_robot(purl: str, rurl: str, tmp, arm: FakeArm, **kw) -> RobotExecutor:
    return RobotExecutor.from_urls(
        purl,
        rurl,
        tmp / "w.yaml",
        arm=arm,
        task="fault table",
        skill_config=fast(),
        objects=OBJECTS,
        connect_timeout_s=5.0,
        **kw,
    )


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("faults")
    (tmp / "w.yaml").write_text(WAYPOINTS)
    with (
        policy_server(*POLICY_KNOBS) as (_, pport),
        rosbridge_server(tmp / "ops.jsonl") as (_, rport),
    ):
        yield f"ws://127.0.0.1:{pport}", f"ws://127.0.0.1:{rport}", tmp


@pytest.fixture
def robot(servers):
    purl, rurl, tmp = servers
    arm = FakeArm()
    ex = make_robot(purl, rurl, tmp, arm, nav_silence_timeout_s=0.5)
    ex.skill.client.infer_timeout_s = 0.5
    yield ex, arm
    ex.close()


def act(ex: RobotExecutor, verb: str, arg: str, timeout_s: float | None = None):
    started = time.monotonic()
    res = ex.execute(Action(verb=verb, args=[arg]), timeout_s=timeout_s)
    return res, time.monotonic() - started


def still_works(ex: RobotExecutor, arm: FakeArm) -> None:
    """The run goes on: the next skill and the next navigation both succeed."""
    before = len(arm.applied)
    assert act(ex, "pick_up", "cup")[0].outcome == Outcome.SUCCEEDED
    assert len(arm.applied) == before + 20
    assert act(ex, "navigate_to", "counter")[0].outcome == Outcome.SUCCEEDED


@pytest.mark.parametrize(
    ("target", "fragment"),
    [
        ("garbage cup", "undecodable"),
        ("truncated cup", "undecodable"),
        ("short cup", "buffer is too small"),
    ],
)
def test_undecodable_policy_reply_is_an_error_result_and_stops_the_arm(robot, target, fragment):
    ex, arm = robot
    res, took = act(ex, "pick_up", target)
    assert res.outcome == Outcome.ERROR and res.error_code == ERR_POLICY_PROTOCOL
    assert fragment in res.message and "bad reply from the policy" in res.message
    assert arm.stop_calls == 1 and arm.applied == [] and took < 5
    still_works(ex, arm)


def test_connection_closed_mid_frame(robot):
    ex, arm = robot
    res, took = act(ex, "pick_up", "severed cup")
    assert res.outcome == Outcome.ERROR and res.error_code == ERR_POLICY
    assert "closed" in res.message and arm.stop_calls == 1 and took < 5
    still_works(ex, arm)


def test_slow_policy_is_a_timeout_within_the_skill_deadline(robot):
    ex, arm = robot
    res, took = act(ex, "pick_up", "slow cup", timeout_s=0.4)
    assert res.outcome == Outcome.TIMEOUT and arm.stop_calls == 1
    assert took < 1.4  # the deadline, not the 1.5 s the server takes
    still_works(ex, arm)  # reconnects once the blocked server has finished the stale request


def test_policy_server_down(servers, tmp_path):
    _, rurl, tmp = servers
    with policy_server("--layout", "aloha", "--block") as (proc, port):
        arm = FakeArm()
        ex = make_robot(f"ws://127.0.0.1:{port}", rurl, tmp, arm)
        proc.terminate()
        proc.wait(5)
    try:
        res, took = act(ex, "pick_up", "cup")
        assert res.outcome == Outcome.ERROR and res.error_code == ERR_POLICY
        assert "unavailable" in res.message and arm.stop_calls == 1 and took < 6
        # Navigation does not need the policy: the run goes on.
        assert act(ex, "navigate_to", "counter")[0].outcome == Outcome.SUCCEEDED
    finally:
        ex.close()


@pytest.mark.parametrize(
    ("point", "outcome", "timeout_s", "limit_s"),
    [
        ("sink", Outcome.ABORTED, 10.0, 5.0),
        ("wall", Outcome.REJECTED, 10.0, 5.0),
        ("hallway", Outcome.TIMEOUT, 0.5, 3.0),
        ("stairs", Outcome.ERROR, 30.0, 3.0),  # silent server: the 0.5 s watchdog
        ("door", Outcome.ERROR, 30.0, 5.0),  # the link drops mid-goal
    ],
)
def test_navigation_faults(robot, point, outcome, timeout_s, limit_s):
    ex, arm = robot
    res, took = act(ex, "navigate_to", point, timeout_s=timeout_s)
    assert res.outcome == outcome and took < limit_s
    assert res.message and point in res.message and ex.location is None
    if point == "door":
        assert "lost the rosbridge connection" in res.message
    still_works(ex, arm)
