"""The π0 manipulation skill loop (paper §3.4, App. F.4).

A high-level action (pick_up(banana), open(oven), ...) becomes a language prompt; then, until
the skill is judged done, max steps, a timeout or a cancel: observe → build the request of the
policy's layout (ALOHA: 3 cameras at 224×224 + 14-dim state; see ``layouts``) → ask the policy
server for an action chunk (H×D) → apply its first m actions to the arm at the control rate, each
clamped to the limits. Every policy or arm fault ends in an ActionResult and stops the arm.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from pydantic import Field

from robomemory.config import StrictModel
from robomemory.core import Action, ActionResult, Observation, Outcome
from robomemory.executors.arm import Arm, ArmError, ArmObservation, JointLimits, MovingArm
from robomemory.executors.base import rejected
from robomemory.executors.frames import jpeg_data_url
from robomemory.executors.known_objects import is_object_name
from robomemory.executors.layouts import (
    BUILTIN,
    LayoutError,
    PolicyLayout,
    announced,
    reset_target,
    resolve_layout,
    warmup_request,
)
from robomemory.executors.pi0 import (
    Pi0Client,
    PolicyError,
    PolicyProtocolError,
    PolicyServerError,
    PolicyTimeout,
)
from robomemory.prompts.robot import SKILL_CHECK_SYSTEM, SkillCheck, skill_check_user

log = logging.getLogger(__name__)

MANIPULATION_VERBS = ("pick_up", "put_down_to", "open", "close", "turn_on", "turn_off")

DEFAULT_TEMPLATES: dict[str, str] = {
    "pick_up": "pick up the {0}",
    "put_down_to": "put the {0} on the {1}",
    "open": "open the {0}",
    "close": "close the {0}",
    "turn_on": "turn on the {0}",
    "turn_off": "turn off the {0}",
}

# Error codes of skill results (ActionResult.error_code).
ERR_POLICY = 1
ERR_POLICY_SERVER = 2
ERR_POLICY_TIMEOUT = 3
ERR_ARM = 4
ERR_BAD_CHUNK = 5
ERR_POLICY_PROTOCOL = 6


class SkillConfig(StrictModel):
    """How a skill runs; defaults follow openpi's ALOHA setup (50 Hz, 50-step chunks).
    Strict as the agent's configuration: a misspelt key, inf, NaN or true is refused."""

    templates: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_TEMPLATES))
    control_hz: float = Field(default=50.0, gt=0)
    actions_per_chunk: int = Field(default=25, ge=1, description="m: actions applied per chunk")
    max_steps: int = Field(default=1000, ge=1, description="control steps per skill")
    check_every_chunks: int = Field(default=4, ge=1, description="success check period")
    planner_camera: str = "cam_high"
    clip_frames: int = Field(default=1, ge=1, description="skill frames shown to the planner")
    apply_reset_pose: bool = Field(
        default=True, description="move to the server's metadata reset_pose before each skill"
    )


SuccessCheck = Callable[[str, ArmObservation, int], bool]
"""(instruction, fresh observation, control steps so far) -> done?"""


@dataclass
class ModelSuccessCheck:
    """Asks a (vision) model whether the skill is done, through NodeLLM + SkillCheck."""

    llm: object  # robomemory.structured.StructuredLLM
    cameras: tuple[str, ...] = ("cam_high",)
    node: str = "skill_check"
    last_reason: str = field(default="", init=False)

    def __call__(self, instruction: str, obs: ArmObservation, steps: int) -> bool:
        images = [jpeg_data_url(obs.images[c]) for c in self.cameras if c in obs.images]
        user = skill_check_user(instruction, steps, [float(v) for v in obs.state])
        res = self.llm.for_node(self.node).call(
            SkillCheck,
            SKILL_CHECK_SYSTEM,
            user,
            SkillCheck(done=False, reason="no verdict"),
            images=images,
        )
        self.last_reason = res.value.reason
        return bool(res.value.done)


