"""RobotExecutor: the paper's low-level executor (§3.4) behind the same Executor protocol as the
simulated worlds. navigate_to → SLAM navigation; pick_up / put_down_to / open / close /
turn_on / turn_off → the π0 skill; task_complete → no-op (the robot trusts the planner).

A skill is only run over an object the robot knows (``--objects``, perception, spatial memory:
see ``known_objects``); any other argument is REJECTED before it can become a π0 prompt.
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from robomemory.core import (
    TASK_COMPLETE,
    Action,
    ActionResult,
    ActionSpace,
    Observation,
    Outcome,
    VerbSpec,
)
from robomemory.executors.arm import Arm, ArmError, FakeArm
from robomemory.executors.base import join_names, rejected
from robomemory.executors.frames import jpeg_data_url
from robomemory.executors.known_objects import KnownObjects, ObjectSource
from robomemory.executors.layouts import PolicyLayout, warmup_request
from robomemory.executors.navigation import (
    MoveBaseClient,
    Nav2Client,
    NavClient,
    close_rosbridge,
    connect_rosbridge,
)
from robomemory.executors.pi0 import Pi0Client
from robomemory.executors.skills import MANIPULATION_VERBS, Pi0Skill, SkillConfig, SuccessCheck
from robomemory.executors.waypoints import WaypointMap

log = logging.getLogger(__name__)

NAVIGATE = "navigate_to"

# Paper Table 4, real-world column. The meanings declared here are what the effects below say
# (grounding.meanings derives them; tests/test_robot.py checks they agree).
_VERBS: tuple[VerbSpec, ...] = (
    VerbSpec(name=NAVIGATE, arg_kinds=["point"], description="drive to a named point", moves=True),
    VerbSpec(name="pick_up", arg_kinds=["object"], description="grasp an object", takes=True),
    VerbSpec(
        name="put_down_to",
        arg_kinds=["object", "receptacle"],  # the thing named, as the task and the policy name it
        description="place the held object in or on the receptacle",
        reverses="pick_up",
    ),
    VerbSpec(name="open", arg_kinds=["object"], reveals=True),
    VerbSpec(name="close", arg_kinds=["object"], reverses="open"),
    VerbSpec(name="turn_on", arg_kinds=["object"]),
    VerbSpec(name="turn_off", arg_kinds=["object"], reverses="turn_on"),
    VerbSpec(name=TASK_COMPLETE, description="declare the task finished"),
)
# What each verb needs, adds and removes (robomemory.effects): the robot's skill library in one
# table. The robot perceives no open/closed or on/off state, so a skill needs only the robot
# there (and the held thing to put); what it changes is what the effects say.
HERE = "at(robot, here)"
EFFECTS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    NAVIGATE: ((), ("at(robot, $0)",), (HERE,)),  # from anywhere, an unknown spot too
    "pick_up": ((HERE,), ("held($0)",), ("at($0, here)", "in($0, ?c)", "on($0, ?s)")),
    "put_down_to": (("held($0)",), ("in($0, $1)", "on($0, $1)"), ("held($0)",)),
    "open": ((HERE,), ("open($0)",), ("closed($0)",)),
    "close": ((HERE,), ("closed($0)",), ("open($0)",)),
    "turn_on": ((HERE,), ("state($0, on)",), ("state($0, off)",)),
    "turn_off": ((HERE,), ("state($0, off)",), ("state($0, on)",)),
}


def _declared(verb: VerbSpec) -> VerbSpec:
    """``verb`` with its row of EFFECTS, validated (each atom parses)."""
    row = EFFECTS.get(verb.name)
    if row is None:
        return verb
    needs, adds, removes = (list(atoms) for atoms in row)
    return VerbSpec.model_validate(
        {**verb.model_dump(), "needs": needs, "adds": adds, "removes": removes}
    )


ROBOT_VERBS: tuple[VerbSpec, ...] = tuple(_declared(v) for v in _VERBS)


def load_arm(spec: Arm | str | None) -> Arm:
    """An Arm instance from an object, a ``"module:factory"`` string, or ``$ROBOMEMORY_ARM``."""
    spec = spec if spec is not None else os.environ.get("ROBOMEMORY_ARM")
    if spec is None:
        log.warning("no arm driver given (arm=/ROBOMEMORY_ARM): using a FakeArm, nothing moves")
        return FakeArm()
    if isinstance(spec, str):
        module, _, name = spec.partition(":")
        if not name:
            raise ValueError(f"arm must be 'module:factory', got {spec!r}")
        spec = getattr(importlib.import_module(module), name)()
    if not isinstance(spec, Arm):
        raise TypeError(f"{type(spec).__name__} lacks get_observation/apply_action/stop")
    return spec


class RobotExecutor:
    """Routes high-level actions to navigation and the π0 skill; never raises for failures."""

    def __init__(
        self,
        arm: Arm,
        waypoints: WaypointMap,
        navigation: NavClient | None = None,
        skill: Pi0Skill | None = None,
        *,
        task: str = "",
        objects: Sequence[str] | None = None,
        receptacles: Sequence[str] | None = None,
        object_sources: Sequence[ObjectSource] = (),
        nav_timeout_s: float = 120.0,
        skill_timeout_s: float = 90.0,
        planner_camera: str = "cam_high",
        on_close: list | None = None,
    ) -> None:
        self.arm = arm
        self.waypoints = waypoints
        self.navigation = navigation
        self.skill = skill
        self.task = task
        self.objects = KnownObjects(objects, object_sources)
        self.receptacles = KnownObjects(receptacles) if receptacles is not None else None
        self.nav_timeout_s = nav_timeout_s
        self.skill_timeout_s = skill_timeout_s
        self.planner_camera = planner_camera
        self.location: str | None = None
        # What the gripper holds, as the skills' outcomes tell: pick_up succeeded -> the thing,
        # put_down_to succeeded -> nothing; unknown after a take or put that did not succeed.
        self.holding: str | None = None
        self.holding_known = True
        self._running: threading.Event | None = None
        self._lock = threading.Lock()
        self._on_close = list(on_close or [])

    @classmethod
    def from_urls(
        cls,
        policy_url: str,
        rosbridge_url: str,
        waypoints_path: str | Path,
        *,
        arm: Arm | str | None = None,
        ros_version: int = 2,
        skill_config: SkillConfig | None = None,
        success_check: SuccessCheck | None = None,
        connect_timeout_s: float = 10.0,
        policy_layout: PolicyLayout | str | None = None,
        ping_interval_s: float | None = None,
        warmup_timeout_s: float = 120.0,
        nav_silence_timeout_s: float | None = 15.0,
        **kwargs,
    ) -> RobotExecutor:
        """Connect to an openpi policy server and rosbridge; load the waypoint file.

        ``arm`` is an :class:`Arm`, or ``"module:factory"`` naming a callable that returns one
        (default: ``$ROBOMEMORY_ARM``); without either, a FakeArm is used and nothing moves.
        ``policy_layout`` (aloha, droid, libero or a layout file) defaults to what the server's
        metadata names (the first connection sends a warm-up request of that layout), else the
        built-in layout the server answers (``Pi0Skill.find_layout``).
        Raises ConnectionError (or a subclass) when either server is unreachable.
        """
        arm = load_arm(arm)
        waypoints = WaypointMap.load(waypoints_path)
        client = Pi0Client(
            policy_url,
            connect_timeout_s=connect_timeout_s,
            ping_interval_s=ping_interval_s,
            ping_timeout_s=ping_interval_s,
            warmup=lambda meta: warmup_request(policy_layout, meta),
            warmup_timeout_s=warmup_timeout_s,
        )
        client.connect()
        try:
            ros = connect_rosbridge(rosbridge_url, timeout_s=connect_timeout_s)
        except ConnectionError:
            client.close()
            raise
        nav: NavClient = (
            Nav2Client(ros, silence_timeout_s=nav_silence_timeout_s)
            if ros_version == 2
            else MoveBaseClient(ros)
        )
        skill = Pi0Skill(
            client, arm, skill_config, success_check=success_check, layout=policy_layout
        )
        closers = [nav.close, lambda: close_rosbridge(ros), client.close]
        return cls(arm, waypoints, nav, skill, on_close=closers, **kwargs)

    # Executor protocol ---------------------------------------------------------------------------

    def reset(self) -> tuple[str, Observation]:
        self.location = None
        self.holding, self.holding_known = None, True  # a task starts with the gripper empty
        points = join_names(self.waypoints.names)
        text = f"The robot is at an unknown spot. Navigation points: {points}."
        return self.task, self._observe(text)

    def action_space(self) -> ActionSpace:
        objects = self.objects.names()
        receptacles = self.receptacles.names() if self.receptacles is not None else objects
        return ActionSpace(
            verbs=list(ROBOT_VERBS),
            targets={"point": self.waypoints.names, "object": objects, "receptacle": receptacles},
            fallback=Action(verb=NAVIGATE, args=[self.waypoints.names[0]]),
            candidates=self.candidates(),
        )

    def candidates(self) -> list[Action]:
        """Actions valid here: skills over the objects known at this point (or of no known
        place), navigate_to every other point, task_complete(). As the verbs' effects need
        (EFFECTS): pick_up with the gripper empty, put_down_to while it holds a thing (onto
        any other); both while what it holds is not known. A held thing is here wherever the
        robot is."""
        out: list[Action] = []
        if self.skill is not None:
            held = self.holding if self.holding_known else None
            here = self.objects.at(self.location)
            here += [held] if held is not None and held not in here else []
            places = self.receptacles.at(self.location) if self.receptacles is not None else here
            offered = {
                "pick_up": not self.holding_known or held is None,
                "put_down_to": not self.holding_known or held is not None,
            }
            for verb in MANIPULATION_VERBS:
                if verb in self.skill.config.templates and offered.get(verb, True):
                    if verb == "put_down_to":  # the held thing, or any here while unknown
                        things = [held] if held is not None else here
                        out += [
                            Action(verb=verb, args=[t, p]) for t in things for p in places if p != t
                        ]
                    else:
                        out += [Action(verb=verb, args=[n]) for n in here]
        out += [Action(verb=NAVIGATE, args=[w]) for w in self.waypoints.names if w != self.location]
        out.append(Action(verb=TASK_COMPLETE))
        return out

    def note_objects(self, names: Iterable[str], where: str | None = None) -> list[str]:
        """Objects perceived (at ``where``, default: here); returns the names refused."""
        return self.objects.note(names, where if where is not None else self.location)

    def known_objects(self) -> list[str]:
        return self.objects.names()

    def execute(
        self,
        action: Action,
        timeout_s: float | None = None,
        cancel: threading.Event | None = None,
    ) -> ActionResult:
        problem = self.action_space().validate_action(action)
        if problem is not None:
            return rejected(action, problem)
        if action.verb == TASK_COMPLETE:
            return ActionResult(
                action=action,
                outcome=Outcome.SUCCEEDED,
                message="task declared complete",
                observation=Observation(),
            )
        cancel = cancel or threading.Event()
        with self._lock:
            if self._running is not None:
                return rejected(action, "another action is still running")
            self._running = cancel
        try:
            if action.verb == NAVIGATE:
                return self._navigate(action, timeout_s or self.nav_timeout_s, cancel)
            if action.verb in MANIPULATION_VERBS and self.skill is not None:
                result = self.skill.run(action, timeout_s or self.skill_timeout_s, cancel)
                self._note_holding(action, result.outcome)
                update: dict = {"observation": self._stamped(result.observation)}
                if result.ok:  # the check saw it done: the world changed (what is done)
                    update["details"] = {**result.details, "changed": True}
                return result.model_copy(update=update)
            return rejected(action, f"{action.verb} is not available on this robot")
        finally:
            with self._lock:
                self._running = None

    def emergency_stop(self) -> None:
        """Cancel the running action, stop the arm and cancel every navigation goal."""
        with self._lock:
            running = self._running
        if running is not None:
            running.set()
        self.arm.stop()
        if self.navigation is not None:
            self.navigation.cancel_all()

    def close(self) -> None:
        for fn in self._on_close:
            try:
                fn()
            except (OSError, RuntimeError, ConnectionError) as exc:
                log.warning("closing robot connection: %s", exc)
        self._on_close = []

    # internals -----------------------------------------------------------------------------------

    def _navigate(self, action: Action, timeout_s: float, cancel: threading.Event) -> ActionResult:
        started = time.monotonic()
        before = self.location
        name = action.args[0]
        waypoint = self.waypoints.get(name)
        if waypoint is None:  # validate_action already checks; kept for direct callers
            valid = join_names(self.waypoints.names)
            return rejected(action, f"unknown point {name!r}; valid: {valid}")
        if self.navigation is None:
            return rejected(action, "navigation is not available on this robot")
        res = self.navigation.navigate(waypoint, timeout_s, cancel)
        if res.outcome == Outcome.SUCCEEDED:
            self.location = name
        elif res.outcome != Outcome.REJECTED:
            self.location = None  # the base may have moved part of the way
        where = self.location or "an unknown spot (navigation did not finish)"
        text = f"{action} {res.outcome.value}: {res.message}. The robot is at {where}."
        details = {
            "status": res.status,
            "feedback_count": res.feedback_count,
            "changed": self.location != before,
        }
        if res.feedback:
            details["last_feedback"] = res.feedback
        return ActionResult(
            action=action,
            outcome=res.outcome,
            message=res.message,
            error_code=res.error_code,
            observation=self._observe(text),
            duration_s=time.monotonic() - started,
            details=details,
        )

    def _note_holding(self, action: Action, outcome: Outcome) -> None:
        """What the gripper holds after a skill: the effects of a take or put that succeeded;
        unknown after one that did not (it may have moved the thing); a rejected one did not
        run."""
        if action.verb not in ("pick_up", "put_down_to") or outcome == Outcome.REJECTED:
            return
        if outcome != Outcome.SUCCEEDED:
            self.holding_known = False
            return
        if action.verb == "put_down_to" and self.holding and self.location is not None:
            self.objects.note([self.holding], self.location)  # it lies here now
        self.holding = action.args[0] if action.verb == "pick_up" else None
        self.holding_known = True

    def _stamped(self, obs: Observation) -> Observation:
        """``obs`` with where the robot is and what it holds (one thing at a time)."""
        held = [self.holding] if self.holding_known and self.holding else []
        return obs.model_copy(
            update={
                "place": self.location,
                "holding": held,
                "holding_known": self.holding_known,
                "hands": 1,
            }
        )

    def _observe(self, text: str) -> Observation:
        try:
            frames = self.arm.get_observation().images
        except ArmError as exc:
            log.error("camera read failed: %s", exc)
            return self._stamped(Observation(text=text))
        frame = frames.get(self.planner_camera)
        images = [jpeg_data_url(frame)] if frame is not None else []
        return self._stamped(Observation(text=text, images=images))
