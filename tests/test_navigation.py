"""Navigation through rosbridge (roslibpy) against a local rosbridge-protocol server process
whose Nav2 / move_base are FAKES (tests/rosbridge_server.py picks the scenario from goal x)."""

from __future__ import annotations

import json
import math
import socket
import threading
import time

import pytest
from robot_servers import rosbridge_server

from robomemory.core import Outcome
from robomemory.executors.navigation import (
    MoveBaseClient,
    Nav2Client,
    close_rosbridge,
    connect_rosbridge,
)
from robomemory.executors.waypoints import Waypoint, WaypointMap

OK, ABORT, RUN_UNTIL_CANCELED, REJECT, NO_SERVER = (
    Waypoint(name=n, x=x, y=0.5, yaw=math.pi / 2)
    for n, x in [("counter", 1), ("sink", 2), ("far", 3), ("wall", 4), ("nowhere", 5)]
)


@pytest.fixture(scope="module")
def bridge(tmp_path_factory):
    log = tmp_path_factory.mktemp("ros") / "ops.jsonl"
    with rosbridge_server(log) as (_, port):
        ros = connect_rosbridge(f"ws://127.0.0.1:{port}", timeout_s=10)
        yield ros, log
        close_rosbridge(ros)


def ops(log) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.fixture(scope="module")
def nav2(bridge):
    return Nav2Client(bridge[0], cancel_grace_s=2.0)


def test_success_with_feedback_and_goal_message(nav2, bridge):
    seen = []
    res = nav2.navigate(OK, timeout_s=10, on_feedback=seen.append)
    assert res.outcome == Outcome.SUCCEEDED and res.status == 4
    assert [f["distance_remaining"] for f in seen] == [2.0, 1.0, 0.2]
    assert res.feedback_count == 3 and res.feedback["distance_remaining"] == 0.2
    sent = [o for o in ops(bridge[1]) if o["op"] == "send_action_goal"][-1]
    assert sent["action"] == "/navigate_to_pose"
    assert sent["action_type"] == "nav2_msgs/action/NavigateToPose"
    pose = sent["args"]["pose"]
    assert pose["header"]["frame_id"] == "map"
    assert pose["pose"]["orientation"]["z"] == pytest.approx(math.sin(math.pi / 4))


def test_abort_carries_nav2_error_code_and_message(nav2):
    res = nav2.navigate(ABORT, timeout_s=10)
    assert res.outcome == Outcome.ABORTED and res.error_code == 104
    assert "Failed to create plan" in res.message and "sink" in res.message


def test_rejected_goal(nav2):
    res = nav2.navigate(REJECT, timeout_s=10)
    assert res.outcome == Outcome.REJECTED and "rejected" in res.message


def test_missing_action_server_is_an_error(nav2):
    res = nav2.navigate(NO_SERVER, timeout_s=10)
    assert res.outcome == Outcome.ERROR and "does not exist" in res.message


def test_cancel_sends_cancel_and_reports_canceled(nav2, bridge):
    cancel = threading.Event()
    res = nav2.navigate(
        RUN_UNTIL_CANCELED,
        timeout_s=10,
        cancel=cancel,
        on_feedback=lambda fb: cancel.set() if fb["distance_remaining"] < 9.85 else None,
    )
    assert res.outcome == Outcome.CANCELED and res.status == 5
    assert res.feedback_count >= 2
    cancels = [o for o in ops(bridge[1]) if o["op"] == "cancel_action_goal"]
    assert cancels and cancels[-1]["action"] == "/navigate_to_pose"


def test_timeout_cancels_the_goal(nav2, bridge):
    before = len([o for o in ops(bridge[1]) if o["op"] == "cancel_action_goal"])
    res = nav2.navigate(RUN_UNTIL_CANCELED, timeout_s=0.3)
    assert res.outcome == Outcome.TIMEOUT and "goal canceled" in res.message
    after = [o for o in ops(bridge[1]) if o["op"] == "cancel_action_goal"]
    assert len(after) == before + 1
    assert res.status == 5  # the server confirmed the cancel within the grace period


def test_ros1_move_base(bridge):
    mb = MoveBaseClient(bridge[0], cancel_grace_s=2.0)
    try:
        res = mb.navigate(OK, timeout_s=10)
        assert res.outcome == Outcome.SUCCEEDED and res.feedback_count == 1
        res = mb.navigate(ABORT, timeout_s=10)
        assert res.outcome == Outcome.ABORTED and "valid plan" in res.message
        assert mb.navigate(REJECT, timeout_s=10).outcome == Outcome.REJECTED
        res = mb.navigate(RUN_UNTIL_CANCELED, timeout_s=0.3)
        assert res.outcome == Outcome.TIMEOUT and res.status == 2  # PREEMPTED after our cancel
        goals = [o for o in ops(bridge[1]) if o.get("topic") == "/move_base/goal"]
        assert goals[-1]["msg"]["goal"]["target_pose"]["header"]["frame_id"] == "map"
        assert any(o.get("topic") == "/move_base/cancel" for o in ops(bridge[1]))
    finally:
        mb.close()


def test_unreachable_rosbridge_is_a_connection_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ConnectionError):
        connect_rosbridge(f"ws://127.0.0.1:{port}", timeout_s=1.0)


