"""The π0 skill loop drives a simulated ALOHA arm (gym-aloha's MuJoCo transfer-cube scene)
through a policy server speaking openpi's protocol with a scripted policy; the episode's success
comes back as the ActionResult. Real: MuJoCo physics and rendering (headless EGL), the policy
server process, the client, the skill loop, RobotExecutor. Scripted (not π0): the policy.

Marked ``sim``; skipped without the ``sim`` extra, ~30 s with it (deselect with ``-m "not sim"``).
"""

from __future__ import annotations

import pytest

pytest.importorskip("gym_aloha", reason="needs the sim extra (gym-aloha)")

from robomemory.core import Outcome
from robomemory.eval.bench.sim_aloha import run_episode, start_policy_server  # noqa: E402

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("seed", [0, 5])
def test_transfer_cube_episode_succeeds_through_the_skill_loop(seed):
    proc, url = start_policy_server(seed)
    try:
        ep = run_episode(seed, url)
    finally:
        proc.terminate()
        proc.wait(5)
    print(f"seed {seed}: {ep.result.outcome.value}, {ep.steps} steps, {ep.steps_per_s:.1f} steps/s")
    assert ep.result.outcome == Outcome.SUCCEEDED, ep.result.message
    # One frame per chunk for the policy, one per success check, one for the planner.
    assert ep.max_reward == 4 and ep.renders == 2 * ep.result.details["chunks"] + 1
    assert ep.result.observation.images  # the scene's camera frame for the planner


def test_a_wrong_episode_fails_and_stops_the_arm():
    """The policy scripted for another cube pose misses: FAILED, never a false success."""
    proc, url = start_policy_server(8)  # cube at (0.175, 0.594); the scene's is at (0.087, 0.405)
    try:
        ep = run_episode(2, url)
    finally:
        proc.terminate()
        proc.wait(5)
    assert ep.result.outcome == Outcome.FAILED and ep.max_reward < 4
    assert ep.steps == 400


def test_bench_json_is_one_row_per_seed_on_stdout(capsys):
    import json

    from robomemory.cli import main

    capsys.readouterr()
    assert main(["bench", "sim-aloha", "--seeds", "0", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)  # stdout is the JSON document alone
    assert [(r["seed"], r["outcome"], r["max_reward"]) for r in rows] == [(0, "succeeded", 4)]
    assert rows[0]["steps_per_s"] > 0 and rows[0]["image_size"] == 224
