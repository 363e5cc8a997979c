"""The kill -9 sweep over a lifelong task pair (see reliability.sweep): at every chosen write
point a worker process is SIGKILLed, a new one resumes, and every store must equal the one of
an uninterrupted run — 0 lost, 0 duplicated, Q values exact. Once with the robot's own stores,
once with its long-term memory in the fleet's PostgreSQL (pgvector). FAKE scripted model; real
TextWorld, stores, checkpointer and server."""

from __future__ import annotations

import pytest
from pg_server import missing_reason, pgvector_bin, pgvector_unusable, postgres_server

from reliability.sweep import sweep

pytestmark = [pytest.mark.reliability, pytest.mark.timeout(5400)]


def check(results) -> None:
    assert any(r.write.startswith("MemoryHistory.") for r in results)  # inside consolidation
    bad = [r.line() for r in results if not r.ok]
    assert not bad, f"{len(bad)}/{len(results)} kill points lost or duplicated:\n" + "\n".join(bad)


def test_kill_9_anywhere_loses_and_duplicates_nothing(tmp_path):
    results = sweep(tmp_path, n=20)
    assert len(results) >= 20
    check(results)


def test_kill_9_with_the_fleet_memory_on_postgres_loses_nothing(tmp_path):
    if missing_reason(pgvector_bin()):
        why = missing_reason(pgvector_bin())
        pytest.skip(f"PostgreSQL with pgvector (pip install 'robomemory[postgres]'): {why}")
    with postgres_server(pgvector_bin()) as url:
        if why := pgvector_unusable(url):
            pytest.skip(why)
        results = sweep(tmp_path, n=12, memory_postgres=url)
    assert any(r.write.startswith("PgItemStore.") for r in results)  # the server's writes
    check(results)
