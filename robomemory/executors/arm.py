"""The robot arm as the π0 skill loop sees it: observe, apply one joint command, stop.

A real Mobile-ALOHA-class robot implements :class:`Arm` with its own drivers (ROS topics, the
Interbotix SDK, ...). :class:`FakeArm` is a FAKE that records what it is told: it stands in for
hardware we cannot have in tests and benchmarks.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

# Mobile ALOHA: two 7-dof arms (6 joints + gripper each) -> a 14-dim state and action.
ACTION_DIM = 14
DEFAULT_CAMERAS = ("cam_high", "cam_left_wrist", "cam_right_wrist")


class ArmError(RuntimeError):
    """The arm refused a command or its driver failed."""


@dataclass
class ArmObservation:
    """One snapshot: camera frames (H×W×3 uint8, any size) and the joint state."""

    images: dict[str, np.ndarray]
    state: np.ndarray


@runtime_checkable
class Arm(Protocol):
    """What the skill loop needs from an arm (and the robot's cameras)."""

    def get_observation(self) -> ArmObservation: ...

    def apply_action(self, action: np.ndarray) -> None:
        """Command one joint-space target (already clamped to the joint limits)."""
        ...

    def stop(self) -> None:
        """Stop all arm motion now (hold position). Must be safe to call at any time."""
        ...


@runtime_checkable
class MovingArm(Protocol):
    """An arm whose driver moves smoothly to a whole joint target (e.g. the reset pose)."""

    def move_to(self, target: np.ndarray) -> None:
        """Move to ``target`` (already clamped to the joint limits)."""
        ...


@dataclass
class JointLimits:
    """Per-joint lower/upper bounds; actions outside are clamped before reaching the arm."""

    low: np.ndarray
    high: np.ndarray

    def __post_init__(self) -> None:
        self.low = np.asarray(self.low, dtype=np.float64)
        self.high = np.asarray(self.high, dtype=np.float64)
        if self.low.shape != self.high.shape or np.any(self.low > self.high):
            raise ValueError("joint limits need low <= high with equal shapes")

    @property
    def dim(self) -> int:
        return int(self.low.shape[0])

    def clamp(self, action: np.ndarray) -> tuple[np.ndarray, int]:
        """Return the clamped action and how many joints were out of range."""
        action = np.asarray(action, dtype=np.float64)
        clamped = np.clip(action, self.low, self.high)
        return clamped, int(np.count_nonzero(clamped != action))


def aloha_joint_limits() -> JointLimits:
    """Approximate ViperX-300 limits (rad; gripper normalized 0..1) for both arms.

    Set the exact values from your robot's URDF / driver configuration.
    """
    arm_low = [-3.14, -1.88, -2.15, -3.14, -1.75, -3.14, 0.0]
    arm_high = [3.14, 1.99, 1.60, 3.14, 2.15, 3.14, 1.0]
    return JointLimits(np.array(arm_low * 2), np.array(arm_high * 2))


@dataclass
class FakeArm:
    """A FAKE arm for tests and benchmarks: it records every applied action.

    Its state follows the last applied action (over the dims both have); its cameras return
    flat synthetic frames whose brightness encodes the step count. ``fail_after`` makes the
    n-th ``apply_action`` raise :class:`ArmError` (a driver fault); ``on_apply`` lets a test
    react to each command.
    """

    cameras: tuple[str, ...] = DEFAULT_CAMERAS
    frame_shape: tuple[int, int] = (480, 640)
    fail_after: int | None = None
    on_apply: object = None  # Callable[[int, np.ndarray], None] | None
    applied: list[np.ndarray] = field(default_factory=list)
    stop_calls: int = 0
    observations: int = 0
    state: np.ndarray = field(default_factory=lambda: np.zeros(ACTION_DIM))
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def get_observation(self) -> ArmObservation:
        with self._lock:
            self.observations += 1
            level = (len(self.applied) * 7) % 256
            frame = np.full((*self.frame_shape, 3), level, dtype=np.uint8)
            return ArmObservation({c: frame.copy() for c in self.cameras}, self.state.copy())

    def apply_action(self, action: np.ndarray) -> None:
        with self._lock:
            if self.fail_after is not None and len(self.applied) >= self.fail_after:
                raise ArmError(f"fake driver fault after {len(self.applied)} commands")
            self.applied.append(np.asarray(action, dtype=np.float64).copy())
            n = min(self.state.shape[0], self.applied[-1].shape[0])
            self.state = self.state.astype(np.float64)
            self.state[:n] = self.applied[-1][:n]  # the state follows the commanded dims
            n = len(self.applied)
        if callable(self.on_apply):
            self.on_apply(n, self.applied[-1])

    def stop(self) -> None:
        with self._lock:
            self.stop_calls += 1
