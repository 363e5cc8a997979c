"""Matplotlib figures of a benchmark summary (see report.py); each returns a Figure or None."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _label(row: dict) -> str:
    ab = row.get("ablation", "none")
    return row["agent"] if ab in ("none", "", None) else f"{row['agent']} -{ab}"


def sr_gc(plt: Any, summary: dict):
    """SR and GC per agent and ablation (all attempts)."""
    rows = summary.get("by_agent") or []
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(max(4, 1.2 * len(rows)), 3.2))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r["sr"] for r in rows], 0.4, label="SR")
    ax.bar([x + 0.2 for x in xs], [r["gc"] for r in rows], 0.4, label="GC")
    ax.set_xticks(list(xs), [_label(r) for r in rows], rotation=30, ha="right")
    ax.set_ylim(0, 1)
    ax.set_title("Success rate and goal-condition rate")
    ax.legend()
    return fig


def attempts(plt: Any, summary: dict):
    """SR per attempt for each agent/ablation (paper Fig. 5: attempt 1 vs 2)."""
    rows = summary.get("lifelong") or []
    if not rows:
        return None
    labels = list(dict.fromkeys(_label(r) for r in rows))
    tries = sorted({r["attempt"] for r in rows})
    fig, ax = plt.subplots(figsize=(max(4, 1.2 * len(labels)), 3.2))
    width = 0.8 / len(tries)
    for i, attempt in enumerate(tries):
        vals = {_label(r): r["sr"] for r in rows if r["attempt"] == attempt}
        xs = [j - 0.4 + width * (i + 0.5) for j in range(len(labels))]
        ax.bar(xs, [vals.get(lb, 0.0) for lb in labels], width, label=f"attempt {attempt}")
    ax.set_xticks(list(range(len(labels))), labels, rotation=30, ha="right")
    ax.set_ylim(0, 1)
    ax.set_title("Lifelong: success rate per attempt (memory kept)")
    ax.legend()
    return fig


def latency(plt: Any, summary: dict):
    """Memory latency per step index: parallel vs sequential vs temporal only (paper Fig. 3)."""
    rows = summary.get("memory_latency_by_step") or []
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(5, 3.2))
    steps = [r["step"] for r in rows]
    for key, label in (
        ("parallel_s", "parallel (all 4)"),
        ("sequential_s", "sequential (sum)"),
        ("temporal_s", "temporal only"),
    ):
        ax.plot(steps, [r[key] for r in rows], marker="o", ms=3, label=label)
    ax.set_xlabel("step")
    ax.set_ylabel("seconds")
    ax.set_title("Memory update + retrieve latency")
    ax.legend()
    return fig


def kg_growth(plt: Any, summary: dict):
    """Spatial KG vertices/edges and edges touched per update (paper Fig. 7)."""
    rows = summary.get("kg_growth") or []
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(5, 3.2))
    xs = list(range(1, len(rows) + 1))
    ax.plot(xs, [r["vertices"] for r in rows], label="vertices")
    ax.plot(xs, [r["edges"] for r in rows], label="edges")
    ax.plot(xs, [r["edges_touched"] for r in rows], label="edges touched / update")
    ax.set_xlabel("update")
    ax.set_title("Spatial KG growth")
    ax.legend()
    return fig


def spatial_accuracy(plt: Any, summary: dict):
    """Precision / recall / F1 of KG object locations over steps."""
    acc = summary.get("spatial_accuracy") or {}
    rows = acc.get("by_step") or []
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(5, 3.2))
    steps = [r["step"] for r in rows]
    for key in ("precision", "recall", "f1"):
        ax.plot(steps, [r[key] for r in rows], marker="o", ms=3, label=key)
    ax.set_ylim(0, 1)
    ax.set_xlabel("step")
    ax.set_title("Spatial memory accuracy vs game facts")
    ax.legend()
    return fig


def memrl(plt: Any, summary: dict):
    """Cumulative success rate and forgetting rate over epochs (as in MemRL)."""
    rows = summary.get("memrl") or []
    if len({r["epoch"] for r in rows}) < 2:
        return None
    fig, ax = plt.subplots(figsize=(5, 3.2))
    for label in dict.fromkeys(_label(r) for r in rows):
        mine = [r for r in rows if _label(r) == label]
        ax.plot(
            [r["epoch"] for r in mine], [r["csr"] for r in mine], marker="o", label=f"{label} CSR"
        )
        ax.plot(
            [r["epoch"] for r in mine],
            [r["forgetting"] for r in mine],
            ls="--",
            label=f"{label} forgetting",
        )
    ax.set_xlabel("epoch (attempt)")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7)
    return fig


PLOTTERS: dict[str, Callable[[Any, dict], Any]] = {
    "sr_gc": sr_gc,
    "attempts": attempts,
    "latency": latency,
    "kg_growth": kg_growth,
    "spatial_accuracy": spatial_accuracy,
    "memrl": memrl,
}
