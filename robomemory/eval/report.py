"""Benchmark reports: per-episode JSON, a summary JSON, a Markdown table and PNG plots.

Layout of a report folder::

    OUT/episodes/<agent>__<ablation>__a<attempt>__<task>.json   one per episode (runner)
    OUT/sealed/<agent>__<ablation>__a<attempt>__<task>.json.gz  a test split's full records
    OUT/summary.json  OUT/summary.md  OUT/plots/*.png           written by write_report
    OUT/spatial_accuracy.json                                   (bench spatial-accuracy)

A test split's episodes (``Suite.split``) are sealed: ``episodes/`` holds each record without
its steps (``trajectory``, per-step ``events``), ``sealed/`` the whole record gzipped, so the
report shows SR, GC and steps per task and no action taken (rules come from dev traces only).

Plots need matplotlib (extra ``viz``); without it the tables are still written.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from robomemory.eval import metrics as m
from robomemory.eval.metrics import EpisodeRecord
from robomemory.eval.plots import PLOTTERS

log = logging.getLogger(__name__)

EPISODES_DIR = "episodes"
SEALED_DIR = "sealed"
PLOTS_DIR = "plots"


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON through a temporary file and an atomic rename (a crash leaves no half file)."""
    _write_atomic(path, json.dumps(data, indent=1, default=str).encode())


def write_episode(path: Path, record: EpisodeRecord, sealed: bool = False) -> EpisodeRecord:
    """Write an episode's record to ``path`` (``OUT/episodes/<key>.json``) and return what it
    holds. Sealed (a test split's): the whole record goes first to ``OUT/sealed/<key>.json.gz``
    and ``path`` gets it without its steps (a crash between the two leaves the episode to redo)."""
    if sealed:
        whole = json.dumps(record.model_dump(mode="json"), default=str).encode()
        _write_atomic(
            path.parent.parent / SEALED_DIR / f"{path.stem}.json.gz", gzip.compress(whole)
        )
        record = record.model_copy(update={"trajectory": [], "events": []})
    write_json_atomic(path, record.model_dump(mode="json"))
    return record


def refuse_prompt_log() -> None:
    """A test split runs without a prompt log (each prompt shows the steps before it): a
    ValueError of one line while ``$ROBOMEMORY_PROMPT_LOG`` is set."""
    if os.environ.get("ROBOMEMORY_PROMPT_LOG"):
        raise ValueError(
            "ROBOMEMORY_PROMPT_LOG is set: a test split's prompts would show its sealed steps; "
            "unset it"
        )


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def load_sealed(out_dir: str | Path) -> list[EpisodeRecord]:
    """The whole records a test split sealed (``OUT/sealed/``), in file-name order: for whoever
    opens the test traces once the rules are frozen."""
    folder = Path(out_dir) / SEALED_DIR
    return [
        EpisodeRecord.model_validate_json(gzip.decompress(p.read_bytes()))
        for p in sorted(folder.glob("*.json.gz"))
    ]


def load_records(out_dir: str | Path) -> list[EpisodeRecord]:
    """All episode records of a report folder, in file-name order."""
    folder = Path(out_dir) / EPISODES_DIR
    return [EpisodeRecord.model_validate_json(p.read_text()) for p in sorted(folder.glob("*.json"))]


def build_summary(records: Sequence[EpisodeRecord], extra: dict | None = None) -> dict:
    """Every aggregated figure of a run, as one JSON-able dict."""
    return {
        "table": m.summary_table(records),
        "by_agent": m.summary_table(records, ("agent", "ablation")),
        "by_task": m.summary_table(records, ("agent", "ablation", "attempt", "task_id")),
        "lifelong": m.lifelong(records),
        "memrl": m.memrl_curves(records),
        "node_seconds_per_step": m.node_seconds_by_agent(records),
        "node_split": m.node_split_by_agent(records),
        "step_budgets": m.step_budgets(records),
        "tales": m.tales_scores(records),
        "memory_latency": m.memory_latency(records),
        "memory_latency_by_step": m.memory_latency_by_step(records),
        "kg": m.kg_summary(records),
        "kg_growth": m.kg_growth(records),
        "actions": sorted({r.actions for r in records}),
        **(extra or {}),
    }


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3f}"
    return "–" if v is None else str(v)


def markdown_table(rows: Sequence[dict], columns: Sequence[str]) -> str:
    """A GitHub Markdown table of ``rows`` restricted to ``columns``."""
    if not rows:
        return "_no data_\n"
    head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n"
    body = "".join("| " + " | ".join(_fmt(r.get(c, "")) for c in columns) + " |\n" for r in rows)
    return head + body


