"""The quickstart notebook executes top to bottom (fake model, real game and stores)."""

from __future__ import annotations

from pathlib import Path

import pytest

from robomemory.eval.committed import newest_runs

nbformat = pytest.importorskip("nbformat", reason="notebook tests need the dev extra")
nbclient = pytest.importorskip("nbclient", reason="notebook tests need the dev extra")

ROOT = Path(__file__).resolve().parents[1]


def test_quickstart_notebook_runs(tmp_path):
    nb = nbformat.read(ROOT / "notebooks" / "quickstart.ipynb", as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = "".join(
        o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
    )
    assert "success=True" in outputs and "end=won" in outputs, outputs
    assert "fallbacks: 0\n" in outputs, outputs  # the scripted answers fit today's schemas
    assert outputs.count("look()") == 0 and "eat(meal)" in outputs
    assert "temporal memory:" in outputs and "milk in fridge" in outputs


def test_results_notebook_plots_the_newest_committed_suite(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib", reason="the results notebook needs the viz extra")
    nb = nbformat.read(ROOT / "notebooks" / "results_per_attempt.ipynb", as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    monkeypatch.setenv("ROBOMEMORY_REPO", str(ROOT))
    monkeypatch.delenv("ROBOMEMORY_RESULTS", raising=False)
    out = tmp_path / "out"  # the notebook's output folder, not the one it runs in
    monkeypatch.setenv("ROBOMEMORY_NOTEBOOK_OUT", str(out))
    (tmp_path / "run").mkdir()
    client = nbclient.NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path / "run")}},
    )
    client.execute()
    outputs = "".join(
        o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
    )
    folder = outputs.split("results: ", 1)[1].split(" ", 1)[0]
    results = ROOT / "docs" / "results"
    newest = {f.relative_to(results).as_posix() for f in newest_runs(ROOT).values()}
    assert folder in newest  # a suite's newest run, as named under docs/results
    agents = {p.name.split("__")[0] for p in (results / folder).glob("episodes/*")}
    assert {"robomemory", "react"} <= agents
    assert "robomemory " in outputs and "react " in outputs and "wrote attempts.png" in outputs
    assert (out / "attempts.png").stat().st_size > 10_000
    assert list((tmp_path / "run").iterdir()) == []  # nothing next to the notebook
    assert not (ROOT / "notebooks" / "attempts.png").exists()