def test_waypoint_file(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text(
        "frame: odom\nwaypoints:\n  a: {x: 1, y: 2}\n  b: {x: 0, y: 0, yaw: 3.14, frame: map}\n"
    )
    wm = WaypointMap.load(path)
    assert wm.names == ["a", "b"]
    assert wm.get("a").frame == "odom" and wm.get("b").frame == "map"
    assert wm.get("a").quaternion()["w"] == pytest.approx(1.0)
    bare = WaypointMap.from_dict({"sink": {"x": 1, "y": 1}})
    assert bare.names == ["sink"]
    with pytest.raises(ValueError):
        WaypointMap.from_dict({"waypoints": {}})
    with pytest.raises(ValueError):
        WaypointMap.from_dict({"waypoints": {"a": [1, 2]}})


HUNG, DROP = (Waypoint(name=n, x=x, y=0.0) for n, x in [("hung", 6), ("drop", 7)])


@pytest.fixture(scope="module")
def rs_bridge(tmp_path_factory):
    log = tmp_path_factory.mktemp("ros_rs") / "ops.jsonl"
    with rosbridge_server(log, "--variant", "rs") as (_, port):
        ros = connect_rosbridge(f"ws://127.0.0.1:{port}", timeout_s=10)
        yield ros
        close_rosbridge(ros)


def test_rosbridge_rs_result_false_with_terminal_status_goes_through_the_status_table(rs_bridge):
    nav = Nav2Client(rs_bridge)
    res = nav.navigate(ABORT, timeout_s=10)
    assert res.outcome == Outcome.ABORTED and res.error_code == 104 and res.status == 6
    res = nav.navigate(RUN_UNTIL_CANCELED, timeout_s=0.3)
    assert res.outcome == Outcome.TIMEOUT and res.status == 5
    cancel = threading.Event()
    cancel.set()
    assert nav.navigate(RUN_UNTIL_CANCELED, 10, cancel).outcome == Outcome.CANCELED
    assert nav.navigate(OK, timeout_s=10).outcome == Outcome.SUCCEEDED
    # rosbridge-server-rs reports a goal Nav2 rejected as aborted (status 6): ABORTED here
    res = nav.navigate(REJECT, timeout_s=10)
    assert res.outcome == Outcome.ABORTED and res.status == 6


def test_old_rosbridge_silence_is_reported_and_the_goal_canceled(tmp_path):
    log = tmp_path / "ops.jsonl"
    with rosbridge_server(log, "--variant", "old") as (_, port):
        ros = connect_rosbridge(f"ws://127.0.0.1:{port}", timeout_s=10)
        try:
            nav = Nav2Client(ros, silence_timeout_s=0.4, cancel_grace_s=0.2)
            for wp in (REJECT, NO_SERVER):
                res = nav.navigate(wp, timeout_s=60)
                assert res.outcome == Outcome.ERROR and "no feedback or result" in res.message
                assert res.duration_s < 5  # not the 60 s navigation timeout
            assert len([o for o in ops(log) if o["op"] == "cancel_action_goal"]) == 2
            assert nav.navigate(OK, timeout_s=10).outcome == Outcome.SUCCEEDED
        finally:
            close_rosbridge(ros)


def test_a_server_that_goes_quiet_mid_goal_is_canceled(nav2, bridge):
    nav = Nav2Client(bridge[0], silence_timeout_s=0.4)
    res = nav.navigate(HUNG, timeout_s=60)
    assert res.outcome == Outcome.ERROR and res.feedback_count == 1
    assert res.status == 5  # our cancel was confirmed
    assert nav.navigate(OK, timeout_s=10).outcome == Outcome.SUCCEEDED


def test_dropped_link_is_reported_then_re_established(tmp_path):
    with rosbridge_server(tmp_path / "ops.jsonl") as (_, port):
        ros = connect_rosbridge(f"ws://127.0.0.1:{port}", timeout_s=10)
        try:
            nav = Nav2Client(ros)
            res = nav.navigate(DROP, timeout_s=30)
            assert res.outcome == Outcome.ERROR and "lost the rosbridge connection" in res.message
            assert nav.navigate(OK, timeout_s=10).outcome == Outcome.SUCCEEDED
        finally:
            close_rosbridge(ros)


def test_server_restart_no_goal_is_queued_while_down(tmp_path):
    log = tmp_path / "ops.jsonl"
    with rosbridge_server(log) as (proc, port):
        ros = connect_rosbridge(f"ws://127.0.0.1:{port}", timeout_s=10)
        proc.terminate()
        proc.wait(5)
    try:
        assert _until(lambda: not ros.is_connected)  # the drop has been noticed
        nav = Nav2Client(ros, reconnect_timeout_s=0.3)
        res = nav.navigate(OK, timeout_s=10)
        assert res.outcome == Outcome.ERROR and "not sent" in res.message
        with rosbridge_server(log, "--port", str(port)):
            nav.reconnect_timeout_s = 10
            assert nav.navigate(OK, timeout_s=10).outcome == Outcome.SUCCEEDED
        # Exactly one goal reached a server: the one sent while the link was down was not queued.
        assert len([o for o in ops(log) if o["op"] == "send_action_goal"]) == 1
    finally:
        close_rosbridge(ros)


def _until(cond, timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
