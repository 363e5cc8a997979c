"""The kill -9 sweep over a lifelong task pair (see reliability.sweep): at every chosen write
point a worker process is SIGKILLed, a new one resumes, and every store must equal the one of
an uninterrupted run — 0 lost, 0 duplicated. FAKE scripted model; real TextWorld, stores and
checkpointer."""

from __future__ import annotations

import pytest

from reliability.sweep import sweep

pytestmark = [pytest.mark.reliability, pytest.mark.timeout(5400)]


def test_kill_9_anywhere_loses_and_duplicates_nothing(tmp_path):
    results = sweep(tmp_path, n=20)
    assert len(results) >= 20
    assert any(r.write.startswith("MemoryHistory.") for r in results)  # inside consolidation
    bad = [r.line() for r in results if not r.ok]
    assert not bad, f"{len(bad)}/{len(results)} kill points lost or duplicated:\n" + "\n".join(bad)
