"""A simulated ALOHA arm in the π0 skill loop: gym-aloha's MuJoCo transfer-cube scene.

- :class:`AlohaSimArm` is an :class:`~robomemory.executors.arm.Arm` over gym-aloha's joint-space
  ``TransferCubeTask`` (14-dim joint targets at 50 Hz). Physics steps without rendering; the
  ``top`` camera is rendered (default 224×224) only when the skill loop observes.
- :func:`transfer_cube_script` is the scripted demonstration: gripper waypoints (the right arm
  picks the cube, the left arm takes it over at a meeting point) solved to joint targets with
  dm_control's inverse kinematics, run in the same scene and recorded.
  :class:`ScriptedTransferCube` serves it as a policy: it finds where the observed joint state
  is on the recording and returns the action chunk that follows (the dummy policy server's
  ``--policy transfer-cube``).

Headless rendering needs ``MUJOCO_GL=egl`` (set here unless already set). Needs the ``sim``
extra (``gym-aloha``).
"""

from __future__ import annotations

import os

os.environ.setdefault("MUJOCO_GL", "egl")

from collections import OrderedDict  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import numpy as np  # noqa: E402
from dm_control import mujoco  # noqa: E402
from dm_control.rl import control  # noqa: E402
from dm_control.utils.inverse_kinematics import qpos_from_site_pose  # noqa: E402
from gym_aloha.constants import ASSETS_DIR, DT  # noqa: E402
from gym_aloha.tasks.sim import TransferCubeTask  # noqa: E402
from gym_aloha.utils import sample_box_pose  # noqa: E402

from robomemory.executors.arm import ArmObservation  # noqa: E402

EPISODE_STEPS = 400  # 8 s at 50 Hz
SUCCESS_REWARD = 4  # the left gripper holds the cube off the table


class _JointTask(TransferCubeTask):
    """Joint-space transfer cube with a given cube pose and no per-step rendering."""

    def __init__(self, cube_pose: np.ndarray) -> None:
        super().__init__()
        self.cube_pose = cube_pose

    def initialize_episode(self, physics) -> None:
        from gym_aloha.tasks import sim

        sim.BOX_POSE[0] = self.cube_pose  # gym-aloha reads the cube pose from this global
        super().initialize_episode(physics)

    def get_observation(self, physics) -> OrderedDict:
        return OrderedDict(qpos=self.get_qpos(physics))


def _environment(xml: str, task) -> control.Environment:
    physics = mujoco.Physics.from_xml_path(str(ASSETS_DIR / xml))
    return control.Environment(
        physics, task, float("inf"), control_timestep=DT, n_sub_steps=None, flat_observation=False
    )


# -- the scripted demonstration ------------------------------------------------------------------


def _quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array(
        [
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        ]
    )


def _axis_quat(axis: tuple[float, float, float], degrees: float) -> np.ndarray:
    half = np.radians(degrees) / 2
    return np.concatenate([[np.cos(half)], np.sin(half) * np.asarray(axis, dtype=float)])


ARM_JOINTS = ("waist", "shoulder", "elbow", "forearm_roll", "wrist_angle", "wrist_rotate")
GRASP_DZ = -0.03  # the gripper's calibration site this far below the cube centre closes on it
MEET = np.array([0.0, 0.5, 0.25])  # where the cube changes hands


class _Solver:
    """Joint angles of one arm for a pose of its ``cali_<side>_site1`` (the gripper tip)."""

    def __init__(self, physics) -> None:
        self.scratch = physics.copy(share_model=True)
        self.joints = {s: [f"vx300s_{s}/{j}" for j in ARM_JOINTS] for s in ("left", "right")}
        model = physics.model
        self.adr = {
            s: [model.jnt_qposadr[model.name2id(j, "joint")] for j in names]
            for s, names in self.joints.items()
        }

    def __call__(self, side: str, pos: np.ndarray, quat: np.ndarray) -> np.ndarray:
        res = qpos_from_site_pose(
            self.scratch,
            f"cali_{side}_site1",
            pos,
            quat,
            self.joints[side],
            max_steps=300,
            inplace=True,
        )
        if not res.success:
            raise RuntimeError(f"no inverse kinematics for the {side} gripper at {pos}")
        return self.scratch.data.qpos[self.adr[side]].copy()


Plan = list[tuple[int, np.ndarray | None, float]]  # (step, joints or None: hold, gripper 0..1)


