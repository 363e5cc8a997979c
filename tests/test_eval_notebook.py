"""notebooks/benchmark_report.ipynb runs on a report folder and shows its tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from robomemory.eval.committed import newest_runs
from robomemory.eval.metrics import EpisodeRecord
from robomemory.eval.report import write_json_atomic

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "benchmark_report.ipynb"


def test_notebook_shows_report(tmp_path, monkeypatch):
    for attempt, ok in ((1, False), (2, True)):
        r = EpisodeRecord(
            suite="t",
            task_id="g1",
            agent="react",
            attempt=attempt,
            success=ok,
            gc=1.0 if ok else 0.5,
            steps=3,
        )
        write_json_atomic(tmp_path / "episodes" / f"{r.key}.json", r.model_dump(mode="json"))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    monkeypatch.setenv("ROBOMEMORY_REPORT", str(tmp_path))
    resources = {"metadata": {"path": str(tmp_path)}}
    nbclient.NotebookClient(nb, timeout=120, resources=resources).execute()
    text = "\n".join(
        str(o.get("text", "")) + str(o.get("data", {}).get("text/markdown", ""))
        for c in nb.cells
        for o in c.get("outputs", [])
    )
    assert "2 episodes" in text and "Lifelong learning" in text
    assert (tmp_path / "summary.md").exists()


def test_notebook_out_of_the_box_reads_the_newest_committed_runs(tmp_path, monkeypatch):
    """No folder given: the newest committed run of each suite (RESULTS.md's table)."""
    monkeypatch.delenv("ROBOMEMORY_REPORT", raising=False)
    out = tmp_path / "out"
    monkeypatch.setenv("ROBOMEMORY_NOTEBOOK_OUT", str(out))
    (tmp_path / "run").mkdir()
    nb = nbformat.read(NOTEBOOK, as_version=4)
    resources = {"metadata": {"path": str(tmp_path / "run")}}
    nbclient.NotebookClient(nb, timeout=120, resources=resources).execute()
    text = "\n".join(
        str(o.get("text", "")) + str(o.get("data", {}).get("text/markdown", ""))
        for c in nb.cells
        for o in c.get("outputs", [])
    )
    runs = newest_runs()
    assert {"tiny", "tw-cooking-medium", "tw-cooking-hard"} <= set(runs)
    for suite, folder in runs.items():
        assert f"{suite}: " in text and f"in {folder.name} (its newest committed run)" in text
        assert (out / "benchmark_report" / folder.name / "summary.md").exists()
    assert "Lifelong learning" in text
    assert list((tmp_path / "run").iterdir()) == []  # nothing written next to the notebook
    assert "error" not in {o.get("output_type") for c in nb.cells for o in c.get("outputs", [])}
