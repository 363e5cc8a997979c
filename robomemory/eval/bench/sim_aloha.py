"""`robomemory bench sim-aloha`: the π0 skill loop on a simulated ALOHA arm.

Per episode: a policy server speaking openpi's protocol (the dummy server's scripted
``transfer-cube`` policy, strict ALOHA layout, inference blocking its loop like openpi) is
started for the episode's seed; ``RobotExecutor.execute(pick_up(cube))`` runs the skill loop on
gym-aloha's MuJoCo transfer-cube scene (one 224×224 camera rendered per chunk), the success
check reads the scene's reward, and the episode's success comes back as the ActionResult.
Prints steps/s (control steps per wall-clock second, policy round trips and rendering
included) and the outcome per episode. Needs the ``sim`` extra and headless EGL (or osmesa).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import dataclass

from robomemory.commands.json_out import add_json_flag, print_json, wants_json
from robomemory.core import Action, ActionResult
from robomemory.executors.pi0 import Pi0Client
from robomemory.executors.robot import RobotExecutor
from robomemory.executors.skills import Pi0Skill, SkillConfig
from robomemory.executors.waypoints import WaypointMap


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seeds", default="0,1,2", help="comma list: one episode per seed")
    parser.add_argument("--actions-per-chunk", type=int, default=25)
    parser.add_argument("--image-size", type=int, default=224)
    add_json_flag(parser)


@dataclass
class Episode:
    seed: int
    result: ActionResult
    steps: int
    wall_s: float
    renders: int
    max_reward: float

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.wall_s if self.wall_s > 0 else 0.0


def start_policy_server(seed: int) -> tuple[subprocess.Popen, str]:
    """The scripted transfer-cube policy behind openpi's protocol, on a free port."""
    argv = ["-m", "robomemory.testing.policy_server", "--port", "0", "--policy"]
    argv += ["transfer-cube", "--seed", str(seed), "--layout", "aloha", "--block"]
    proc = subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        proc.kill()
        raise RuntimeError(f"policy server did not start: {line!r}")
    return proc, f"ws://127.0.0.1:{int(line.split()[1])}"


def run_episode(seed: int, url: str, actions_per_chunk: int = 25, image_size: int = 224):
    """One transfer-cube episode driven through RobotExecutor; returns an :class:`Episode`."""
    from robomemory.executors.sim_aloha import EPISODE_STEPS, AlohaSimArm  # sim extra (MuJoCo)

    arm = AlohaSimArm(seed, image_size=image_size)
    config = SkillConfig(
        control_hz=1e6,  # as fast as the simulation goes
        actions_per_chunk=actions_per_chunk,
        max_steps=EPISODE_STEPS,
        check_every_chunks=1,
        apply_reset_pose=False,
    )
    client = Pi0Client(url, infer_timeout_s=30.0, warmup_timeout_s=60.0)
    skill = Pi0Skill(client, arm, config, success_check=lambda *_: arm.success, layout="aloha")
    robot = RobotExecutor(
        arm, WaypointMap.from_dict({"table": {"x": 0, "y": 0}}), None, skill, objects=["cube"]
    )
    try:
        client.connect()  # the warm-up is not part of the episode
        started = time.perf_counter()
        result = robot.execute(Action(verb="pick_up", args=["cube"]))
        wall = time.perf_counter() - started
    finally:
        client.close()
    return Episode(seed, result, arm.steps, wall, arm.renders, arm.max_reward)


def _row(ep: Episode, args: argparse.Namespace) -> dict:
    """One episode's figures as the ``--json`` row."""
    return {
        "seed": ep.seed,
        "outcome": ep.result.outcome.value,
        "steps": ep.steps,
        "wall_s": ep.wall_s,
        "steps_per_s": ep.steps_per_s,
        "renders": ep.renders,
        "max_reward": ep.max_reward,
        "actions_per_chunk": args.actions_per_chunk,
        "image_size": args.image_size,
    }


def main(args: argparse.Namespace) -> int:
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    episodes = []
    for seed in seeds:
        proc, url = start_policy_server(seed)
        try:
            ep = run_episode(seed, url, args.actions_per_chunk, args.image_size)
        finally:
            proc.terminate()
            proc.wait(5)
        episodes.append(ep)
        if wants_json(args):
            continue
        print(
            f"seed {seed}: {ep.result.outcome.value:9s} {ep.steps:3d} steps in {ep.wall_s:5.2f}s "
            f"= {ep.steps_per_s:6.1f} steps/s  ({ep.renders} renders, max reward {ep.max_reward:g})"
        )
    ok = sum(ep.result.ok for ep in episodes)
    steps = sum(ep.steps for ep in episodes)
    wall = sum(ep.wall_s for ep in episodes)
    if wants_json(args):
        print_json([_row(ep, args) for ep in episodes])
        return 0
    print(
        f"transfer-cube, π0 skill loop ↔ openpi-protocol scripted policy, "
        f"{args.actions_per_chunk} actions/chunk, {args.image_size}px top camera: "
        f"success {ok}/{len(episodes)}, {steps / wall:.1f} steps/s overall"
    )
    return 0
