"""Connections to a fleet's PostgreSQL: the URL checked, timeouts set, failures one line.

Connecting times out after 5 s, a statement after 30 s, a lock wait after 10 s, a transaction
left idle after 60 s; a URL's own settings win (``?connect_timeout=2``,
``options=-c statement_timeout=5s``). Errors name ``host:port/database``, never a password.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

from robomemory.memory.stores.vector_store import MemoryServerError

SCHEMES = ("postgresql://", "postgres://")
CONNECT_TIMEOUT_S = 5
SERVER_TIMEOUTS = (
    "-c statement_timeout=30s -c lock_timeout=10s -c idle_in_transaction_session_timeout=60s"
)


def check_url(url: str) -> str:
    """``url`` if it is a ``postgresql://`` URL psycopg can parse, else a one-line ValueError."""
    if not url.startswith(SCHEMES):
        scheme = url.split("://")[0][:20] if "://" in url else "no scheme"
        raise ValueError(f"long-term memory URL must start with postgresql://, not {scheme!r}")
    try:
        conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise ValueError(f"long-term memory URL is not valid: {one_line(exc)}") from None
    return url


def server_name(url: str) -> str:
    """host:port/database of ``url`` (never its password)."""
    p = conninfo_to_dict(url)
    return f"{p.get('host', 'localhost')}:{p.get('port', 5432)}/{p.get('dbname', '')}"


def connect(url: str) -> psycopg.Connection:
    """An autocommit connection with the timeouts above (the URL's own settings win)."""
    params: dict[str, Any] = dict(conninfo_to_dict(check_url(url)))
    params.setdefault("connect_timeout", str(CONNECT_TIMEOUT_S))
    params.setdefault("keepalives_idle", "10")
    params.setdefault("tcp_user_timeout", "30000")  # ms: a vanished host is an error
    params["options"] = f"{SERVER_TIMEOUTS} {params.get('options', '')}".strip()
    try:
        return psycopg.connect(**params, autocommit=True)
    except psycopg.OperationalError as exc:
        raise MemoryServerError(
            f"cannot connect to long-term memory server {server_name(url)}: {one_line(exc)}"
        ) from None


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:240]
