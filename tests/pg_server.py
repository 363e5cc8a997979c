"""A real PostgreSQL server for tests: initdb + pg_ctl into a temporary folder, on a free
port of 127.0.0.1, stopped and removed afterwards. As root it runs as the ``postgres`` user
(initdb refuses root), else as the current user."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PG_BIN = Path(os.environ.get("ROBOMEMORY_PG_BIN", "/usr/lib/postgresql/15/bin"))


def missing_reason() -> str | None:
    """Why a server cannot be started here, or None."""
    if not (PG_BIN / "initdb").exists() or not (PG_BIN / "pg_ctl").exists():
        return f"PostgreSQL binaries not found in {PG_BIN} (apt-get install postgresql)"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser to drop to the postgres user"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_server_user(folder: Path) -> list[str]:
    if os.geteuid() != 0:
        return []
    try:
        user = pwd.getpwnam("postgres")
    except KeyError:
        user = pwd.getpwnam("nobody")
    os.chown(folder, user.pw_uid, user.pw_gid)
    return ["runuser", "-u", user.pw_name, "--"]


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start a server; yield its URL (database ``postgres``, user ``robomemory``, trust)."""
    folder = Path(tempfile.mkdtemp(prefix="robomemory-pg-"))
    folder.chmod(0o755)
    prefix = _as_server_user(folder)
    data, port = folder / "data", _free_port()

    def pg(*args: str) -> None:
        subprocess.run(prefix + list(args), check=True, capture_output=True, timeout=120)

    try:
        pg(
            str(PG_BIN / "initdb"),
            "-D",
            str(data),
            "-U",
            "robomemory",
            "--auth=trust",
            "-E",
            "UTF8",
        )
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1"
        pg(
            str(PG_BIN / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-l",
            str(folder / "log"),
            "-w",
            "start",
        )
        try:
            yield f"postgresql://robomemory@127.0.0.1:{port}/postgres"
        finally:
            pg(str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
