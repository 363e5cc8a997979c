"""SLAM navigation between named points through rosbridge (``roslibpy``).

- ROS 2: Nav2's ``NavigateToPose`` action (rosbridge ops ``send_action_goal`` /
  ``action_feedback`` / ``action_result`` / ``cancel_action_goal``). Start rosbridge with
  ``send_action_goals_in_new_thread:=true`` so a cancel is processed while a goal runs.
- ROS 1: ``move_base`` through actionlib topics (goal / cancel / status / feedback / result).

Every call ends in a :class:`NavResult`: succeeded / aborted / canceled / rejected / timeout /
error, with Nav2's ``error_code`` and ``error_msg`` when the server sends them. A timeout or a
cancel request cancels the goal on the robot before returning.

Server variants: ``rosbridge-server-rs`` sends ``result: false`` for every status but 4, so a
terminal status (5 canceled, 6 aborted) is read through the status table whatever ``result``
says; it reports a rejected goal as aborted (status 6), so there it is ABORTED, not REJECTED.
rosbridge_suite before jazzy 2.5.0 / kilted 3.1.0 / rolling 4.0.0 never answers a rejected
goal or a missing action server: a silence watchdog (no feedback or result for
``silence_timeout_s``) cancels the goal and reports it. A dropped link is re-established by
roslibpy (its back-off is capped at ``RECONNECT_MAX_DELAY_S``); a goal is only sent on a live
link, waiting up to ``reconnect_timeout_s`` for it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlparse

import roslibpy
from roslibpy.ros1 import actionlib

from robomemory.core import Outcome
from robomemory.executors.waypoints import Waypoint

log = logging.getLogger(__name__)

Feedback = Callable[[dict], None]
POLL_S = 0.02
RECONNECT_MAX_DELAY_S = 2.0
TERMINAL = {4, 5, 6}  # action_msgs/GoalStatus: succeeded, canceled, aborted


@dataclass
class NavResult:
    """The end of one navigation goal."""

    outcome: Outcome
    message: str
    error_code: int | None = None
    status: int | None = None
    feedback: dict | None = None
    feedback_count: int = 0
    result: Any = None
    duration_s: float = 0.0


class NavClient(Protocol):
    """A navigation stack that drives the base to a pose."""

    def navigate(
        self,
        waypoint: Waypoint,
        timeout_s: float | None = None,
        cancel: threading.Event | None = None,
        on_feedback: Feedback | None = None,
    ) -> NavResult: ...

    def cancel_all(self) -> None: ...

    def close(self) -> None: ...


def connect_rosbridge(url: str, timeout_s: float = 10.0) -> roslibpy.Ros:
    """Connect to ``ws://HOST:PORT`` (or ``wss://``); raise ConnectionError if unreachable."""
    parsed = urlparse(url if "://" in url else f"ws://{url}")
    if parsed.scheme not in ("ws", "wss") or not parsed.hostname:
        raise ValueError(f"not a rosbridge websocket URL: {url!r}")
    ros = roslibpy.Ros(parsed.hostname, parsed.port or 9090, is_secure=parsed.scheme == "wss")
    try:
        ros.run(timeout=timeout_s)
    except roslibpy.core.RosTimeoutError as exc:
        _stop_reconnecting(ros)
        raise ConnectionError(f"rosbridge {url} unreachable within {timeout_s}s") from exc
    ros.factory.maxDelay = RECONNECT_MAX_DELAY_S  # retry a dropped link every ≤ 2 s
    return ros


def wait_connected(ros: roslibpy.Ros, timeout_s: float) -> bool:
    """True once the link is up (roslibpy reconnects by itself), False after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not ros.is_connected:
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S)
    return True


def close_rosbridge(ros: roslibpy.Ros) -> None:
    """Close one connection without stopping the shared event loop of other connections."""
    _stop_reconnecting(ros)
    if ros.is_connected:
        try:
            ros.close()
        except roslibpy.core.RosTimeoutError as exc:
            log.warning("rosbridge close timed out: %s", exc)


def _stop_reconnecting(ros: roslibpy.Ros) -> None:
    """Stop the link's reconnecting, on the event loop's own thread: called from another
    while a connect attempt was starting, twisted's connector failed an assertion."""
    stop = getattr(ros.factory, "stopTrying", None)
    if callable(stop):
        from twisted.internet import reactor  # roslibpy's event loop

        reactor.callFromThread(stop)


