"""A fleet's checkpoints in PostgreSQL: LangGraph's PostgresSaver on a ``pg_connect``
connection (its connect, statement and lock timeouts), every statement answered within
``ANSWER_TIMEOUT_S`` or cut off (a frozen server), every lost server one MemoryServerError
line; the run stops and resumes later from its last stored checkpoint."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.rows import dict_row

from robomemory.memory.stores.pg_connect import answered, check_url, connect

ROLE = "checkpoint server"
# the longest wait for the server's answers (statements time out at 30 s server-side; past
# this the server process answers nothing at all, as when frozen)
ANSWER_TIMEOUT_S = 60.0
# The advisory lock key that serializes checkpoint-table setup across a fleet ("rbmm").
SETUP_LOCK = 0x72626D6D


class GuardedPostgresSaver(PostgresSaver):
    """PostgresSaver whose statements end: within ``ANSWER_TIMEOUT_S``, or one
    MemoryServerError line naming the server (no password)."""

    def __init__(self, conn: psycopg.Connection, url: str):
        super().__init__(conn)
        self.url = url

    @contextmanager
    def _cursor(self, *, pipeline: bool = False) -> Iterator[Any]:
        with answered(self.conn, self.url, ROLE, ANSWER_TIMEOUT_S):
            with super()._cursor(pipeline=pipeline) as cur:
                yield cur


def postgres_checkpointer(url: str) -> GuardedPostgresSaver:
    """The saver on ``url`` (its tables created if needed); a bad URL is a ValueError, a
    server that cannot be had a MemoryServerError, each one line."""
    check_url(url, "checkpoint URL")
    conn = connect(url, ROLE, prepare_threshold=0, row_factory=dict_row)
    saver = GuardedPostgresSaver(conn, url)
    try:
        setup(saver)
    except BaseException:
        conn.close()
        raise
    return saver


def setup(saver: GuardedPostgresSaver) -> None:
    """Create the tables, one robot at a time.

    setup() records its migrations unguarded: robots starting at once on a fresh database
    deadlock or collide on the migrations table. The lock is polled, not waited on: a session
    waiting in pg_advisory_lock holds a snapshot, and the setup's CREATE INDEX CONCURRENTLY
    waits for it, a deadlock."""
    with answered(saver.conn, saver.url, ROLE, ANSWER_TIMEOUT_S):
        while not _try_lock(saver.conn):
            time.sleep(0.05)
    try:
        saver.setup()
    finally:
        with answered(saver.conn, saver.url, ROLE, ANSWER_TIMEOUT_S):
            saver.conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))


def _try_lock(conn: psycopg.Connection) -> bool:
    """Take the setup lock if free (a statement that ends at once, holding no snapshot)."""
    row = conn.execute("SELECT pg_try_advisory_lock(%s) AS held", (SETUP_LOCK,)).fetchone()
    return bool(row["held"])
