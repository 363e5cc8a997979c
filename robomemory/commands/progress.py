"""Live progress and the end-of-run summary for `robomemory run`."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table


class RunProgress:
    """Shows the node being run, a step bar, and one line per executed action."""

    def __init__(self, console: Console, max_steps: int):
        self.console = console
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("step {task.completed:.0f}/{task.total:.0f}"),
            TimeElapsedColumn(),
            console=console,
        )
        self.task = self.progress.add_task("start", total=max_steps)
        self.verdict: str = ""

    def __enter__(self) -> RunProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(*exc)

    def on_event(self, node: str, update: dict[str, Any]) -> None:
        nxt = {
            "start": "perceive",
            "perceive": "memory",
            "recall": "plan/critic",
            "planner": "execute",
            "critic": "execute",
            "executor": "perceive",
        }
        self.progress.update(self.task, description=nxt.get(node, node))
        if node == "start":
            self.console.print(f"[bold]Task:[/bold] {update.get('task', '')}")
        elif node == "planner":
            plan = ", ".join(f"{a['verb']}({', '.join(a['args'])})" for a in update["plan"])
            self.console.print(
                f"  [cyan]plan[/cyan] {plan}  [dim]{update.get('plan_reason', '')}[/dim]"
            )
        elif node == "critic":
            v = update.get("verdict") or {}
            mark = "[green]approve[/green]" if v.get("approve") else "[red]reject[/red]"
            self.verdict = "approve" if v.get("approve") else "reject"
            self.console.print(f"  critic {mark} [dim]{v.get('reason', '')}[/dim]")
        elif node == "executor":
            item = update["trajectory"][-1]
            score = update.get("score")
            colour = "green" if item["outcome"] == "succeeded" else "yellow"
            self.console.print(
                f"step {item['step']:>2} [{colour}]{item['action']}[/{colour}] "
                f"{item['outcome']} score={score}  [dim]{item['message'][:90]}[/dim]"
            )
            self.progress.update(self.task, completed=item["step"])
        elif node == "consolidate":
            self.console.print("  long-term memory consolidated")


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