@dataclass
class _Goal:
    """Shared state of one running goal, filled from roslibpy's callbacks."""

    on_feedback: Feedback | None
    done: threading.Event = field(default_factory=threading.Event)
    status: int | None = None
    values: Any = None
    failed: bool = False
    feedback: dict | None = None
    feedback_count: int = 0
    heard: float = field(default_factory=time.monotonic)  # last feedback (or the send)

    def feedback_cb(self, fb: Any) -> None:
        self.feedback = dict(fb)
        self.feedback_count += 1
        self.heard = time.monotonic()
        if self.on_feedback is not None:
            self.on_feedback(self.feedback)

    def result_cb(self, res: Any) -> None:
        self.status = _status_int(res.get("status"))
        self.values = res.get("values")
        self.done.set()

    def error_cb(self, err: Any) -> None:
        self.failed = True
        if isinstance(err, dict):
            self.status = _status_int(err.get("status"))
            self.values = err.get("values")
        else:
            self.values = err
        self.done.set()


def _status_int(status: Any) -> int | None:
    value = getattr(status, "value", status)
    return int(value) if isinstance(value, int) else None


def wait_goal(
    goal: _Goal,
    ros: roslibpy.Ros,
    send_cancel: Callable[[], None],
    timeout_s: float | None,
    cancel: threading.Event | None,
    cancel_grace_s: float,
    silence_timeout_s: float | None = None,
) -> str | None:
    """Wait for the goal; None when it ended, else canceled/timeout/silent/disconnected."""
    deadline = time.monotonic() + timeout_s if timeout_s else None
    while not goal.done.wait(POLL_S):
        reason = None
        now = time.monotonic()
        if cancel is not None and cancel.is_set():
            reason = "canceled"
        elif deadline is not None and now >= deadline:
            reason = "timeout"
        elif not ros.is_connected:
            return "disconnected"
        elif silence_timeout_s and now - goal.heard >= silence_timeout_s:
            reason = "silent"
        if reason:
            send_cancel()
            goal.done.wait(cancel_grace_s)
            return reason
    return None


class Nav2Client:
    """ROS 2 Nav2 ``NavigateToPose`` through rosbridge."""

    STATUS = {4: Outcome.SUCCEEDED, 5: Outcome.CANCELED, 6: Outcome.ABORTED}

    def __init__(
        self,
        ros: roslibpy.Ros,
        action_name: str = "/navigate_to_pose",
        action_type: str = "nav2_msgs/action/NavigateToPose",
        behavior_tree: str = "",
        cancel_grace_s: float = 2.0,
        silence_timeout_s: float | None = 15.0,
        reconnect_timeout_s: float = 10.0,
    ) -> None:
        self.ros = ros
        self.client = roslibpy.ActionClient(ros, action_name, action_type)
        self.behavior_tree = behavior_tree
        self.cancel_grace_s = cancel_grace_s
        self.silence_timeout_s = silence_timeout_s
        self.reconnect_timeout_s = reconnect_timeout_s
        self._active: set[str] = set()
        self._lock = threading.Lock()

    def goal_message(self, wp: Waypoint) -> dict:
        return {
            "pose": {
                "header": {"frame_id": wp.frame, "stamp": {"sec": 0, "nanosec": 0}},
                "pose": wp.pose(),
            },
            "behavior_tree": self.behavior_tree,
        }

    def navigate(self, waypoint, timeout_s=None, cancel=None, on_feedback=None) -> NavResult:
        started = time.monotonic()
        if not wait_connected(self.ros, self.reconnect_timeout_s):
            msg = (
                f"rosbridge link down for {self.reconnect_timeout_s:g}s; "
                f"goal for {waypoint.name} not sent"
            )
            return NavResult(Outcome.ERROR, msg, duration_s=time.monotonic() - started)
        goal = _Goal(on_feedback)
        goal_id = self.client.send_goal(
            roslibpy.Goal(self.goal_message(waypoint)),
            goal.result_cb,
            goal.feedback_cb,
            goal.error_cb,
        )
        with self._lock:
            self._active.add(goal_id)
        try:
            interrupted = wait_goal(
                goal,
                self.ros,
                lambda: self.client.cancel_goal(goal_id),
                timeout_s,
                cancel,
                self.cancel_grace_s,
                self.silence_timeout_s,
            )
        finally:
            with self._lock:
                self._active.discard(goal_id)
        res = self._result(waypoint, goal, interrupted, timeout_s)
        res.duration_s = time.monotonic() - started
        return res

    def _result(self, wp: Waypoint, goal: _Goal, interrupted: str | None, timeout_s) -> NavResult:
        values = goal.values if isinstance(goal.values, dict) else {}
        code = values.get("error_code")
        code = int(code) if isinstance(code, int) and code else None
        detail = str(values.get("error_msg") or "")
        common = {
            "status": goal.status,
            "feedback": goal.feedback,
            "feedback_count": goal.feedback_count,
            "result": goal.values,
        }
        if goal.done.is_set() and goal.status == 4 and not goal.failed:
            return NavResult(Outcome.SUCCEEDED, f"reached {wp.name}", **common)
        if interrupted == "timeout":
            msg = f"navigation to {wp.name} timed out after {timeout_s:g}s; goal canceled"
            return NavResult(Outcome.TIMEOUT, msg, code, **common)
        if interrupted == "canceled":
            return NavResult(Outcome.CANCELED, f"navigation to {wp.name} canceled", code, **common)
        if interrupted == "disconnected":
            msg = f"lost the rosbridge connection while navigating to {wp.name}"
            return NavResult(Outcome.ERROR, msg, code, **common)
        if interrupted == "silent":
            msg = (
                f"no feedback or result for {self.silence_timeout_s:g}s navigating to {wp.name}; "
                "goal canceled (rejected goal or no action server on an old rosbridge?)"
            )
            return NavResult(Outcome.ERROR, msg, code, **common)
        if goal.failed and goal.status in TERMINAL and goal.status != 4:
            goal.failed = False  # rosbridge-server-rs: result:false with a terminal status
        if goal.failed:
            text = str(goal.values)
            if "reject" in text.lower():
                msg = f"Nav2 rejected the goal for {wp.name}: {text}"
                return NavResult(Outcome.REJECTED, msg, code, **common)
            return NavResult(
                Outcome.ERROR, f"navigation to {wp.name} failed: {text}", code, **common
            )
        outcome = self.STATUS.get(goal.status or 0, Outcome.ERROR)
        msg = f"Nav2 {outcome.value} navigation to {wp.name}"
        if code is not None or detail:
            msg += f" (error {code}: {detail})" if code is not None else f" ({detail})"
        return NavResult(outcome, msg, code, **common)

    def cancel_all(self) -> None:
        with self._lock:
            active = list(self._active)
        for goal_id in active:
            self.client.cancel_goal(goal_id)

    def close(self) -> None:
        self.cancel_all()


