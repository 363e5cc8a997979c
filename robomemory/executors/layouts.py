"""Policy input/output layouts: how one arm observation becomes an openpi request.

openpi's policies each expect their own keys (see ``src/openpi/policies/*_policy.py`` there):

- ``aloha`` — ``images: {cam_high, cam_left_wrist, cam_right_wrist}`` C×H×W uint8, ``state``
  (14,), ``prompt``; 14-dim joint actions (configs ``pi0_aloha*``, ``pi05_aloha``).
- ``droid`` — ``observation/exterior_image_1_left``, ``observation/wrist_image_left`` H×W×C
  uint8, ``observation/joint_position`` (7,), ``observation/gripper_position`` (1,), ``prompt``;
  8-dim actions (7 joint velocities + gripper position; configs ``pi0_droid``, ``pi0_fast_droid``,
  ``pi05_droid``).
- ``libero`` — ``observation/image``, ``observation/wrist_image`` H×W×C uint8,
  ``observation/state`` (8,), ``prompt``; 7-dim actions (configs ``pi0_libero``, ``pi05_libero``).

A user layout is the same fields in a YAML/JSON file (``--policy-layout my_robot.yaml``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from robomemory.executors.arm import ArmObservation, JointLimits, aloha_joint_limits
from robomemory.executors.frames import resize_with_pad, to_chw


class LayoutError(ValueError):
    """An arm observation or a reset pose that does not fit the policy's layout."""


class StateField(BaseModel):
    """One slice of the arm state sent under its own key."""

    model_config = ConfigDict(extra="forbid")
    key: str
    dim: int = Field(ge=1)


class PolicyLayout(BaseModel):
    """Declared wire layout of one policy: cameras, image layout, state and action sizes."""

    model_config = ConfigDict(extra="forbid")
    name: str
    cameras: dict[str, str] = Field(description="arm camera name -> wire key")
    optional: list[str] = Field(
        default_factory=list, description="wire keys of cameras the policy can do without"
    )
    images_key: str | None = Field(
        default=None, description="nest images under this key (ALOHA: 'images'); None: flat keys"
    )
    image_layout: Literal["HWC", "CHW"] = "HWC"
    image_size: int = Field(default=224, ge=8)
    state: list[StateField]
    action_dim: int = Field(ge=1)
    action_low: list[float] | None = None
    action_high: list[float] | None = None

    @model_validator(mode="after")
    def _check(self) -> PolicyLayout:
        if not self.cameras:
            raise ValueError(f"layout {self.name!r} needs at least one camera")
        for bound in (self.action_low, self.action_high):
            if bound is not None and len(bound) != self.action_dim:
                raise ValueError(f"layout {self.name!r}: bounds need {self.action_dim} values")
        return self

    @property
    def state_dim(self) -> int:
        return sum(f.dim for f in self.state)

    def limits(self) -> JointLimits:
        """Bounds every applied action is clamped to (the layout's own, else ±π)."""
        if self.action_low is not None and self.action_high is not None:
            return JointLimits(np.array(self.action_low), np.array(self.action_high))
        return JointLimits(np.full(self.action_dim, -np.pi), np.full(self.action_dim, np.pi))

    # request ---------------------------------------------------------------------------------

    def build(self, obs: ArmObservation, prompt: str) -> dict:
        """The request dict for one observation: resized uint8 frames, state slices, prompt."""
        state = np.asarray(obs.state, dtype=np.float32).reshape(-1)
        if state.shape[0] < self.state_dim:
            raise LayoutError(
                f"layout {self.name}: the arm state has {state.shape[0]} values, "
                f"{self.state_dim} needed"
            )
        images = {}
        for cam, key in self.cameras.items():
            if cam in obs.images:
                frame = resize_with_pad(obs.images[cam], self.image_size, self.image_size)
                images[key] = to_chw(frame) if self.image_layout == "CHW" else frame
        out: dict = {self.images_key: images} if self.images_key else dict(images)
        start = 0
        for f in self.state:
            out[f.key] = state[start : start + f.dim]
            start += f.dim
        out["prompt"] = prompt
        return out

    def example(self) -> dict:
        """A blank request of the right shapes (used for the warm-up inference)."""
        size = (self.image_size, self.image_size, 3)
        frames = {c: np.zeros(size, np.uint8) for c in self.cameras}
        return self.build(ArmObservation(frames, np.zeros(self.state_dim)), "warm up")

    def problems(self, request: dict) -> list[str]:
        """What is wrong with a request for this layout (empty list: it matches)."""
        found: list[str] = []
        images = request.get(self.images_key) if self.images_key else request
        if not isinstance(images, dict):
            return [f"missing {self.images_key!r} (a dict of camera frames)"]
        s = self.image_size
        want = (3, s, s) if self.image_layout == "CHW" else (s, s, 3)
        unexpected = set(images) - set(self.cameras.values()) if self.images_key else set()
        found += [f"unexpected camera {key!r}" for key in sorted(unexpected)]
        for key in self.cameras.values():
            img = images.get(key)
            if img is None and key in self.optional:
                continue
            if not isinstance(img, np.ndarray):
                found.append(f"missing image {key!r}")
            elif img.dtype != np.uint8 or img.shape != want:
                found.append(f"image {key!r}: {img.dtype}{img.shape}, expected uint8{want}")
        for f in self.state:
            val = request.get(f.key)
            if not isinstance(val, np.ndarray) or val.shape != (f.dim,):
                got = getattr(val, "shape", type(val).__name__)
                found.append(f"state {f.key!r}: {got}, expected ({f.dim},)")
        if not isinstance(request.get("prompt"), str):
            found.append("missing 'prompt' (a string)")
        return found


