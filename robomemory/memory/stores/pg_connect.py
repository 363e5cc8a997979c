"""Connections to a fleet's PostgreSQL: the URL checked, timeouts set, failures one line.

Connecting times out after 5 s, a statement after 30 s, a lock wait after 10 s, a transaction
left idle after 60 s; a URL's own settings win (``?connect_timeout=2``,
``options=-c statement_timeout=5s``). A frozen server process (its host still acknowledges TCP,
it enforces no timeout) is cut off by the client (``Watchdog``, ``answered``). Errors name
``host:port/database``, never a password (``robomemory.errors.redact``).
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

from robomemory.errors import redact
from robomemory.memory.stores.vector_store import MemoryServerError

SCHEMES = ("postgresql://", "postgres://")
SSLMODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
CONNECT_TIMEOUT_S = 5
SERVER_TIMEOUTS = (
    "-c statement_timeout=30s -c lock_timeout=10s -c idle_in_transaction_session_timeout=60s"
)


def check_url(url: str, what: str = "long-term memory URL") -> str:
    """``url`` if it is a ``postgresql://`` URL psycopg can parse, with a port, sslmode and
    parameters it knows, else a one-line ValueError (``what`` names the URL; no password)."""
    if not url.startswith(SCHEMES):
        scheme = url.split("://")[0][:20] if "://" in url else "no scheme"
        raise ValueError(f"{what} must start with postgresql://, not {redact(scheme)!r}")
    try:
        params = conninfo_to_dict(url)
        psycopg.conninfo.make_conninfo(**params)  # libpq's own check: sslmode, keywords
    except psycopg.ProgrammingError as exc:
        raise ValueError(f"{what} is not valid: {one_line(exc, url)}") from None
    port = str(params.get("port", "5432"))
    if not all(p.isdigit() and 0 < int(p) < 65536 for p in port.split(",")):
        raise ValueError(f"{what} is not valid: port {redact(port, url)[:20]!r} is no TCP port")
    sslmode = str(params.get("sslmode", "prefer"))
    if sslmode not in SSLMODES:
        known = ", ".join(SSLMODES)
        raise ValueError(f"{what} is not valid: sslmode {redact(sslmode, url)[:20]!r} ({known})")
    return url


def server_name(url: str) -> str:
    """host:port/database of ``url`` (never its password)."""
    p = conninfo_to_dict(url)
    return f"{p.get('host', 'localhost')}:{p.get('port', 5432)}/{p.get('dbname', '')}"


def connect(url: str, role: str = "long-term memory server", **kwargs: Any) -> psycopg.Connection:
    """An autocommit connection with the timeouts above (the URL's own settings win); ``role``
    names the server in errors, ``kwargs`` go to psycopg."""
    params: dict[str, Any] = dict(conninfo_to_dict(check_url(url)))
    params.setdefault("connect_timeout", str(CONNECT_TIMEOUT_S))
    params.setdefault("keepalives_idle", "10")
    params.setdefault("tcp_user_timeout", "30000")  # ms: a vanished host is an error
    params["options"] = f"{SERVER_TIMEOUTS} {params.get('options', '')}".strip()
    try:
        return psycopg.connect(**params, **kwargs, autocommit=True)
    except psycopg.OperationalError as exc:
        raise MemoryServerError(
            f"cannot connect to {role} {server_name(url)}: {one_line(exc, url)}"
        ) from None


def one_line(exc: BaseException, url: str | None = None) -> str:
    """``exc`` as one short line, ``url``'s password and any other hidden."""
    return redact(" ".join(str(exc).split()), url)[:240]


class Watchdog:
    """Cuts a connection's socket when its session runs past ``seconds``: a frozen server
    process (SIGSTOP) on a live host still acknowledges TCP and never enforces its statement
    timeout, so the client's wait is ended here (psycopg then raises OperationalError)."""

    def __init__(self, conn: psycopg.Connection, seconds: float):
        self.fired = False
        self._fd = conn.fileno()
        self._timer = threading.Timer(seconds, self._cut)
        self._timer.daemon = True
        self._timer.start()

    def _cut(self) -> None:
        self.fired = True
        try:
            cut = socket.socket(fileno=os.dup(self._fd))
        except OSError:  # closed meanwhile: nothing to cut
            return
        with cut:
            cut.shutdown(socket.SHUT_RDWR)

    def cancel(self) -> None:
        self._timer.cancel()


@contextmanager
def answered(conn: psycopg.Connection, url: str, role: str, seconds: float) -> Iterator[None]:
    """Statements on ``conn`` in this block end within ``seconds``; a server gone, stopped or
    frozen is one MemoryServerError line naming ``role`` at ``host:port/db``."""
    watchdog = None
    try:
        watchdog = Watchdog(conn, seconds)  # a connection already lost raises here
        yield
    except psycopg.OperationalError as exc:
        why = one_line(exc, url)
        if watchdog is not None and watchdog.fired:
            why = f"no answer in {seconds:g} s (a frozen server?)"
        raise MemoryServerError(f"{role} {server_name(url)}: {why}") from None
    finally:
        if watchdog is not None:
            watchdog.cancel()
