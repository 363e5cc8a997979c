"""`robomemory show [RUN] [--html page.html]`: look at a run, step by step.

RUN is a JSON trace written by ``robomemory run``, or a thread id whose checkpoint lives under
``--home`` (with ``--robot`` to read its spatial map), or nothing: the newest trace under
``HOME/runs/``. Prints each step (plan, critic, action, result, score, memory, map changes) and,
with ``--html``, writes the same as a self-contained page (with what each memory recalled and the
spatial map drawn: :mod:`~robomemory.commands.run_page`). No model is loaded. A thread's map
comes from the robot's spatial store, whose steps count on across the robot's tasks: the
episode's spatial statistics say which store step followed which step of the episode.
"""

from __future__ import annotations

import argparse
import bisect
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rich.table import Table

from robomemory.commands.home import add_home_argument, home_of
from robomemory.commands.inspect import load_triples
from robomemory.commands.json_out import add_json_flag, human_console, print_json, wants_json
from robomemory.commands.progress import one_line
from robomemory.commands.run_page import write_page
from robomemory.commands.trace import history_entry, trace_payload
from robomemory.config import AgentConfig, MemoryConfig
from robomemory.graphs.agent import RoboMemoryAgent, sqlite_checkpointer
from robomemory.graphs.builder import build_graph
from robomemory.inputs import read_text
from robomemory.memory.base import MemoryHandles, Triple
from robomemory.memory.episode_log import EpisodeLog

MAX_TRACE_BYTES = 256 * 1024 * 1024  # a trace of thousands of steps is a few MB


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", nargs="?", help="trace .json or thread id (default: the newest trace)")
    add_home_argument(p, "data folder (default: $ROBOMEMORY_HOME, else ~/.robomemory)")
    p.add_argument("--robot", default="default", help="robot id, for a thread's spatial map")
    p.add_argument("--html", type=Path, help="write the run as a self-contained HTML page")
    add_json_flag(p)


def newest_trace(data: Path) -> Path:
    traces = sorted((data / "runs").glob("*.json"), key=lambda p: p.stat().st_mtime)
    if not traces:
        raise FileNotFoundError(f"no traces under {data / 'runs'}; run `robomemory run` first")
    return traces[-1]


def load_thread(thread: str, data: Path, robot: str) -> dict[str, Any]:
    """A trace dict rebuilt from a thread's checkpoint (and the robot's spatial store)."""
    db = data / "memory" / "checkpoints.sqlite"
    if not db.is_file():
        raise FileNotFoundError(f"no checkpoints at {db} (give --home DIR)")
    graph = build_graph().compile(checkpointer=sqlite_checkpointer(db))
    # reading state needs the config's recursion limit and the episode log (the steps), not
    # live clients
    episodes = EpisodeLog(db.parent / "episodes.sqlite3")
    memory = SimpleNamespace(episodes=episodes)
    config = AgentConfig(robot_id=robot)  # the checkpoint thread is the robot's own
    agent = RoboMemoryAgent(graph, SimpleNamespace(config=config, memory=memory))
    try:
        if not agent.state(thread):
            raise ValueError(f"no thread {thread!r} in {db}")
        trace = trace_payload(agent.result(thread))
    finally:
        episodes.close()
    handles = MemoryHandles.for_robot(robot, trace["episode_id"])
    triples = load_triples(MemoryConfig(data_dir=data / "memory"), handles)
    trace["map_history"] = map_history_from_store(triples, trace)
    changes = map_changes(trace["map_history"])
    for item in trace["trajectory"]:
        if "map" not in item and int(item["step"]) in changes:
            item["map"] = changes[int(item["step"])]
    if 0 in changes:
        trace["initial_map"] = changes[0]
    return trace


def map_history_from_store(triples: list[Triple], trace: dict[str, Any]) -> list[dict]:
    """The trace's ``map_history`` (see :mod:`~robomemory.commands.trace`) from the robot's
    triples: those held at some point of the episode, their store steps turned into the
    episode's (the i-th spatial update of the episode follows its step i). Without spatial
    statistics, the triples the episode wrote, their store steps taken as its own."""
    stamps = sorted(
        (int(s["step"]), i)
        for i, s in enumerate(trace.get("spatial_stats") or [])
        if isinstance(s, dict) and isinstance(s.get("step"), int)
    )
    if not stamps:
        mine = [t for t in triples if t.episode_id == trace.get("episode_id")]
        return [history_entry(t, t.valid_from_step, t.invalidated_at_step) for t in mine]
    first, last = stamps[0][0], stamps[-1][0]

    def step_of(store_step: int | None) -> int | None:
        """The episode step whose update stamped ``store_step``; None outside the episode."""
        if store_step is None or not first <= store_step <= last:
            return None
        return stamps[bisect.bisect_right(stamps, (store_step, 1 << 30)) - 1][1]

    return [
        history_entry(t, step_of(t.valid_from_step), step_of(t.invalidated_at_step))
        for t in triples
        if t.valid_from_step <= last
        and (t.invalidated_at_step is None or t.invalidated_at_step >= first)
    ]


