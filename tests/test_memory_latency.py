"""memory-latency benchmark smoke test: figures for all three modes (no timing assertions).

Uses the FAKE OpenAI-compatible server on 127.0.0.1, the fake embedder, and real stores.
"""

from __future__ import annotations

from robomemory.eval.bench.memory_latency import MODES, run_benchmark, step_script, summarize


def test_benchmark_returns_figures_for_all_modes():
    results = run_benchmark(steps=3, latency=0.01, embedder="fake")
    assert set(results["modes"]) == set(MODES)
    for figures in results["modes"].values():
        assert {"mean", "median", "p95", "total", "model_calls"} <= set(figures)
        assert set(figures["branch_mean_s"]) <= {"temporal", "spatial", "semantic", "episodic"}
        assert figures["mean"] > 0 and figures["p95"] >= figures["median"] > 0
    # all modules call the model (spatial extractor + resolver); temporal alone does not
    # compress within 3 steps (N=4), so it makes no call at all
    assert results["modes"]["parallel"]["model_calls"] > 0
    assert (
        results["modes"]["parallel"]["model_calls"] == results["modes"]["sequential"]["model_calls"]
    )
    assert results["modes"]["temporal"]["model_calls"] == 0
    assert set(results["modes"]["temporal"]["branch_mean_s"]) == {"temporal"}
    assert len(results["modes"]["parallel"]["branch_mean_s"]) == 4


def test_summary_statistics_and_script():
    f = summarize([0.1] * 19 + [1.0])
    assert f["median"] == 0.1 and f["p95"] == 0.1 and round(f["total"], 6) == 2.9
    assert summarize([0.1] * 18 + [1.0, 2.0])["p95"] == 1.0
    summary, queries, relations = step_script(0)
    assert "apple" in summary and len(queries) == 4 and ("apple", "on", "counter") in relations
