"""Start the local server processes the robot tests talk to (127.0.0.1, free ports)."""

from __future__ import annotations

import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).parent


@contextmanager
def server_process(argv: list[str], startup_s: float = 20.0):
    """Run ``python argv...``; wait for its "PORT n" line; yield (process, port)."""
    proc = subprocess.Popen(
        [sys.executable, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        if not line.startswith("PORT "):
            proc.kill()
            raise RuntimeError(f"server did not start: {line!r} {proc.stderr.read()[-2000:]}")
        yield proc, int(line.split()[1])
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


def policy_server(*extra: str):
    """The openpi-protocol dummy policy server, on a free port."""
    return server_process(["-m", "robomemory.testing.policy_server", "--port", "0", *extra])


def rosbridge_server(log_path: Path, *extra: str):
    """The test rosbridge server with its fake Nav2 / move_base, on a free port."""
    return server_process([str(HERE / "rosbridge_server.py"), "--log", str(log_path), *extra])