def _plans(solve: _Solver, start: np.ndarray, cube: np.ndarray) -> tuple[Plan, Plan]:
    """Left and right joint plans: the right arm picks and lifts, the left arm takes over."""
    pick = _quat_mul(_axis_quat((0, 0, 1), 180), _axis_quat((0, 1, 0), 60))  # tilted down
    take = _axis_quat((1, 0, 0), 90)  # level, fingers closing vertically
    right: Plan = [
        (0, start[7:13], 0.0),
        (90, solve("right", cube + [0, 0, 0.08], pick), 1.0),
        (130, solve("right", cube + [0, 0, GRASP_DZ], pick), 1.0),
        (170, None, 0.0),  # grasp
        (200, solve("right", MEET + [0.05, 0, 0], pick), 0.0),
        (220, solve("right", MEET, pick), 0.0),
        (310, None, 1.0),  # release
        (360, solve("right", MEET + [0.1, 0, 0.05], pick), 1.0),
        (EPISODE_STEPS, None, 1.0),
    ]
    left: Plan = [
        (0, start[0:6], 0.0),
        (100, solve("left", MEET + [-0.12, 0, 0], take), 1.0),
        (260, solve("left", MEET, take), 1.0),
        (310, None, 0.0),  # grasp
        (360, solve("left", MEET + [-0.12, 0, 0], take), 0.0),
        (EPISODE_STEPS, None, 0.0),
    ]
    return left, right


def _at(plan: Plan, t: int) -> np.ndarray:
    """Joint targets and gripper command at step ``t`` (linear between waypoints)."""
    held, prev = [], None
    for step, joints, grip in plan:
        prev = prev if joints is None else joints
        held.append((step, prev, grip))
    for (t0, q0, g0), (t1, q1, g1) in zip(held, held[1:], strict=False):
        if t0 <= t <= t1:
            f = (t - t0) / (t1 - t0)
            return np.concatenate([q0 + f * (q1 - q0), [g0 + f * (g1 - g0)]])
    return np.concatenate([held[-1][1], [held[-1][2]]])


@dataclass
class Demonstration:
    """A recorded joint trajectory: ``states[t]`` observed before ``actions[t]`` was applied."""

    states: np.ndarray  # (T, 14) joint positions, grippers normalized
    actions: np.ndarray  # (T, 14) joint targets, grippers as normalized commands
    success: bool


def transfer_cube_script(seed: int) -> Demonstration:
    """Solve the plans for the cube of ``seed``, run them in the scene and record them."""
    arm = AlohaSimArm(seed)
    left, right = _plans(_Solver(arm.env.physics), arm.state, sample_box_pose(seed)[:3])
    states, actions = [], []
    for t in range(EPISODE_STEPS):
        states.append(arm.state)
        actions.append(np.concatenate([_at(left, t), _at(right, t)]))
        arm.apply_action(actions[-1])
    return Demonstration(np.array(states), np.array(actions), arm.max_reward == SUCCESS_REWARD)


class ScriptedTransferCube:
    """Serves a :class:`Demonstration` as a policy: locate the observed state, return what follows.

    The search runs forward from the last match (within ``3 × horizon`` steps), so a paused arm
    or a repeated pose cannot send the script backwards.
    """

    def __init__(self, seed: int, horizon: int = 50) -> None:
        self.demo = transfer_cube_script(seed)
        self.horizon = horizon
        self.cursor = 0

    def reset(self) -> None:
        self.cursor = 0

    def chunk(self, state: np.ndarray) -> np.ndarray:
        state = np.asarray(state, dtype=np.float64).reshape(-1)[:14]
        states = self.demo.states
        if np.linalg.norm(state - states[0]) < 1e-3:
            self.cursor = 0  # back at the start pose: a new episode
        end = min(len(states), self.cursor + 3 * self.horizon)
        dist = np.linalg.norm(states[self.cursor : end] - state, axis=1)
        self.cursor += int(np.argmin(dist))
        rows = np.arange(self.cursor, self.cursor + self.horizon).clip(max=len(states) - 1)
        return self.demo.actions[rows].astype(np.float32)


# -- the arm -------------------------------------------------------------------------------------


class AlohaSimArm:
    """The joint-space transfer-cube scene as an :class:`Arm` (camera ``cam_high`` = ``top``)."""

    def __init__(self, seed: int = 0, image_size: int = 224) -> None:
        self.seed = seed
        self.image_size = image_size
        self.env = _environment(
            "bimanual_viperx_transfer_cube.xml", _JointTask(sample_box_pose(seed))
        )
        self.steps = 0
        self.reward = 0.0
        self.max_reward = 0.0
        self.stop_calls = 0
        self.renders = 0
        self._qpos = self.env.reset().observation["qpos"]

    @property
    def state(self) -> np.ndarray:
        return self._qpos.copy()

    @property
    def success(self) -> bool:
        """The cube is held by the left gripper, off the table (gym-aloha's reward 4)."""
        return self.reward == SUCCESS_REWARD

    def get_observation(self) -> ArmObservation:
        size = self.image_size
        frame = self.env.physics.render(height=size, width=size, camera_id="top")
        self.renders += 1
        return ArmObservation({"cam_high": frame}, self._qpos.copy())

    def apply_action(self, action: np.ndarray) -> None:
        ts = self.env.step(np.asarray(action, dtype=np.float64))
        self._qpos = ts.observation["qpos"]
        self.reward = float(ts.reward or 0.0)
        self.max_reward = max(self.max_reward, self.reward)
        self.steps += 1

    def stop(self) -> None:
        """Position control holds the last target: nothing to send."""
        self.stop_calls += 1
