"""`bench memory-scale`, KG part: real SQLite stores filled to each size, steps applied; the
figures are printed, not asserted (no timed tests) — only their presence and the sizes."""

from __future__ import annotations

import json

from robomemory.cli import main as cli_main
from robomemory.eval.bench.memory_scale import kg_scale


def test_kg_scale_fills_each_size_and_reports_per_step_figures(tmp_path):
    rows = kg_scale((20, 60), steps=5, data_dir=tmp_path)["kg"]
    assert [r["size"] for r in rows] == [20, 60]
    for r in rows:
        assert r["size"] <= r["edges"] <= r["size"] + 1  # one new thing at step 5
        assert r["steps"] == 5 and r["bytes_written_per_step"] > 0 and r["file_bytes"] > 0
        assert r["apply_ms_median"] > 0 and r["select_ms_median"] > 0
    assert (tmp_path / "kg60" / "spatial" / "spatial_scale60.sqlite3").exists()


def test_memory_scale_command(capsys):
    argv = ["bench", "memory-scale", "--kg-sizes", "20", "--kg-steps", "2"]
    assert cli_main([*argv, "--memories", "50", "--lt-steps", "2", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    (row,) = figures["kg"]
    assert row["size"] == 20 and row["steps"] == 2
    (lt,) = figures["longterm"]["sizes"]  # both parts in one command
    assert lt["memories_per_kind"] == 50 and lt["retrieve_cpu_ms_per_branch"] > 0


def test_memory_scale_rejects_bad_sizes(capsys):
    assert cli_main(["bench", "memory-scale", "--kg-sizes", "20,lots"]) == 2
    assert "--kg-sizes: expected integers" in capsys.readouterr().err
