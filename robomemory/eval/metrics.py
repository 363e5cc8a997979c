"""Benchmark metrics (paper section 4, MemRL's lifelong curves) computed from episode records.

An :class:`EpisodeRecord` is what the runner writes per episode (one JSON file each). Every
function here is a pure function of records, so metrics can be recomputed from a report folder.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

MEMORY_NODES = ("temporal", "spatial", "semantic", "episodic")
# Memory work done by a node beside perception, counted with its memory's branch.
MEMORY_WORK = {"temporal_compress": "temporal", "compress": "temporal"}  # (old traces: compress)


class NodeEvent(BaseModel):
    """One node invocation seen while streaming an episode."""

    node: str
    step: int
    wall_s: float = 0.0
    calls: int = 0


class EpisodeRecord(BaseModel):
    """Everything measured on one episode of one (agent, ablation, attempt, task)."""

    suite: str
    task_id: str
    agent: str
    ablation: str = "none"
    attempt: int = 1
    model: str = ""
    task: str = ""
    success: bool = False
    score: float | None = None
    max_score: float | None = None
    gc: float = 0.0
    steps: int = 0
    end_reason: str = ""
    wall_s: float = 0.0
    usage: dict[str, dict[str, float]] = Field(default_factory=dict)
    events: list[NodeEvent] = Field(default_factory=list)
    spatial_stats: list[dict] = Field(default_factory=list)
    trajectory: list[dict] = Field(default_factory=list)
    oracle_steps: int | None = Field(default=None, description="The world's oracle path length.")
    max_steps: int | None = Field(default=None, description="The step limit the episode had.")
    protocol: str = Field(
        default="episode",
        description="episode; tales: TALES' (eval/tales.py): score is the best over restarts, gc "
        "TALES' normalized score",
    )
    restarts: int = Field(default=0, description="Games restarted after a loss (tales).")
    actions: str = Field(
        default="listed",
        description="listed: the world's valid actions were the candidates; free: only what a "
        "player sees (executors/perceived.py)",
    )
    grounding: str = Field(
        default="rules",
        description="how the offered actions were ordered: rules (the word rules, records "
        "before the effects table became the only order) or table (grounding.table)",
    )
    error: str | None = None

    @property
    def key(self) -> str:
        """Stable file name of the record."""
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in self.task_id)
        return f"{self.agent}__{self.ablation}__a{self.attempt}__{safe}"

    @property
    def calls(self) -> int:
        return int(sum(u.get("calls", 0) for u in self.usage.values()))

    @property
    def prompt_tokens(self) -> int:
        return int(sum(u.get("prompt_tokens", 0) for u in self.usage.values()))

    @property
    def completion_tokens(self) -> int:
        return int(sum(u.get("completion_tokens", 0) for u in self.usage.values()))


def gc_of(score: float | None, max_score: float | None) -> float:
    """Goal-condition rate SCN/GCN, clipped to [0, 1] (ScienceWorld's -100 failure -> 0)."""
    if score is None or not max_score:
        return 0.0
    return max(0.0, min(1.0, score / max_score))


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return statistics.fmean(values) if values else 0.0


def success_rate(records: Sequence[EpisodeRecord]) -> float:
    """SR: fraction of episodes whose task succeeded (paper eq. 3)."""
    return _mean(1.0 if r.success else 0.0 for r in records)


def goal_condition_rate(records: Sequence[EpisodeRecord]) -> float:
    """GC: mean of SCN/GCN over episodes (paper eq. 4)."""
    return _mean(r.gc for r in records)


def group(
    records: Iterable[EpisodeRecord], keys: Sequence[str]
) -> dict[tuple, list[EpisodeRecord]]:
    """Records grouped by the given attribute names, in first-seen order."""
    out: dict[tuple, list[EpisodeRecord]] = {}
    for r in records:
        out.setdefault(tuple(getattr(r, k) for k in keys), []).append(r)
    return out


def two_step_cycles(actions: Sequence[str]) -> int:
    """The most times one pair of actions alternated in a row: A, B, A, B is 2 cycles (an
    action repeated at once is no two-step loop); 0 when no action came back after one other."""
    best = stretch = 0
    for i, action in enumerate(actions):
        alternates = i >= 2 and action == actions[i - 2] and action != actions[i - 1]
        stretch = (stretch + 1 if stretch else 3) if alternates else 0
        best = max(best, stretch // 2)
    return best


def loop_cycles(record: EpisodeRecord) -> int:
    """:func:`two_step_cycles` of the episode's actions."""
    return two_step_cycles([str(s.get("action", "")) for s in record.trajectory])


def off_top(records: Sequence[EpisodeRecord]) -> float | None:
    """Share of the steps whose action was not the first offered candidate (the grounding's
    top): what the model changed of the list's order. None when no step kept its list."""
    listed = [s for r in records for s in r.trajectory if s.get("candidates")]
    if not listed:
        return None
    return _mean(0.0 if s.get("action") == s["candidates"][0] else 1.0 for s in listed)


def summarize(records: Sequence[EpisodeRecord]) -> dict[str, float | None]:
    """Aggregate figures of a set of episodes (means are per episode unless named per step)."""
    steps = sum(r.steps for r in records)
    wall = sum(r.wall_s for r in records)
    return {
        "episodes": len(records),
        "sr": success_rate(records),
        "gc": goal_condition_rate(records),
        "steps": _mean(r.steps for r in records),
        "calls": _mean(r.calls for r in records),
        "off_top": off_top(records),
        "prompt_tokens": _mean(r.prompt_tokens for r in records),
        "completion_tokens": _mean(r.completion_tokens for r in records),
        "wall_s": _mean(r.wall_s for r in records),
        "wall_s_per_step": wall / steps if steps else 0.0,
        "loops": max((loop_cycles(r) for r in records), default=0),
        "errors": sum(1 for r in records if r.error),
    }


def summary_table(
    records: Sequence[EpisodeRecord], keys: Sequence[str] = ("agent", "ablation", "attempt")
) -> list[dict]:
    """One row per group with :func:`summarize` figures."""
    return [
        {**dict(zip(keys, k, strict=True)), **summarize(rs)}
        for k, rs in group(records, keys).items()
    ]


def node_seconds_per_step(records: Sequence[EpisodeRecord]) -> dict[str, float]:
    """Wall time per step spent in each node (summed over episodes, divided by steps)."""
    steps = sum(r.steps for r in records)
    totals: dict[str, float] = defaultdict(float)
    for r in records:
        for node, usage in r.usage.items():
            totals[node] += float(usage.get("wall_s", usage.get("seconds", 0.0)))
    return {node: t / steps if steps else 0.0 for node, t in sorted(totals.items())}


def node_split_by_agent(records: Sequence[EpisodeRecord]) -> list[dict]:
    """Per (agent, ablation) and node, per step: model calls, answers reused without a call,
    prompt tokens (and how many the server's prompt cache reused), completion tokens and
    seconds."""
    rows = []
    for (agent, ablation), rs in group(records, ("agent", "ablation")).items():
        steps = sum(r.steps for r in rs) or 1
        totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for r in rs:
            for node, usage in r.usage.items():
                for key in (
                    "calls",
                    "reused",
                    "prompt_tokens",
                    "cached_tokens",
                    "completion_tokens",
                ):
                    totals[node][key] += float(usage.get(key, 0) or 0)
                totals[node]["seconds"] += float(usage.get("wall_s", usage.get("seconds", 0)))
        for node, t in sorted(totals.items()):
            if not t["calls"] and t["seconds"] < 0.01 * steps:
                continue
            rows.append(
                {
                    "agent": agent,
                    "ablation": ablation,
                    "node": node,
                    **{
                        k: t[k] / steps
                        for k in ("calls", "reused", "prompt_tokens", "cached_tokens")
                    },
                    "completion_tokens": t["completion_tokens"] / steps,
                    "s_per_step": t["seconds"] / steps,
                }
            )
    return rows


def tales_scores(records: Sequence[EpisodeRecord]) -> dict[str, list[dict]]:
    """TALES' figures of the records its protocol ran: ``table``, per (agent, ablation,
    attempt), SR, GC and TALES' normalized score (mean over tasks of best / max x 100);
    ``tasks``, each task's normalized score and restarts. Empty lists when none ran so."""
    ran = [r for r in records if r.protocol == "tales"]
    table = [
        {
            **dict(zip(("agent", "ablation", "attempt"), k, strict=True)),
            "episodes": len(rs),
            "sr": success_rate(rs),
            "gc": goal_condition_rate(rs),
            "tales_score": 100 * goal_condition_rate(rs),
            "restarts": sum(r.restarts for r in rs),
        }
        for k, rs in group(ran, ("agent", "ablation", "attempt")).items()
    ]
    tasks = [
        {
            "agent": r.agent,
            "ablation": r.ablation,
            "attempt": r.attempt,
            "task_id": r.task_id,
            "tales_score": 100 * r.gc,
            "restarts": r.restarts,
            "steps": r.steps,
            "success": r.success,
        }
        for r in ran
    ]
    return {"table": table, "tasks": tasks}


def step_budgets(records: Sequence[EpisodeRecord]) -> list[dict]:
    """Each task's oracle path length and the step limit its episodes had."""
    out: dict[str, dict] = {}
    for r in records:
        out.setdefault(r.task_id, {"task_id": r.task_id, "oracle_steps": r.oracle_steps})
        out[r.task_id]["max_steps"] = r.max_steps
    return list(out.values())


def node_seconds_by_agent(records: Sequence[EpisodeRecord]) -> list[dict]:
    """:func:`node_seconds_per_step` per (agent, ablation): one row per node, agents kept apart
    (a react step has no perceive node; averaging it in would halve robomemory's figures)."""
    return [
        {"agent": agent, "ablation": ablation, "node": node, "s_per_step": s}
        for (agent, ablation), rs in group(records, ("agent", "ablation")).items()
        for node, s in node_seconds_per_step(rs).items()
    ]


def _branch_times(records: Sequence[EpisodeRecord]) -> dict[tuple[int, int], dict[str, float]]:
    per_step: dict[tuple[int, int], dict[str, float]] = defaultdict(dict)
    for i, r in enumerate(records):
        for e in r.events:
            node = MEMORY_WORK.get(e.node, e.node)
            if node in MEMORY_NODES:
                slot = per_step[(i, e.step)]
                slot[node] = slot.get(node, 0.0) + e.wall_s
    return per_step


def _latency(slots: Iterable[dict[str, float]]) -> dict[str, float]:
    slots = list(slots)
    return {
        "steps": len(slots),
        "parallel_s": _mean(max(s.values()) for s in slots),
        "sequential_s": _mean(sum(s.values()) for s in slots),
        "temporal_s": _mean(s.get("temporal", 0.0) for s in slots),
    }


def memory_latency(records: Sequence[EpisodeRecord]) -> dict[str, float]:
    """Memory update+retrieve latency per step from node events (paper Fig. 3).

    ``parallel_s``: the fan-out's critical path, the slowest memory branch of each step (the
    branches run concurrently); ``sequential_s``: the sum of the branches (their cost if run one
    after another); ``temporal_s``: the temporal branch alone.
    """
    return _latency(_branch_times(records).values())


def memory_latency_by_step(records: Sequence[EpisodeRecord]) -> list[dict]:
    """:func:`memory_latency` per step index (averaged over episodes): latency scaling."""
    by_step: dict[int, list[dict[str, float]]] = defaultdict(list)
    for (_, step), slot in _branch_times(records).items():
        by_step[step].append(slot)
    return [{"step": step, **_latency(slots)} for step, slots in sorted(by_step.items())]


def kg_growth(records: Sequence[EpisodeRecord]) -> list[dict]:
    """Spatial KG size and update load per update, in order (paper Fig. 7)."""
    rows = []
    for r in records:
        for s in r.spatial_stats:
            if s.get("skipped"):
                continue
            rows.append(
                {
                    "task_id": r.task_id,
                    "attempt": r.attempt,
                    "step": s.get("step", 0),
                    "vertices": s.get("vertices", 0),
                    "edges": s.get("edges", 0),
                    "edges_touched": s.get("sent_edges", 0) + s.get("new_edges", 0),
                    "ops_applied": s.get("ops_applied", 0),
                }
            )
    return rows


def kg_summary(records: Sequence[EpisodeRecord]) -> dict[str, float]:
    """Final KG size and mean edges touched per update."""
    rows = kg_growth(records)
    if not rows:
        return {"updates": 0, "final_vertices": 0, "final_edges": 0, "edges_touched": 0.0}
    return {
        "updates": len(rows),
        "final_vertices": rows[-1]["vertices"],
        "final_edges": rows[-1]["edges"],
        "edges_touched": _mean(r["edges_touched"] for r in rows),
        "ops_applied": _mean(r["ops_applied"] for r in rows),
    }


def lifelong(records: Sequence[EpisodeRecord]) -> list[dict]:
    """SR and GC per attempt for each (agent, ablation), with attempt-N minus attempt-1 gains."""
    rows = []
    for (agent, ablation), rs in group(records, ("agent", "ablation")).items():
        by_attempt = group(rs, ("attempt",))
        first = by_attempt.get((1,), [])
        for (attempt,), ars in sorted(by_attempt.items()):
            rows.append(
                {
                    "agent": agent,
                    "ablation": ablation,
                    "attempt": attempt,
                    "episodes": len(ars),
                    "sr": success_rate(ars),
                    "gc": goal_condition_rate(ars),
                    "sr_gain": success_rate(ars) - success_rate(first),
                    "gc_gain": goal_condition_rate(ars) - goal_condition_rate(first),
                }
            )
    return rows


def memrl_curves(records: Sequence[EpisodeRecord]) -> list[dict]:
    """MemRL's runtime-learning curves over epochs (= attempts) per (agent, ablation).

    ``csr``: cumulative success rate, tasks solved at least once in epochs 1..e over all tasks;
    ``forgetting``: tasks solved in epoch e-1 but failed in epoch e, over all tasks (as in MemRL).
    """
    rows = []
    for (agent, ablation), rs in group(records, ("agent", "ablation")).items():
        tasks = sorted({r.task_id for r in rs})
        outcome: dict[int, dict[str, bool]] = defaultdict(dict)
        for r in rs:
            outcome[r.attempt][r.task_id] = r.success
        solved: set[str] = set()
        previous: dict[str, bool] = {}
        for epoch in sorted(outcome):
            now = outcome[epoch]
            solved |= {t for t, ok in now.items() if ok}
            forgot = sum(1 for t, ok in previous.items() if ok and not now.get(t, False))
            rows.append(
                {
                    "agent": agent,
                    "ablation": ablation,
                    "epoch": epoch,
                    "sr": _mean(1.0 if now.get(t, False) else 0.0 for t in tasks),
                    "csr": len(solved) / len(tasks) if tasks else 0.0,
                    "forgetting": forgot / len(tasks) if previous and tasks else 0.0,
                }
            )
            previous = now
    return rows


def location_prf(predicted: dict[str, str], truth: dict[str, str]) -> dict[str, float]:
    """Precision, recall and F1 of object -> holder pairs (spatial accuracy).

    A predicted pair is correct when the object's true holder equals it; precision is over
    predicted pairs, recall over true pairs.
    """
    correct = sum(1 for obj, holder in predicted.items() if truth.get(obj) == holder)
    p = correct / len(predicted) if predicted else 0.0
    r = correct / len(truth) if truth else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return {
        "precision": p,
        "recall": r,
        "f1": f1,
        "correct": correct,
        "predicted": len(predicted),
        "truth": len(truth),
    }