class MoveBaseClient:
    """ROS 1 ``move_base`` (actionlib over rosbridge topics)."""

    STATUS = {
        actionlib.GoalStatus.SUCCEEDED: Outcome.SUCCEEDED,
        actionlib.GoalStatus.ABORTED: Outcome.ABORTED,
        actionlib.GoalStatus.REJECTED: Outcome.REJECTED,
        actionlib.GoalStatus.PREEMPTED: Outcome.CANCELED,
        actionlib.GoalStatus.RECALLED: Outcome.CANCELED,
    }

    def __init__(
        self,
        ros: roslibpy.Ros,
        server_name: str = "/move_base",
        action_name: str = "move_base_msgs/MoveBaseAction",
        cancel_grace_s: float = 2.0,
        reconnect_timeout_s: float = 10.0,
    ) -> None:
        self.ros = ros
        self.reconnect_timeout_s = reconnect_timeout_s
        # Blocks until the server's status topic is heard (roslibpy raises RosTimeoutError).
        self.client = actionlib.ActionClient(ros, server_name, action_name)
        self.cancel_grace_s = cancel_grace_s

    def navigate(self, waypoint, timeout_s=None, cancel=None, on_feedback=None) -> NavResult:
        started = time.monotonic()
        if not wait_connected(self.ros, self.reconnect_timeout_s):
            msg = f"rosbridge link down; goal for {waypoint.name} not sent"
            return NavResult(Outcome.ERROR, msg, duration_s=time.monotonic() - started)
        state = _Goal(on_feedback)
        target = {
            "target_pose": {
                "header": {"seq": 0, "stamp": {"secs": 0, "nsecs": 0}, "frame_id": waypoint.frame},
                "pose": waypoint.pose(),
            }
        }
        goal = actionlib.Goal(self.client, roslibpy.Message(target))
        goal.on("feedback", state.feedback_cb)
        goal.send()
        state.done = goal.wait_result
        interrupted = wait_goal(
            state, self.ros, goal.cancel, timeout_s, cancel, self.cancel_grace_s
        )
        status = (goal.status or {}).get("status")
        text = str((goal.status or {}).get("text") or "")
        common = {
            "status": status,
            "feedback": state.feedback,
            "feedback_count": state.feedback_count,
            "result": goal.result,
        }
        if goal.is_finished and status == actionlib.GoalStatus.SUCCEEDED:
            res = NavResult(Outcome.SUCCEEDED, f"reached {waypoint.name}", **common)
        elif interrupted == "timeout":
            msg = f"navigation to {waypoint.name} timed out after {timeout_s:g}s; goal canceled"
            res = NavResult(Outcome.TIMEOUT, msg, **common)
        elif interrupted:
            outcome = Outcome.CANCELED if interrupted == "canceled" else Outcome.ERROR
            res = NavResult(outcome, f"navigation to {waypoint.name} {interrupted}", **common)
        else:
            outcome = self.STATUS.get(status, Outcome.ERROR)
            msg = f"move_base {outcome.value} navigation to {waypoint.name}"
            res = NavResult(outcome, msg + (f" ({text})" if text else ""), **common)
        res.duration_s = time.monotonic() - started
        return res

    def cancel_all(self) -> None:
        self.client.cancel()

    def close(self) -> None:
        self.client.dispose()
