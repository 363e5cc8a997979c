"""A policy server speaking openpi's websocket protocol with a DUMMY policy (not π0).

Same wire behaviour as openpi's ``WebsocketPolicyServer``: metadata first, msgpack frames with
openpi's NumPy convention, ``server_timing`` in every answer, a traceback as a text frame plus
close code 1011 on a policy error, and ``GET /healthz``. It serves for benchmarks of the client,
dry runs of the robot stack without a GPU, and tests. The dummy policy returns an
(horizon, 14) chunk that moves each joint slowly away from the current state.

    python -m robomemory.executors.dummy_policy_server --port 8000

Test knobs (matched against the observation's prompt): ``--fail-on WORD`` raises inside the
policy, ``--slow-on WORD`` sleeps ``--slow-s`` before answering, ``--wild-on WORD`` returns
actions far outside any joint limit, ``--bad-shape-on WORD`` returns a 1-D array.
"""

from __future__ import annotations

import argparse
import asyncio
import http
import logging
import sys
import time
import traceback

import numpy as np
from websockets.asyncio.server import Request, Response, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode

from robomemory.executors.pi0 import packb, unpackb

log = logging.getLogger(__name__)


class DummyPolicy:
    """Returns ``horizon`` × ``dim`` actions: state + 0.001·(k+1) for k = 0..horizon-1."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args

    def infer(self, obs: dict) -> dict:
        prompt = str(obs.get("prompt", ""))
        a = self.args
        if a.fail_on and a.fail_on in prompt:
            raise RuntimeError(f"dummy policy failure for prompt {prompt!r}")
        if a.slow_on and a.slow_on in prompt:
            time.sleep(a.slow_s)
        if a.bad_shape_on and a.bad_shape_on in prompt:
            return {"actions": np.zeros(a.dim, dtype=np.float32)}
        state = np.asarray(obs.get("state", np.zeros(a.dim)), dtype=np.float32)[: a.dim]
        steps = np.arange(1, a.horizon + 1, dtype=np.float32)[:, None] * 0.001
        actions = state[None, :] + steps
        if a.wild_on and a.wild_on in prompt:
            actions = np.where(np.arange(a.dim) % 2 == 0, 10.0, -10.0)[None, :].repeat(
                a.horizon, axis=0
            )
        return {"actions": actions.astype(np.float32)}


def _health(connection: ServerConnection, request: Request) -> Response | None:
    if request.path == "/healthz":
        return connection.respond(http.HTTPStatus.OK, "OK\n")
    return None


async def _handler(ws: ServerConnection, policy: DummyPolicy, metadata: dict) -> None:
    await ws.send(packb(metadata))
    prev_total: float | None = None
    while True:
        try:
            started = time.monotonic()
            obs = unpackb(await ws.recv())
            t0 = time.monotonic()
            out = await asyncio.to_thread(policy.infer, obs)
            out["server_timing"] = {"infer_ms": (time.monotonic() - t0) * 1000}
            if prev_total is not None:
                out["server_timing"]["prev_total_ms"] = prev_total * 1000
            await ws.send(packb(out))
            prev_total = time.monotonic() - started
        except ConnectionClosed:
            return
        except (RuntimeError, ValueError, TypeError, KeyError) as exc:
            log.error("policy error: %s", exc)
            await ws.send(traceback.format_exc())
            await ws.close(CloseCode.INTERNAL_ERROR, "Internal server error. Traceback included.")
            return


async def serve_forever(args: argparse.Namespace) -> None:
    policy = DummyPolicy(args)
    metadata = {"policy": "dummy", "action_horizon": args.horizon, "action_dim": args.dim}

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