def render_markdown(summary: dict, title: str = "Benchmark report") -> str:
    cols = [
        "agent",
        "ablation",
        "attempt",
        "episodes",
        "sr",
        "gc",
        "steps",
        "calls",
        "off_top",
        "prompt_tokens",
        "completion_tokens",
        "wall_s_per_step",
        "loops",
        "errors",
    ]
    sealed = summary.get("sealed_episodes")
    parts = [
        f"# {title}\n",
        f"\n_Test split: the steps of {sealed} episodes are sealed in sealed/ (not shown)._\n\n"
        if sealed
        else "",
        _actions_line(summary.get("actions") or []),
        "## Results per agent, ablation and attempt\n",
        markdown_table(summary["table"], cols),
        "\n## Results per task\n",
        markdown_table(
            summary.get("by_task", []),
            ["agent", "ablation", "attempt", "task_id", "sr", "gc", "steps", "errors"],
        ),
    ]
    parts += _tales_parts(summary.get("tales") or {})
    parts += [
        "\n## Lifelong learning (attempt N vs attempt 1, same tasks, memory kept)\n",
        markdown_table(
            summary["lifelong"], ["agent", "ablation", "attempt", "sr", "gc", "sr_gain", "gc_gain"]
        ),
    ]
    parts += [
        "\n## MemRL curves over epochs\n",
        markdown_table(summary["memrl"], ["agent", "ablation", "epoch", "sr", "csr", "forgetting"]),
    ]
    lat = summary["memory_latency"]
    parts += [
        "\n## Memory latency per step (s)\n",
        markdown_table([lat], ["steps", "parallel_s", "sequential_s", "temporal_s"]),
    ]
    split_cols = ["agent", "ablation", "node", "calls", "reused", "prompt_tokens", "cached_tokens"]
    parts += [
        "\n## Per step by node: model calls, answers reused without a call, tokens (cached = "
        "reused by the prompt cache), s\n",
        markdown_table(
            summary.get("node_split", []), [*split_cols, "completion_tokens", "s_per_step"]
        ),
        "\n## Step budgets (limit = at least twice the oracle's steps; TALES' protocol: exactly "
        "the suite's)\n",
        markdown_table(summary.get("step_budgets", []), ["task_id", "oracle_steps", "max_steps"]),
    ]
    parts += [
        "\n## Spatial KG\n",
        markdown_table(
            [summary["kg"]],
            ["updates", "final_vertices", "final_edges", "edges_touched", "ops_applied"],
        ),
    ]
    acc = summary.get("spatial_accuracy")
    if acc:
        parts += [
            "\n## Spatial accuracy (KG vs game facts)\n",
            markdown_table(acc.get("games", []), ["game", "steps", "precision", "recall", "f1"]),
        ]
    return "".join(parts)


def _actions_line(modes: Sequence[str]) -> str:
    """What the agents were given: the world's valid actions (listed) or a player's view."""
    said = {
        "listed": "listed (the world's valid actions are the candidates)",
        "free": "free (only what a player sees: texts, score, the game's end)",
    }
    return f"\nActions: {'; '.join(said.get(m, m) for m in modes)}.\n\n" if modes else ""


def _tales_parts(tales: dict) -> list[str]:
    """The TALES section of a report whose episodes ran TALES' protocol; none otherwise."""
    if not tales.get("table"):
        return []
    return [
        "\n## TALES (normalized score = mean over tasks of best score / max x 100; "
        "restarts after a loss)\n",
        markdown_table(
            tales["table"],
            ["agent", "ablation", "attempt", "episodes", "sr", "gc", "tales_score", "restarts"],
        ),
        "\n### TALES per task\n",
        markdown_table(
            tales.get("tasks", []),
            ["agent", "ablation", "attempt", "task_id", "tales_score", "restarts", "steps"],
        ),
    ]


def write_report(
    out_dir: str | Path,
    records: Sequence[EpisodeRecord] | None = None,
    title: str = "Benchmark report",
) -> dict[str, Path]:
    """Write summary.json, summary.md and plots for the records (default: those in out_dir)."""
    out = Path(out_dir)
    records = list(load_records(out) if records is None else records)
    extra = {}
    acc_path = out / "spatial_accuracy.json"
    if acc_path.exists():
        extra["spatial_accuracy"] = json.loads(acc_path.read_text())
    sealed = sorted((out / SEALED_DIR).glob("*.json.gz"))
    if sealed:
        extra["sealed_episodes"] = len(sealed)
    summary = build_summary(records, extra)
    files = {"summary.json": out / "summary.json", "summary.md": out / "summary.md"}
    write_json_atomic(files["summary.json"], summary)
    files["summary.md"].write_text(render_markdown(summary, title))
    files.update(write_plots(out / PLOTS_DIR, summary))
    return files


def write_plots(folder: Path, summary: dict) -> dict[str, Path]:
    """PNG plots of a summary; empty when matplotlib (extra ``viz``) is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log.warning("matplotlib not installed (extra 'viz'): no plots written")
        return {}
    folder.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for name, plotter in PLOTTERS.items():
        fig = plotter(plt, summary)
        if fig is None:
            continue
        path = folder / f"{name}.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        written[f"{name}.png"] = path
    return written
