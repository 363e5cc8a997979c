"""A policy server speaking openpi's websocket protocol with a DUMMY policy (not π0).

Same wire behaviour as openpi's ``WebsocketPolicyServer``: metadata first, msgpack frames with
openpi's NumPy convention, ``server_timing`` in every answer, ``GET /healthz``, and *every*
failure (an undecodable request, a layout mismatch, a policy exception) sent as a traceback text
frame followed by close code 1011. It serves for benchmarks of the client, dry runs of the robot
stack without a GPU, and tests. The dummy policy returns a (horizon, action_dim) chunk that moves
each joint slowly away from the current state.

    python -m robomemory.testing.policy_server --port 8000 --layout aloha --block

``--layout NAME|FILE`` is the strict mode: a request that does not match the layout (keys, image
dtype/shape, state sizes) fails as openpi's input transforms would. ``--block`` runs inference
inside the event loop as openpi does (nothing else is served meanwhile, pings go unanswered).

Test knobs (matched against the observation's prompt): ``--fail-on WORD`` raises inside the
policy, ``--slow-on WORD`` sleeps ``--slow-s`` before answering, ``--wild-on WORD`` returns
actions far outside any joint limit, ``--bad-shape-on WORD`` returns a 1-D array; faults of the
wire: ``--garbage-on`` (bytes that are not msgpack), ``--truncate-on`` (half a reply),
``--short-buffer-on`` (an array whose data is shorter than its shape), ``--close-mid-frame-on``
(the connection dies halfway through a frame).

``--policy transfer-cube --seed N`` serves the scripted ALOHA sim demonstration instead of the
dummy policy (robomemory/executors/sim_aloha.py; needs the ``sim`` extra).
"""

from __future__ import annotations

import argparse
import asyncio
import http
import logging
import sys
import time
import traceback

import msgpack
import numpy as np
from websockets.asyncio.server import Request, Response, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode

from robomemory.executors.layouts import PolicyLayout, load_layout
from robomemory.executors.pi0 import packb, unpackb

log = logging.getLogger(__name__)