class Pi0Skill:
    """Runs manipulation skills on ``arm`` with actions from a π0 policy server.

    ``layout`` (a :class:`PolicyLayout`, a built-in name or a file) defaults to the server
    metadata's ``layout`` if it names one; else (openpi's servers name none) the first built-in
    layout whose blank request the server answers, tried once on connecting (a server refuses
    a request of another layout with a KeyError). ``limits`` default to the layout's.
    """

    def __init__(
        self,
        client: Pi0Client,
        arm: Arm,
        config: SkillConfig | None = None,
        limits: JointLimits | None = None,
        success_check: SuccessCheck | None = None,
        layout: PolicyLayout | str | None = None,
    ) -> None:
        self.client = client
        self.arm = arm
        self.config = config or SkillConfig()
        self.success_check = success_check
        self._layout_spec = layout
        self._layout = None if layout is None else resolve_layout(layout, {})
        self._limits = limits
        if client.warmup is None:
            client.warmup = lambda meta: warmup_request(layout, meta)

    @property
    def layout(self) -> PolicyLayout:
        """The declared layout, else the one the server's metadata names or the server took
        (fixed once known); ALOHA until then."""
        if self._layout is not None:
            return self._layout
        found = resolve_layout(self._layout_spec, self.client.metadata)
        if self.client.connected and announced(self.client.metadata):
            self._layout = found
        return found

    def find_layout(self) -> None:
        """With no layout declared or announced, fix the first built-in one whose blank request
        the server answers (the answer also warms it up); none: one line naming the flag."""
        if self._layout is not None or announced(self.client.metadata):
            return
        refused: list[str] = []
        for name, make in BUILTIN.items():
            layout = make()
            try:
                self.client.infer(layout.example(), timeout_s=self.client.warmup_timeout_s)
            except PolicyServerError:
                refused.append(name)
                continue
            log.info("policy server %s takes the %s layout", self.client.url, name)
            self._layout = layout
            return
        raise LayoutError(
            f"the policy server names no layout and refused the {', '.join(refused)} requests: "
            "give its layout with --policy-layout (aloha, droid, libero or a layout file)"
        )

    @property
    def limits(self) -> JointLimits:
        limits = self._limits or self.layout.limits()
        if limits.dim != self.layout.action_dim:
            raise LayoutError(
                f"joint limits have {limits.dim} values, layout {self.layout.name} "
                f"has {self.layout.action_dim}-dim actions"
            )
        return limits

    def instruction(self, action: Action) -> str:
        template = self.config.templates.get(action.verb)
        if template is None:
            raise KeyError(f"no prompt template for {action.verb!r}")
        return template.format(*action.args)

    def policy_input(self, obs: ArmObservation, prompt: str) -> dict:
        """The request in the policy's layout (frames resized to uint8, state slices, prompt)."""
        return self.layout.build(obs, prompt)

    def move_to_reset_pose(self) -> bool:
        """Apply the server's ``metadata["reset_pose"]`` through the arm; True if it moved.

        An arm with ``move_to(target)`` gets the whole target (a smooth move is its driver's
        job); otherwise the clamped target is applied as one action.
        """
        pose = self.client.metadata.get("reset_pose")
        if pose is None or not self.config.apply_reset_pose:
            return False
        target = reset_target(self.layout, pose, self.arm.get_observation().state)
        if target is None:
            return False
        safe, _ = self.limits.clamp(target)
        if isinstance(self.arm, MovingArm):
            self.arm.move_to(safe)
        else:
            self.arm.apply_action(safe)
        return True

    def observation(
        self, obs: ArmObservation, text: str, clip: list[np.ndarray] | None = None
    ) -> Observation:
        """Text plus the planner camera: up to ``clip_frames`` frames, the fresh one last."""
        cam = self.config.planner_camera
        frames = list(clip or [])
        if cam in obs.images:
            frames.append(obs.images[cam])
        keep = self.config.clip_frames
        if keep == 1:
            frames = frames[-1:]
        elif len(frames) > keep:
            idx = np.linspace(0, len(frames) - 1, keep).round().astype(int)
            frames = [frames[i] for i in idx]
        return Observation(text=text, images=[jpeg_data_url(f) for f in frames])

    def _stop_arm(self) -> None:
        """Stop the arm on the way out of a skill that raised (a fault here is only logged)."""
        try:
            self.arm.stop()
        except ArmError as exc:
            log.error("stopping the arm after a failed skill: %s", exc)

    def run(
        self,
        action: Action,
        timeout_s: float | None = None,
        cancel: threading.Event | None = None,
    ) -> ActionResult:
        """Run one skill to completion; never raises for hardware or policy failures. What
        else raises (a model that cannot answer the success check) stops the arm first."""
        started = time.monotonic()
        deadline = started + timeout_s if timeout_s else None
        cancel = cancel or threading.Event()
        bad = [a for a in action.args if not is_object_name(a)]
        if bad or action.verb not in self.config.templates:
            why = f"not an object name: {bad[0]!r}" if bad else f"no skill for {action.verb!r}"
            return rejected(action, why)
        prompt = self.instruction(action)
        run = _SkillRun(self, action, prompt, started, deadline, cancel)
        try:
            self.client.connect()  # metadata (reset_pose) and the warm-up come first
            self.find_layout()
            self.move_to_reset_pose()
            outcome, message, code = run.loop()
        except PolicyServerError as exc:
            outcome, message = Outcome.ERROR, f"policy server error: {_tail(exc)}"
            code = ERR_POLICY_SERVER
        except PolicyTimeout as exc:
            if deadline is not None and time.monotonic() >= deadline - 0.01:
                outcome, message, code = Outcome.TIMEOUT, f"skill timed out: {exc}", None
            else:
                outcome, message = Outcome.ERROR, f"policy timed out: {exc}"
                code = ERR_POLICY_TIMEOUT
        except PolicyProtocolError as exc:
            outcome, message = Outcome.ERROR, f"bad reply from the policy: {_tail(exc)}"
            code = ERR_POLICY_PROTOCOL
        except PolicyError as exc:
            outcome, message, code = Outcome.ERROR, f"policy unavailable: {exc}", ERR_POLICY
        except LayoutError as exc:  # the arm's state does not fit the layout, a bad reset_pose
            outcome, message, code = Outcome.ERROR, f"policy input: {exc}", ERR_POLICY
        except ArmError as exc:
            outcome, message, code = Outcome.ERROR, f"arm fault: {exc}", ERR_ARM
        except BaseException:  # the skill check's model is down (ModelUnavailableError), ...:
            self._stop_arm()  # the run stops, and the arm does not go on alone
            raise
        if outcome != Outcome.SUCCEEDED:
            self.arm.stop()
            log.warning("%s: %s (%s)", action, outcome, message)
        text = f"{action} {outcome.value}: {message}"
        try:
            fresh = self.observation(self.arm.get_observation(), text, run.clip)
        except ArmError as exc:
            log.error("no observation after %s: %s", action, exc)
            fresh = Observation(text=text)
        return ActionResult(
            action=action,
            outcome=outcome,
            message=message,
            error_code=code,
            observation=fresh,
            duration_s=time.monotonic() - started,
            details={
                "prompt": prompt,
                "steps": run.steps,
                "chunks": run.chunks,
                "clamped": run.clamped,
            },
        )


