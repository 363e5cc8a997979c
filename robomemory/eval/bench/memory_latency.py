"""`robomemory bench memory-latency`: per-step memory update + retrieve wall time (paper Fig. 3).

Replays the same scripted N-step trajectory three times, each on fresh real stores in a temp dir
(networkx spatial graph, Qdrant local mode) and a real ``ChatOpenAI`` talking to a FAKE
OpenAI-compatible server on 127.0.0.1 that answers every call after a fixed latency:

- ``parallel``:   the graph's four memory branch nodes fanned out in one LangGraph superstep;
- ``sequential``: the same four nodes chained one after another;
- ``temporal``:   the temporal branch alone.

Only the model is fake (scripted answers after ``--latency`` seconds); stores, embeddings and the
LangGraph runtime are real.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langgraph.graph import END, START, StateGraph

from robomemory.config import AgentConfig, ModelConfig
from robomemory.context import AgentContext
from robomemory.memory.base import MemoryHandles
from robomemory.memory.longterm import NewItem
from robomemory.memory.system import MemorySystem
from robomemory.models import make_embedder, make_llm
from robomemory.nodes import memory_branches as mb
from robomemory.state import AgentState
from robomemory.testing.openai_server import FakeOpenAIServer, minimal_instance

MODES = ("parallel", "sequential", "temporal")
BRANCHES = ("temporal", "spatial", "semantic", "episodic")

# A scripted house walk: (room, object, furniture). Step t visits WALK[t % len(WALK)] and moves
# one object, so the spatial graph grows and changes over the run.
WALK = [
    ("kitchen", "apple", "counter"),
    ("kitchen", "knife", "drawer"),
    ("living room", "remote", "sofa"),
    ("living room", "book", "shelf"),
    ("bedroom", "pillow", "bed"),
    ("bedroom", "lamp", "nightstand"),
    ("bathroom", "towel", "rack"),
    ("bathroom", "soap", "sink"),
]


def step_script(step: int) -> tuple[str, list[str], list[tuple[str, str, str]]]:
    """Step summary s_t, queries q_t, and the relations the scripted extractor returns."""
    room, obj, place = WALK[step % len(WALK)]
    lap = step // len(WALK)
    where = place if lap % 2 == 0 else "table"
    summary = (
        f"Step {step}: I went to the {room}. The {obj} is on the {where}. "
        f"The {place} is in the {room}."
    )
    queries = [
        f"where is the {obj}",
        f"what is in the {room}",
        f"how to use the {obj}",
        f"past tasks with the {obj}",
    ]
    relations = [("I", "at", room), (obj, "on", where), (place, "in", room)]
    return summary, queries, relations


def make_responder() -> Callable[[str, dict, list[dict]], dict]:
    """Scripted answers of the FAKE model: the extractor returns the step's relations, the
    Mem0 updater adds (prefill); anything else gets the server's minimal schema-valid answer."""
    table = {step_script(s)[0]: step_script(s)[2] for s in range(len(WALK) * 64)}

    def responder(schema_name: str, schema: dict, messages: Sequence[dict]) -> dict:
        text = "\n".join(str(m.get("content", "")) for m in messages)
        if schema_name == "ExtractedTriples":
            for summary, rels in table.items():
                if summary in text:
                    return {
                        "relations": [
                            {"subject": s, "relation": r, "object": o} for s, r, o in rels
                        ]
                    }
            return {"relations": []}
        if schema_name == "ResolverDecision":
            return {"delete": []}
        if schema_name == "TemporalSummary":
            return {"summary": "Earlier: I walked through the house and saw objects."}
        if schema_name == "MemoryDecision":
            return {"event": "ADD"}
        return minimal_instance(schema) if schema else {}

    return responder


def build_bench_graph(mode: str) -> Any:
    """The real branch nodes, fanned out (parallel), chained (sequential) or alone (temporal)."""
    g = StateGraph(AgentState, context_schema=AgentContext)
    names = ("temporal",) if mode == "temporal" else BRANCHES
    for name in names:
        g.add_node(name, getattr(mb, name))
    if mode == "parallel":
        for name in names:
            g.add_edge(START, name)
            g.add_edge(name, END)
    else:
        chain = [START, *names, END]
        for a, b in zip(chain, chain[1:], strict=False):
            g.add_edge(a, b)
    return g.compile()


def prefill_items() -> dict[str, list[tuple[str, str | None]]]:
    """Long-term items written before timing, so retrieval searches non-empty collections."""
    semantic: list[tuple[str, str | None]] = []
    episodic: list[tuple[str, str | None]] = []
    for room, obj, place in WALK:
        semantic.append(
            (f"pick_up({obj}) fails unless I am at the {place}; navigate first.", "action")
        )
        semantic.append((f"To tidy the {room}, return the {obj} to the {place}.", "task"))
        episodic.append((f"Task: tidy the {room}. Moved the {obj} to the {place}. Success.", None))
    return {"semantic": semantic, "episodic": episodic}


def prefill(memory: Any, llm: Any) -> None:
    """Write ``prefill_items`` through the real Mem0 update path (untimed)."""
    for kind, items in prefill_items().items():
        module = getattr(memory, kind)
        if module is not None:
            module.add_items(
                [NewItem(text, level) for text, level in items],
                task="tidy up the house",
                episode_id="prefill",
                llm=llm.for_node(f"prefill-{kind}"),
            )