class DummyPolicy:
    """Returns ``horizon`` × ``dim`` actions: state + 0.001·(k+1) for k = 0..horizon-1."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.layout: PolicyLayout | None = load_layout(args.layout) if args.layout else None
        self.dim = self.layout.action_dim if self.layout else args.dim
        self.script = None
        if args.policy == "transfer-cube":  # needs the sim extra
            from robomemory.executors.sim_aloha import ScriptedTransferCube  # sim extra (MuJoCo)

            self.script = ScriptedTransferCube(args.seed, args.horizon)

    def state(self, obs: dict) -> np.ndarray:
        if self.layout is None:
            return np.asarray(obs.get("state", np.zeros(self.dim)), dtype=np.float32)
        parts = [np.asarray(obs[f.key], dtype=np.float32).reshape(-1) for f in self.layout.state]
        return np.concatenate(parts)

    def infer(self, obs: dict) -> dict:
        if self.layout is not None:
            problems = self.layout.problems(obs)
            if problems:  # openpi's input transforms fail with a KeyError or a shape error
                raise KeyError(f"request does not match layout {self.layout.name}: {problems}")
        prompt = str(obs.get("prompt", ""))
        a = self.args
        if a.fail_on and a.fail_on in prompt:
            raise RuntimeError(f"dummy policy failure for prompt {prompt!r}")
        if a.slow_on and a.slow_on in prompt:
            time.sleep(a.slow_s)
        dim = self.dim
        if self.script is not None:
            return {"actions": self.script.chunk(self.state(obs))}
        if a.bad_shape_on and a.bad_shape_on in prompt:
            return {"actions": np.zeros(dim, dtype=np.float32)}
        state = np.zeros(dim, dtype=np.float32)
        given = self.state(obs)[:dim]
        state[: given.shape[0]] = given
        steps = np.arange(1, a.horizon + 1, dtype=np.float32)[:, None] * 0.001
        actions = state[None, :] + steps
        if a.wild_on and a.wild_on in prompt:
            actions = np.where(np.arange(dim) % 2 == 0, 10.0, -10.0)[None, :].repeat(
                a.horizon, axis=0
            )
        return {"actions": actions.astype(np.float32)}


def wire_fault(args: argparse.Namespace, prompt: str) -> str | None:
    """Which wire fault the prompt asks for (None: answer normally)."""
    for kind in ("garbage", "truncate", "short_buffer", "close_mid_frame"):
        word = getattr(args, f"{kind}_on")
        if word and word in prompt:
            return kind
    return None


async def send_faulty(ws: ServerConnection, kind: str, reply: bytes) -> bool:
    """Send a broken reply; return False when the connection is gone afterwards."""
    if kind == "garbage":
        await ws.send(b"\xc1\xc1 not msgpack \xff")
    elif kind == "truncate":
        await ws.send(reply[: len(reply) // 2])
    elif kind == "short_buffer":
        bad = {b"__ndarray__": True, b"data": b"\x00" * 8, b"dtype": "<f4", b"shape": (50, 14)}
        await ws.send(msgpack.packb({"actions": bad}))
    else:  # a binary frame header announcing 4096 bytes, 100 of them, then the socket dies
        ws.transport.write(bytes([0x82, 126]) + (4096).to_bytes(2, "big") + b"\x00" * 100)
        ws.transport.abort()
        return False
    return True


def _health(connection: ServerConnection, request: Request) -> Response | None:
    if request.path == "/healthz":
        return connection.respond(http.HTTPStatus.OK, "OK\n")
    return None


async def _handler(ws: ServerConnection, policy: DummyPolicy, metadata: dict) -> None:
    args = policy.args
    await ws.send(packb(metadata))
    prev_total: float | None = None
    while True:
        try:
            started = time.monotonic()
            obs = unpackb(await ws.recv())
            t0 = time.monotonic()
            if args.block:  # like openpi: inference inside the event loop
                out = policy.infer(obs)
            else:
                out = await asyncio.to_thread(policy.infer, obs)
            out["server_timing"] = {"infer_ms": (time.monotonic() - t0) * 1000}
            if prev_total is not None:
                out["server_timing"]["prev_total_ms"] = prev_total * 1000
            reply = packb(out)
            fault = wire_fault(args, str(obs.get("prompt", "")))
            if fault is not None and not await send_faulty(ws, fault, reply):
                return
            if fault is None:
                await ws.send(reply)
            prev_total = time.monotonic() - started
        except ConnectionClosed:
            return
        except Exception as exc:  # noqa: BLE001 - openpi: any failure -> traceback frame + 1011
            log.error("policy server error: %s: %s", type(exc).__name__, exc)
            await ws.send(traceback.format_exc())
            await ws.close(CloseCode.INTERNAL_ERROR, "Internal server error. Traceback included.")
            return


async def serve_forever(args: argparse.Namespace) -> None:
    policy = DummyPolicy(args)
    metadata: dict = {"policy": "dummy", "action_horizon": args.horizon, "action_dim": policy.dim}
    if policy.layout is not None and args.announce_layout:
        metadata["layout"] = policy.layout.name
    if args.reset_pose:
        metadata["reset_pose"] = [float(v) for v in args.reset_pose.split(",")]

    async def handler(ws: ServerConnection) -> None:
        await _handler(ws, policy, metadata)

    async with serve(
        handler, args.host, args.port, compression=None, max_size=None, process_request=_health
    ) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        print(f"PORT {port}", flush=True)
        await server.serve_forever()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000, help="0 picks a free port (printed)")
    p.add_argument("--horizon", type=int, default=50)
    p.add_argument("--dim", type=int, default=14)
    p.add_argument("--fail-on", default="")
    p.add_argument("--slow-on", default="")
    p.add_argument("--slow-s", type=float, default=2.0)
    p.add_argument("--wild-on", default="")
    p.add_argument("--bad-shape-on", default="")
    p.add_argument("--garbage-on", default="")
    p.add_argument("--truncate-on", default="")
    p.add_argument("--short-buffer-on", default="")
    p.add_argument("--close-mid-frame-on", default="")
    p.add_argument("--layout", default="", help="strict: aloha, droid, libero or a layout file")
    p.add_argument("--announce-layout", action="store_true", help="name the layout in metadata")
    p.add_argument("--block", action="store_true", help="infer inside the event loop (openpi)")
    p.add_argument("--reset-pose", default="", help="comma list sent as metadata reset_pose")
    p.add_argument(
        "--policy",
        choices=["dummy", "transfer-cube"],
        default="dummy",
        help="transfer-cube: the scripted ALOHA sim demonstration (sim extra)",
    )
    p.add_argument("--seed", type=int, default=0, help="transfer-cube: the episode's cube pose")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        asyncio.run(serve_forever(parse_args(argv)))
    except KeyboardInterrupt:
        return 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
