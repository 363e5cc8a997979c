"""`robomemory bench pi0-client`: round-trip overhead of the π0 client.

Against the dummy openpi-protocol policy server (started on 127.0.0.1 unless ``--url`` is
given): three 224×224 cameras + a 14-dim state per request, a (50, 14) chunk back. Prints the
median and p95 of the round trip, of the server's own inference time, and of their difference
(the client + wire overhead), plus the cost of preparing an observation from 640×480 frames.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import numpy as np

from robomemory.executors.arm import FakeArm
from robomemory.executors.pi0 import Pi0Client
from robomemory.executors.skills import Pi0Skill


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help="an existing policy server (default: start the dummy one)")
    parser.add_argument("-n", "--iterations", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)


def _start_dummy() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "robomemory.executors.dummy_policy_server", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        proc.kill()
        raise RuntimeError(f"dummy policy server did not start: {line!r}")
    return proc, f"ws://127.0.0.1:{int(line.split()[1])}"


def _stats(values_ms: list[float]) -> str:
    arr = np.asarray(values_ms)
    return f"median {np.median(arr):7.3f} ms   p95 {np.percentile(arr, 95):7.3f} ms"


def run(url: str, iterations: int, warmup: int) -> dict[str, list[float]]:
    client = Pi0Client(url, infer_timeout_s=10.0)
    client.connect()
    arm = FakeArm()
    skill = Pi0Skill(client, arm)
    rng = np.random.default_rng(0)
    cams = ("cam_high", "cam_left_wrist", "cam_right_wrist")
    obs = {
        "images": {c: rng.integers(0, 256, (3, 224, 224), dtype=np.uint8) for c in cams},
        "state": rng.standard_normal(14).astype(np.float32),
        "prompt": "pick up the banana",
    }
    out: dict[str, list[float]] = {"rtt": [], "server": [], "overhead": [], "prep": []}
    try:
        for i in range(warmup + iterations):
            t0 = time.perf_counter()
            reply = client.infer(obs)
            rtt = (time.perf_counter() - t0) * 1000
            if reply["actions"].shape != (50, 14):
                raise RuntimeError(f"unexpected chunk {reply['actions'].shape}")
            if i >= warmup:
                server = float(reply["server_timing"]["infer_ms"])
                out["rtt"].append(rtt)
                out["server"].append(server)
                out["overhead"].append(rtt - server)
        for _ in range(min(iterations, 100)):
            frames = arm.get_observation()
            t0 = time.perf_counter()
            skill.policy_input(frames, "pick up the banana")
            out["prep"].append((time.perf_counter() - t0) * 1000)
    finally:
        client.close()
    return out


def main(args: argparse.Namespace) -> int:
    proc = None
    url = args.url
    if url is None:
        proc, url = _start_dummy()
    try:
        res = run(url, args.iterations, args.warmup)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(5)
    print(
        f"π0 client round trip — {url}, 3×224×224 cameras + 14-dim state, (50,14) chunk, "
        f"{args.iterations} requests"
    )
    print(f"  round trip        {_stats(res['rtt'])}")
    print(f"  server inference  {_stats(res['server'])}")
    print(f"  client+wire       {_stats(res['overhead'])}")
    print(f"  obs prep 640×480→224 (3 cams)  {_stats(res['prep'])}")
    return 0
