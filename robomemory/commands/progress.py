"""Live progress and the end-of-run summary for `robomemory run`.

The live label names the node that is running now (LangGraph's ``tasks`` stream tells when a
node starts), with a timer for the current phase and one for the whole run; both keep moving
while a long phase (a model call, consolidation) runs. Finished work is printed as tidy lines:
game messages on one line, plan thoughts and critic reasons wrapped, never cut.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, SpinnerColumn, Task, TextColumn
from rich.table import Table
from rich.text import Text

from robomemory.core import Action

# What each node does, as the live label shows it.
PHASES: dict[str, str] = {
    "start": "start: opening the task",
    "perceive": "perceive: summarising the observation",
    "spatial_relations": "spatial relations: where things are, from the world's words",
    "temporal_compress": "temporal compress: the oldest steps in one summary",
    "temporal": "temporal",
    "spatial": "spatial",
    "semantic": "semantic",
    "episodic": "episodic",
    "recall": "recall: building working memory",
    "ground": "ground: what is possible, left to do and where",
    "planner": "planner: writing a plan",
    "critic": "critic: checking the next action",
    "executor": "executor: acting",
    "consolidate": "consolidate: writing long-term memory",
    "policy": "policy: choosing an action",
}
BRANCHES = ("temporal", "spatial", "semantic", "episodic")


def one_line(text: Any) -> str:
    """The text with every run of whitespace (newlines included) collapsed to one space."""
    return " ".join(str(text or "").split())


def action_text(action: dict) -> str:
    return str(Action.model_validate(action))


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


class SinceColumn(ProgressColumn):
    """Time since ``task.fields[field]`` (a ``time.monotonic()`` value); never freezes."""

    def __init__(self, field: str, label: str = "", style: str = "progress.elapsed"):
        super().__init__()
        self.field, self.label, self.style = field, label, style

    def render(self, task: Task) -> Text:
        since = task.fields.get(self.field)
        if since is None:
            return Text("")
        return Text.assemble((self.label, "dim"), (_clock(time.monotonic() - since), self.style))


@contextmanager
def phase(console: Console, label: str) -> Iterator[None]:
    """A spinner with a moving timer around a set-up phase (model start, embedder load)."""
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        SinceColumn("since"),
        console=console,
        transient=True,
    )
    started = time.monotonic()
    with progress:
        progress.add_task(label, total=None, since=started)
        yield
    console.print(f"[dim]{label}: done in {time.monotonic() - started:.1f} s[/dim]")


class RunProgress:
    """Shows the node running now, a step bar, two timers, and one line per finished action."""

    def __init__(self, console: Console, max_steps: int):
        self.console = console
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=20),
            TextColumn("step {task.completed:.0f}/{task.total:.0f}"),
            SinceColumn("phase_since", "phase "),
            SinceColumn("run_since", "run "),
            console=console,
        )
        now = time.monotonic()
        self.task = self.progress.add_task(
            "starting", total=max_steps, phase_since=now, run_since=now
        )
        self.running: dict[str, float] = {}
        self.plan: list[str] = []

    def __enter__(self) -> RunProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.running.clear()
        label = "stopped" if exc and exc[0] is not None else "finished"
        self.progress.update(self.task, description=label, phase_since=None)
        self.progress.__exit__(*exc)

    @property
    def label(self) -> str:
        return self.progress.tasks[0].description

    def _show_running(self) -> None:
        if not self.running:
            return
        branches = [n for n in self.running if n in BRANCHES]
        others = [PHASES.get(n, n) for n in self.running if n not in BRANCHES]
        if branches:
            others.append("memory: " + ", ".join(branches))
        self.progress.update(
            self.task, description=" + ".join(others), phase_since=min(self.running.values())
        )

    def on_start(self, node: str) -> None:
        """A node began: it becomes (part of) the live label and its phase timer starts."""
        self.running[node] = time.monotonic()
        self._show_running()

    def on_event(self, node: str, update: dict[str, Any]) -> None:
        """A node finished with ``update``: print what it decided or did."""
        self.running.pop(node, None)
        self._show_running()
        if node == "start":
            self.console.print(f"[bold]Task:[/bold] {one_line(update.get('task', ''))}")
        elif node == "planner":
            self.plan = [action_text(a) for a in update.get("plan") or []]
            text = " → ".join(self.plan)
            if update.get("plan_reason"):
                text += f"\n[dim]{one_line(update['plan_reason'])}[/dim]"
            self.console.print(self._row("plan", text, "cyan"))
        elif node == "critic":
            v = update.get("verdict") or {}
            ok = bool(v.get("approve"))
            mark = "[green]approve[/green]" if ok else "[red]reject[/red]"
            self.console.print(self._row("critic", f"{mark} {one_line(v.get('reason', ''))}"))
        elif node == "executor":
            self._print_step(update)
        elif node == "consolidate":
            text = consolidation_line(update.get("consolidation") or {})
            self.console.print(self._row("memory", text, "magenta"))

    def _row(self, label: str, markup: str, style: str = "") -> Table:
        grid = Table.grid(padding=(0, 1))
        grid.add_column(width=8, no_wrap=True)
        grid.add_column(ratio=1, overflow="fold")
        grid.add_row(Text(f"  {label}", style=style), Text.from_markup(markup))
        return grid

    def _print_step(self, update: dict[str, Any]) -> None:
        item = (update.get("trajectory") or [{}])[-1]
        if "step" not in item:
            return
        ok = item.get("outcome") == "succeeded"
        colour = "green" if ok else "yellow"
        score = update.get("score")
        line = Text.assemble(
            (f"step {item['step']:>2} ", "bold"),
            (str(item.get("action", "")), colour),
            f" {item.get('outcome', '')}",
            f"  score {score:g}" if isinstance(score, int | float) else "",
            "  ",
            (one_line(item.get("message")), "dim"),
        )
        self.console.print(line, no_wrap=True, overflow="ellipsis", crop=True)
        self.progress.update(self.task, completed=item["step"])


def consolidation_line(report: dict[str, Any]) -> str:
    """What consolidation wrote: items created and Mem0 events per long-term store."""
    if report.get("not_learned"):
        return f"nothing learned: {one_line(report['not_learned'])}"
    if report.get("skipped"):
        return "long-term memory already consolidated for this episode"
    parts = []
    for kind in ("semantic", "episodic"):
        r = report.get(kind)
        if isinstance(r, dict):
            events = ", ".join(f"{e} {r[e]}" for e in ("ADD", "UPDATE", "DELETE") if r.get(e))
            parts.append(f"{kind} {r.get('created', 0)} new ({events or 'no change'})")
    q = len(report.get("q_updates") or [])
    parts.append(f"{q} Q updates")
    seconds = report.get("seconds")
    tail = f" in {seconds:.1f} s" if isinstance(seconds, int | float) else ""
    return "consolidated: " + "; ".join(parts) + tail


def summary_table(result: Any) -> Table:
    """Success, GC, steps, model calls, tokens and wall time by node."""
    table = Table(title=f"episode {result.episode_id}: {result.end_reason or 'stopped'}")
    table.add_column("node")
    for col in ("runs", "calls", "prompt tok", "compl tok", "fallbacks", "wall s", "s/run"):
        table.add_column(col, justify="right")
    for node, u in sorted(result.usage.items()):
        runs = max(int(u.get("runs", 0)), 1)
        table.add_row(
            node,
            str(int(u.get("runs", 0))),
            str(int(u.get("calls", 0))),
            str(int(u.get("prompt_tokens", 0))),
            str(int(u.get("completion_tokens", 0))),
            str(int(u.get("fallbacks", 0))),
            f"{u.get('wall_s', 0):.1f}",
            f"{u.get('wall_s', 0) / runs:.2f}",
        )
    gc = "n/a" if result.gc is None else f"{result.gc:.2f}"
    p, c = result.tokens
    table.caption = (
        f"success={result.success}  GC={gc}  steps={result.steps}  "
        f"model calls={result.model_calls}  tokens={p}+{c}  wall={result.wall_s:.1f}s"
    )
    return table
