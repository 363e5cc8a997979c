"""The long-term benchmarks run end to end on tiny sizes (figures come from the bench commands,
not from tests): memory-scale's long-term part and the Mem0 comparison (needs the mem0 extra)."""

from __future__ import annotations

import importlib.util

import pytest

from robomemory.eval.bench.memory_scale_longterm import format_longterm, longterm_scale


@pytest.mark.parametrize("backend", ["edge", "qdrant-local"])
def test_longterm_scale_reports_each_size(backend):
    out = longterm_scale((5, 40), steps=2, backend=backend)
    assert [r["memories_per_kind"] for r in out["sizes"]] == [5, 40]
    for row in out["sizes"]:
        assert row["retrieve_cpu_ms_per_branch"] > 0 and row["add_cpu_ms"] > 0
    assert "FAKE" in out["embedder"] and "40" in format_longterm(out)


def test_longterm_scale_rejects_bad_input():
    with pytest.raises(ValueError, match="unknown backend"):
        longterm_scale((5,), backend="faiss")
    with pytest.raises(ValueError, match="positive"):
        longterm_scale((0,))


@pytest.mark.skipif(importlib.util.find_spec("mem0") is None, reason="needs the mem0 extra")
def test_mem0_compare_runs_both_on_the_same_work():
    from robomemory.eval.bench.mem0_compare import compare, format_compare

    out = compare(adds=4, searches=3)
    for name in ("robomemory", "mem0"):
        assert out[name]["items"] == 4 and out[name]["hits_per_search"] > 0
    assert set(out["ratio_robomemory_over_mem0"]) == {"add", "search"}
    assert "ratio" in format_compare(out)