class _NoExecutor:
    """Placeholder: this benchmark executes no actions, it only updates and retrieves memory."""


def run_mode(
    mode: str,
    steps: int,
    base_url: str,
    data_dir: Path,
    embedder: str,
    prefill_url: str | None = None,
) -> dict:
    """Replay ``steps`` steps in ``mode`` on fresh stores; return per-step seconds and calls.

    ``prefill_url`` (a zero-latency fake server) is used to write the long-term items first.
    """
    model_cfg = ModelConfig(
        provider="openai", base_url=base_url, model="fake", max_retries=0, embedder=embedder
    )
    cfg = AgentConfig(model=model_cfg, robot_id=f"bench-{mode}")
    cfg.memory.data_dir = data_dir / mode
    memory = MemorySystem.open(cfg.memory, make_embedder(model_cfg), cfg.robot_id)
    ctx = AgentContext(config=cfg, llm=make_llm(model_cfg), memory=memory, executor=_NoExecutor())
    if prefill_url:
        prefill(memory, make_llm(model_cfg.model_copy(update={"base_url": prefill_url})))
    graph = build_bench_graph(mode)
    handles = MemoryHandles.for_robot(cfg.robot_id, f"bench-{uuid.uuid4().hex[:8]}").model_dump()
    buffer: list[str] = []
    seconds: list[float] = []
    calls = 0
    branch_s: dict[str, float] = {}
    try:
        for step in range(steps):
            summary, queries, _ = step_script(step)
            state = {
                "task": "tidy up the house",
                "handles": handles,
                "step": step,
                "summary": summary,
                "queries": queries,
                "temporal": buffer,
            }
            t0 = time.perf_counter()
            out = graph.invoke(state, context=ctx)
            seconds.append(time.perf_counter() - t0)
            buffer = list(out.get("temporal") or buffer)
            for name, u in (out.get("usage") or {}).items():
                calls += int(u.get("calls", 0))
                branch_s[name] = branch_s.get(name, 0.0) + float(u.get("wall_s", 0.0))
    finally:
        memory.close()
    branch_mean = {k: v / max(1, steps) for k, v in branch_s.items()}
    return {"seconds": seconds, "model_calls": calls, "branch_mean_s": branch_mean}


def summarize(seconds: list[float]) -> dict[str, float]:
    """Mean, median and p95 (nearest rank) of per-step seconds."""
    ordered = sorted(seconds)
    p95 = ordered[max(0, -(-95 * len(ordered) // 100) - 1)]
    return {
        "mean": statistics.fmean(ordered),
        "median": statistics.median(ordered),
        "p95": p95,
        "total": sum(ordered),
    }


def run_benchmark(
    steps: int = 50, latency: float = 0.2, embedder: str = "minilm", modes: Sequence[str] = MODES
) -> dict:
    """Run every mode; return the figures as a JSON-ready dict."""
    results: dict[str, Any] = {
        "steps": steps,
        "latency_s": latency,
        "embedder": embedder,
        "modes": {},
    }
    responder = make_responder()
    with (
        FakeOpenAIServer(latency_s=latency, responder=responder) as srv,
        FakeOpenAIServer(latency_s=0.0, responder=responder) as fast,
        tempfile.TemporaryDirectory(prefix="robomemory-latency-") as tmp,
    ):
        for mode in modes:
            out = run_mode(mode, steps, srv.base_url, Path(tmp), embedder, fast.base_url)
            figures = {k: round(v, 4) for k, v in summarize(out["seconds"]).items()}
            figures["model_calls"] = out["model_calls"]
            figures["branch_mean_s"] = {k: round(v, 4) for k, v in out["branch_mean_s"].items()}
            results["modes"][mode] = figures
    return results


def print_table(results: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"memory update + retrieve per step ({results['steps']} steps, "
        f"fake model latency {results['latency_s']}s, {results['embedder']})"
    )
    for col in ("mode", "mean s", "median s", "p95 s", "total s", "model calls"):
        table.add_column(col, justify="left" if col == "mode" else "right")
    branches = Table(title="mean seconds per branch node (they overlap in parallel mode)")
    branches.add_column("mode")
    for name in BRANCHES:
        branches.add_column(name, justify="right")
    for mode, f in results["modes"].items():
        table.add_row(
            mode,
            f"{f['mean']:.3f}",
            f"{f['median']:.3f}",
            f"{f['p95']:.3f}",
            f"{f['total']:.2f}",
            str(f["model_calls"]),
        )
        per = f["branch_mean_s"]
        branches.add_row(mode, *(f"{per[n]:.3f}" if n in per else "-" for n in BRANCHES))
    console = Console()
    console.print(table)
    console.print(branches)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--steps", type=int, default=50, help="steps per mode")
    parser.add_argument("--latency", type=float, default=0.2, help="fake model latency (s)")
    parser.add_argument("--embedder", choices=["minilm", "fake"], default="minilm")
    parser.add_argument(
        "--modes", default=",".join(MODES), help="comma-separated subset of: " + ", ".join(MODES)
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def main(args: argparse.Namespace) -> int:
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = sorted(set(modes) - set(MODES))
    if unknown:
        raise SystemExit(f"unknown mode(s) {', '.join(unknown)}; choose from {', '.join(MODES)}")
    results = run_benchmark(args.steps, args.latency, args.embedder, modes)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print_table(results)
    return 0