def _aloha() -> PolicyLayout:
    lim = aloha_joint_limits()
    return PolicyLayout(
        name="aloha",
        cameras={c: c for c in ("cam_high", "cam_left_wrist", "cam_right_wrist")},
        images_key="images",
        image_layout="CHW",
        optional=["cam_left_wrist", "cam_right_wrist"],  # openpi fills absent wrists, masked
        state=[StateField(key="state", dim=14)],
        action_dim=14,
        action_low=lim.low.tolist(),
        action_high=lim.high.tolist(),
    )


def _droid() -> PolicyLayout:
    return PolicyLayout(
        name="droid",
        cameras={
            "exterior_image_1_left": "observation/exterior_image_1_left",
            "wrist_image_left": "observation/wrist_image_left",
        },
        state=[
            StateField(key="observation/joint_position", dim=7),
            StateField(key="observation/gripper_position", dim=1),
        ],
        action_dim=8,  # 7 joint velocities (rad/s, DROID clips to ±1) + gripper position 0..1
        action_low=[-1.0] * 7 + [0.0],
        action_high=[1.0] * 8,
    )


def _libero() -> PolicyLayout:
    return PolicyLayout(
        name="libero",
        cameras={"image": "observation/image", "wrist_image": "observation/wrist_image"},
        state=[StateField(key="observation/state", dim=8)],
        action_dim=7,  # end-effector delta (6, normalized ±1) + gripper ±1
        action_low=[-1.0] * 7,
        action_high=[1.0] * 7,
    )


BUILTIN = {"aloha": _aloha, "droid": _droid, "libero": _libero}


def load_layout(spec: str | Path | PolicyLayout) -> PolicyLayout:
    """A layout from a built-in name (aloha, droid, libero) or a YAML/JSON file path."""
    if isinstance(spec, PolicyLayout):
        return spec
    key = str(spec).strip().lower()
    if key in BUILTIN:
        return BUILTIN[key]()
    path = Path(spec)
    if not path.is_file():
        raise ValueError(f"unknown policy layout {spec!r}: use {', '.join(BUILTIN)} or a file")
    text = path.read_text(encoding="utf-8")
    data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    if not isinstance(data, dict):
        raise ValueError(f"policy layout file {path} must hold a mapping")
    return PolicyLayout.model_validate({"name": path.stem, **data})


def announced(metadata: dict) -> str | None:
    """The built-in layout the server's metadata names (openpi's own servers name none)."""
    named = metadata.get("layout") if isinstance(metadata, dict) else None
    return named.lower() if isinstance(named, str) and named.lower() in BUILTIN else None


def resolve_layout(spec: str | Path | PolicyLayout | None, metadata: dict) -> PolicyLayout:
    """The flag's layout if given, else the server metadata's ``layout``, else ALOHA."""
    if spec is not None:
        return load_layout(spec)
    named = announced(metadata)
    return BUILTIN[named]() if named else _aloha()


def warmup_request(spec: str | Path | PolicyLayout | None, metadata: dict) -> dict | None:
    """The blank request of the declared or announced layout; None when neither names one
    (the skill then finds the layout the server takes, see ``Pi0Skill``)."""
    if spec is None and announced(metadata) is None:
        return None
    return resolve_layout(spec, metadata).example()


def reset_target(layout: PolicyLayout, reset_pose: object, state: np.ndarray) -> np.ndarray | None:
    """The joint target for openpi's ``metadata["reset_pose"]``; None when it does not apply.

    ALOHA configs send 6 joint angles applied to both arms (grippers keep their state, as in
    openpi's ``examples/aloha_real``); a pose of ``action_dim`` values is used as it is.
    """
    if reset_pose is None:
        return None
    if isinstance(reset_pose, np.ndarray) and reset_pose.dtype.kind in "iuf":
        reset_pose = reset_pose.reshape(-1).tolist()
    numbers = isinstance(reset_pose, list | tuple) and all(
        isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool)
        for v in reset_pose
    )
    if not numbers:  # a string, a dict, bytes, a ragged or nested list: no pose
        raise LayoutError(f"reset_pose is not a flat list of numbers: {str(reset_pose)[:80]}")
    pose = np.asarray(reset_pose, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(pose)):
        raise LayoutError("reset_pose has non-finite values")
    if pose.shape[0] == layout.action_dim:
        return pose
    if layout.action_dim == 14 and pose.shape[0] == 6:
        target = np.asarray(state, dtype=np.float64).reshape(-1)[:14].copy()
        if target.shape[0] != 14:
            return None
        target[0:6] = pose
        target[7:13] = pose
        return target
    raise LayoutError(f"reset_pose of {pose.shape[0]} values does not fit layout {layout.name}")