def map_changes(history: list[dict]) -> dict[int, dict[str, list[str]]]:
    """The edges each step's update added and removed, as text, by step."""
    out: dict[int, dict[str, list[str]]] = {}
    for e in history:
        text = f"{e['subject']} {e['relation']} {e['object']}"
        for key, kind in (("since", "added"), ("until", "removed")):
            if e[key] is not None:
                out.setdefault(e[key], {"added": [], "removed": []})[kind].append(text)
    return out


def read_trace(path: Path) -> dict[str, Any]:
    try:
        trace = json.loads(read_text(path, MAX_TRACE_BYTES))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not a JSON trace: {exc}") from exc
    if not isinstance(trace, dict) or not isinstance(trace.get("trajectory"), list):
        raise ValueError(f"{path} is not a trace of `robomemory run` (no trajectory)")
    return trace


def load_run(run: str | None, data: Path, robot: str) -> dict[str, Any]:
    if run is None:
        return read_trace(newest_trace(data))
    path = Path(run)
    if path.suffix == ".json" or path.is_file():
        if not path.is_file():
            raise FileNotFoundError(f"no trace file {path}")
        return read_trace(path)
    return load_thread(run, data, robot)


def steps_table(trace: dict[str, Any]) -> Table:
    """One row per step: action and result, what led to it, memory and map."""
    gc = trace.get("gc")
    table = Table(
        title=f"run {trace.get('thread_id', '')}: {one_line(trace.get('task', ''))}",
        caption=f"{trace.get('end_reason') or 'stopped'}  success={trace.get('success')}  "
        f"GC={'n/a' if gc is None else f'{gc:.2f}'}  steps={trace.get('steps')}",
        show_lines=True,
    )
    table.add_column("step", justify="right")
    table.add_column("action → result", ratio=3, overflow="fold")
    table.add_column("plan · critic", ratio=3, overflow="fold")
    table.add_column("memory · map", ratio=2, overflow="fold")
    for item in trace.get("trajectory") or []:
        result = f"[bold]{item.get('action')}[/bold] {item.get('outcome')}"
        if isinstance(item.get("score"), int | float):
            result += f" score {item['score']:g}"
        result += f"\n[dim]{one_line(item.get('message'))}[/dim]"
        why = []
        for r in item.get("rejected") or []:
            why.append(f"[red]rejected[/red] {' → '.join(r['plan'])}: {one_line(r['reason'])}")
        if item.get("plan"):
            why.append("plan " + " → ".join(item["plan"]))
        v = item.get("verdict")
        if isinstance(v, dict):
            mark = "[green]approved[/green]" if v.get("approve") else "[red]rejected[/red]"
            why.append(f"critic {mark}: {one_line(v.get('reason'))}")
        mem = []
        if isinstance(item.get("recalled"), dict):
            mem.append(" ".join(f"{k} {n}" for k, n in item["recalled"].items()))
        change = item.get("map") or {}
        mem += [f"[green]+ {t}[/green]" for t in change.get("added", [])]
        mem += [f"[red]- {t}[/red]" for t in change.get("removed", [])]
        table.add_row(str(item.get("step")), result, "\n".join(why), "\n".join(mem))
    return table


def step_rows(trace: dict[str, Any]) -> dict[str, Any]:
    """The steps table as JSON: the run's outcome and one row per step, same fields."""
    rows = [
        {
            "step": item.get("step"),
            "action": item.get("action"),
            "outcome": item.get("outcome"),
            "score": item.get("score"),
            "message": item.get("message"),
            "rejected": item.get("rejected") or [],
            "plan": item.get("plan") or [],
            "verdict": item.get("verdict"),
            "recalled": item.get("recalled"),
            "map": item.get("map") or {"added": [], "removed": []},
        }
        for item in trace.get("trajectory") or []
    ]
    keys = ("thread_id", "task", "end_reason", "success", "gc", "steps")
    return {**{k: trace.get(k) for k in keys}, "rows": rows}


def main(args: argparse.Namespace) -> int:
    data = home_of(args)
    trace = load_run(args.run, data, args.robot)
    console = human_console(args)
    if wants_json(args):
        print_json(step_rows(trace))
    else:
        console.print(steps_table(trace))
    if args.html:
        console.print(f"wrote {write_page(trace, args.html)}")
    return 0