def _tail(exc: Exception, lines: int = 3) -> str:
    return " | ".join(str(exc).strip().splitlines()[-lines:])


@dataclass
class _SkillRun:
    skill: Pi0Skill
    action: Action
    prompt: str
    started: float
    deadline: float | None
    cancel: threading.Event
    steps: int = 0
    chunks: int = 0
    clamped: int = 0
    clip: list[np.ndarray] = field(default_factory=list)

    def _remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def loop(self) -> tuple[Outcome, str, int | None]:
        cfg = self.skill.config
        limits = self.skill.limits  # the layout is known once connected
        period = 1.0 / cfg.control_hz
        while self.steps < cfg.max_steps:
            if self.cancel.is_set():
                return Outcome.CANCELED, f"canceled after {self.steps} steps", None
            remaining = self._remaining()
            if remaining is not None and remaining <= 0:
                return Outcome.TIMEOUT, f"timed out after {self.steps} steps", None
            obs = self.skill.arm.get_observation()
            if cfg.clip_frames > 1 and cfg.planner_camera in obs.images:
                self.clip.append(obs.images[cfg.planner_camera])
            infer_timeout = self.skill.client.infer_timeout_s
            if remaining is not None:
                infer_timeout = min(infer_timeout, remaining)
            out = self.skill.client.infer(self.skill.policy_input(obs, self.prompt), infer_timeout)
            chunk = self._chunk(out)
            if chunk is None:
                shape = getattr(out.get("actions"), "shape", None)
                return Outcome.ERROR, f"bad action chunk from policy: {shape}", ERR_BAD_CHUNK
            self.chunks += 1
            tick = time.monotonic()
            for row in chunk[: cfg.actions_per_chunk]:
                if self.steps >= cfg.max_steps:
                    break
                if self.cancel.is_set():
                    return Outcome.CANCELED, f"canceled after {self.steps} steps", None
                if self.deadline is not None and time.monotonic() >= self.deadline:
                    return Outcome.TIMEOUT, f"timed out after {self.steps} steps", None
                safe, n_out = limits.clamp(row)
                self.clamped += n_out
                self.skill.arm.apply_action(safe)
                self.steps += 1
                tick += period
                delay = tick - time.monotonic()
                if delay > 0 and self.cancel.wait(delay):
                    return Outcome.CANCELED, f"canceled after {self.steps} steps", None
            last = self.steps >= cfg.max_steps
            if self._check_due(last) and self._judged_done():
                return Outcome.SUCCEEDED, f"done after {self.steps} steps", None
        if self.skill.success_check is None:
            return Outcome.SUCCEEDED, f"ran {self.steps} steps (no success check)", None
        return Outcome.FAILED, f"not done after {self.steps} steps", None

    def _check_due(self, last: bool) -> bool:
        every = self.skill.config.check_every_chunks
        return self.skill.success_check is not None and (last or self.chunks % every == 0)

    def _judged_done(self) -> bool:
        check = self.skill.success_check
        return bool(check and check(self.prompt, self.skill.arm.get_observation(), self.steps))

    def _chunk(self, out: dict) -> np.ndarray | None:
        actions = out.get("actions")
        if not isinstance(actions, np.ndarray) or actions.ndim != 2:
            return None
        dim = self.skill.layout.action_dim
        if actions.shape[1] < dim or actions.shape[0] < 1 or actions.dtype.kind not in "fiu":
            return None
        chunk = np.asarray(actions[:, :dim], dtype=np.float64)
        if not np.all(np.isfinite(chunk)):
            return None
        return chunk
