"""`robomemory bench pi0-client`: round-trip overhead of the π0 client, per policy layout.

For each layout (ALOHA: three 224×224 CHW cameras + 14-dim state → (50, 14); DROID: two HWC
cameras + 7 + 1 state → (50, 8); LIBERO: two HWC cameras + 8 state → (50, 7)) a dummy
openpi-protocol server is started on 127.0.0.1 in its strict, blocking mode (unless ``--url``
is given). Prints the median and p95 of the round trip, of the server's own inference time and
of their difference (the client + wire overhead), plus the cost of preparing an observation
from 640×480 frames.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import numpy as np

from robomemory.commands.json_out import add_json_flag, print_json, wants_json
from robomemory.executors.arm import ArmObservation, FakeArm
from robomemory.executors.layouts import BUILTIN, PolicyLayout, load_layout
from robomemory.executors.pi0 import Pi0Client
from robomemory.executors.skills import Pi0Skill


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help="an existing policy server (default: start the dummy one)")
    parser.add_argument(
        "--layout",
        action="append",
        help="aloha, droid, libero or a layout file; repeat for several (default: all built-in)",
    )
    parser.add_argument("-n", "--iterations", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    add_json_flag(parser)


def _start_dummy(layout: str) -> tuple[subprocess.Popen, str]:
    argv = ["-m", "robomemory.testing.policy_server", "--port", "0"]
    proc = subprocess.Popen(
        [sys.executable, *argv, "--layout", layout, "--block"], stdout=subprocess.PIPE, text=True
    )
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        proc.kill()
        raise RuntimeError(f"dummy policy server did not start: {line!r}")
    return proc, f"ws://127.0.0.1:{int(line.split()[1])}"


def _stats(values_ms: list[float]) -> str:
    arr = np.asarray(values_ms)
    return f"median {np.median(arr):7.3f} ms   p95 {np.percentile(arr, 95):7.3f} ms"


def _request(layout: PolicyLayout, rng: np.random.Generator) -> dict:
    size = (layout.image_size, layout.image_size, 3)
    frames = {c: rng.integers(0, 256, size, dtype=np.uint8) for c in layout.cameras}
    state = rng.standard_normal(layout.state_dim).astype(np.float32)
    return layout.build(ArmObservation(frames, state), "pick up the banana")


def run(url: str, layout: PolicyLayout, iterations: int, warmup: int) -> dict[str, list[float]]:
    client = Pi0Client(url, infer_timeout_s=10.0)
    arm = FakeArm(cameras=tuple(layout.cameras), state=np.zeros(layout.state_dim))
    skill = Pi0Skill(client, arm, layout=layout)
    obs = _request(layout, np.random.default_rng(0))
    out: dict[str, list[float]] = {"rtt": [], "server": [], "overhead": [], "prep": []}
    try:
        for i in range(warmup + iterations):
            t0 = time.perf_counter()
            reply = client.infer(obs)
            rtt = (time.perf_counter() - t0) * 1000
            if reply["actions"].shape[1] < layout.action_dim:
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


def _figures(res: dict[str, list[float]]) -> dict[str, float]:
    """Median and p95 (ms) of each measured part, by name: ``rtt_median_ms``, ..."""
    out: dict[str, float] = {}
    for part, values in res.items():
        arr = np.asarray(values)
        out[f"{part}_median_ms"] = float(np.median(arr))
        out[f"{part}_p95_ms"] = float(np.percentile(arr, 95))
    return out


def main(args: argparse.Namespace) -> int:
    rows: list[dict] = []
    for spec in args.layout or list(BUILTIN):
        layout = load_layout(spec)
        proc, url = (None, args.url) if args.url else _start_dummy(spec)
        try:
            res = run(url, layout, args.iterations, args.warmup)
        finally:
            if proc is not None:
                proc.terminate()
                proc.wait(5)
        cams = len(layout.cameras)
        size = layout.image_size
        rows.append(
            {
                "layout": layout.name,
                "url": url,
                "cameras": cams,
                "image_size": size,
                "state_dim": layout.state_dim,
                "action_dim": layout.action_dim,
                "iterations": args.iterations,
                **_figures(res),
            }
        )
        if wants_json(args):
            continue
        print(
            f"π0 client round trip [{layout.name}] — {url}, {cams}×{size}×{size} "
            f"{layout.image_layout} cameras + {layout.state_dim}-dim state, "
            f"(H,{layout.action_dim}) chunk, {args.iterations} requests"
        )
        print(f"  round trip        {_stats(res['rtt'])}")
        print(f"  server inference  {_stats(res['server'])}")
        print(f"  client+wire       {_stats(res['overhead'])}")
        print(f"  obs prep 640×480→{size} ({cams} cams)  {_stats(res['prep'])}")
    if wants_json(args):
        print_json(rows)
    return 0
