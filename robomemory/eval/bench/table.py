"""`robomemory bench table`: the results table, from one run at one commit.

Runs (or resumes) the listed suites with every listed agent in the same run — robomemory, the
react baseline and the model-free ``first`` agent by default — one attempt from an empty
memory, and writes ``OUT/table.md`` from that run only::

    robomemory bench table --suites tiny,tw-cooking-medium:test,tales-twx --out runs/table

A suite is ``NAME[:SPLIT]`` (``dev`` unless said). ``--actions listed,free`` runs each suite
in each mode (``listed``: the world's valid actions are the candidates; ``free``: only what a
player sees; a free row's folder ends in ``-free``); each row says its mode, from the manifest.
``OUT/table.json`` records the commit the run
began at; a re-run resumes it and refuses another commit or a tree with uncommitted changes to
tracked files, so a row never mixes commits (run a long table from a worktree at its commit:
``git worktree add /tmp/table COMMIT``). Each suite's machine load (1-minute load average) is
noted when it starts and ends. ``--write-docs`` puts the table between the markers
``<!-- bench-table:begin PATH -->`` and ``<!-- bench-table:end -->`` in the README and
``docs/RESULTS.md`` (PATH: the run's folder); ``tests/test_docs_links.py`` renders the cited
folder again and fails when the two differ.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field
from rich.console import Console

from robomemory.commands.json_out import (
    add_json_flag,
    human_console,
    markdown_rows,
    print_json,
    wants_json,
)
from robomemory.eval.bench.suite import config_from_args, parse_agents
from robomemory.eval.metrics import EpisodeRecord, summarize
from robomemory.eval.report import load_records, write_json_atomic, write_report
from robomemory.eval.runner import SuiteRunner
from robomemory.eval.suites import Suite, get_suite
from robomemory.eval.tales import PUBLISHED_SOURCE, SUITE_FRAMEWORK, published
from robomemory.executors.perceived import ACTIONS_MODES

MANIFEST = "table.json"
TABLE = "table.md"
DEFAULT_AGENTS = ("robomemory", "react", "first")
TALES_SUITES = ("tales-twx", "tales-sw")
# TALES' published rows shown beside ours: the small models a robot could carry, and the best
COMPARED = (
    "Llama-3.2-1B-Instruct",
    "Llama-3.2-3B-Instruct",
    "phi-4",
    "Qwen2.5-7B-Instruct",
    "Llama-3.1-8B-Instruct",
    "Qwen3-32B",
    "o3 (medium)",
)
BEGIN = re.compile(r"<!-- bench-table:begin (?P<folder>\S+) -->\n")
END = "<!-- bench-table:end -->"


class SuiteLoad(BaseModel):
    """When a suite of the table ran and the machine's 1-minute load then."""

    started: str
    load_start: float
    ended: str | None = None
    load_end: float | None = None


class TableSuite(BaseModel):
    """One suite of a table: its name, split, folder in the run, number of tasks and what its
    agents were given (``listed``: the world's valid actions; ``free``: a player's view)."""

    name: str
    split: str
    folder: str
    tasks: int
    actions: Literal["listed", "free"] = "listed"


class TableManifest(BaseModel):
    """What a table run is: its commit, suites, agents and model, and each suite's load; all
    a table is rendered from, with the records (so a later commit renders it the same)."""

    commit: str
    started: str
    suites: list[TableSuite]
    agents: list[str]
    model: str
    episodes: int | None = None
    cores: int = Field(default_factory=lambda: os.cpu_count() or 0)
    loads: dict[str, SuiteLoad] = Field(default_factory=dict)


def parse_specs(text: str) -> list[tuple[str, str | None]]:
    """``"tiny,tw-simple:test"`` -> [("tiny", None), ("tw-simple", "test")] (None: the
    suite's own split)."""
    specs: list[tuple[str, str | None]] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, _, split = part.partition(":")
        specs.append((name, split or None))
    if not specs:
        raise ValueError("--suites names no suite")
    return specs


def parse_actions(text: str | None) -> list[Literal["listed", "free"]]:
    """``"listed,free"`` -> ["listed", "free"]; None: listed alone."""
    modes = [m.strip() for m in (text or "listed").split(",") if m.strip()]
    bad = [m for m in modes if m not in ACTIONS_MODES]
    if bad or not modes:
        raise ValueError(f"--actions {text!r}: choose listed, free or listed,free")
    return list(dict.fromkeys(modes))  # type: ignore[arg-type]


def spec_suite(name: str, split: str | None, actions: str = "listed") -> Suite:
    """The suite a spec names (its split's seeds), in the actions mode."""
    suite = get_suite(name, split)
    return suite if actions == suite.actions else suite.with_actions(actions)  # type: ignore[arg-type]


def table_suites(
    specs: list[tuple[str, str | None]],
    episodes: int | None,
    actions: list[Literal["listed", "free"]] | None = None,
) -> list[TableSuite]:
    """The manifest's entries of ``specs``, one per suite and actions mode (each suite built,
    so a bad name stops the run)."""
    out = []
    for name, split in specs:
        for mode in actions or ["listed"]:
            suite = spec_suite(name, split, mode)
            tasks = len(suite.tasks[:episodes] if episodes else suite.tasks)
            folder = suite.name if mode == "listed" else f"{suite.name}-free"
            out.append(
                TableSuite(name=name, split=suite.split, folder=folder, tasks=tasks, actions=mode)
            )
    return out


def git_commit(root: Path) -> str:
    """HEAD's hash; ValueError when ``root`` is no git checkout or tracked files changed."""
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True
        )
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
        )
    except FileNotFoundError:
        raise ValueError("git is not installed: a table names the commit it ran") from None
    if head.returncode != 0:
        raise ValueError(f"{root} is no git checkout: a table names the commit it ran")
    if status.stdout.strip():
        changed = status.stdout.split()[-1]
        raise ValueError(
            f"tracked files have uncommitted changes ({changed}, ...): commit them, or run the "
            "table from a worktree at a commit"
        )
    return head.stdout.strip()


def open_manifest(out: Path, fresh: TableManifest) -> TableManifest:
    """The run's manifest: ``fresh`` for a new run, the stored one for a resumed run (which
    must be the same commit, suites and agents)."""
    path = out / MANIFEST
    if not path.exists():
        write_json_atomic(path, fresh.model_dump(mode="json"))
        return fresh
    kept = TableManifest.model_validate_json(path.read_text())
    if kept.commit != fresh.commit:
        raise ValueError(
            f"{out} is a table run at {kept.commit[:7]}; HEAD is {fresh.commit[:7]} (a row "
            "never mixes commits: start a new folder, or run from a worktree at that commit)"
        )
    for field in ("suites", "agents", "model", "episodes"):
        if getattr(kept, field) != getattr(fresh, field):
            raise ValueError(
                f"{out} was started with {field} {getattr(kept, field)}; this run asks "
                f"{getattr(fresh, field)} (start a new folder)"
            )
    return kept


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def run_table(out: Path, runner_args: dict, manifest: TableManifest, console: Console) -> None:
    """Run every suite of the table (resuming what is done), writing table.md after each."""
    for entry in manifest.suites:
        suite = spec_suite(entry.name, entry.split, entry.actions)
        folder = out / entry.folder
        key = entry.folder
        load = manifest.loads.get(key)
        if load is None:  # a resumed suite keeps when it was begun
            manifest.loads[key] = SuiteLoad(started=_now(), load_start=os.getloadavg()[0])
            write_json_atomic(out / MANIFEST, manifest.model_dump(mode="json"))
        runner = SuiteRunner(suite, folder, **runner_args)
        runner.run(manifest.agents, (), 1, manifest.episodes)
        write_report(folder, title=f"Suite {suite.name}")
        if manifest.loads[key].ended is None:
            manifest.loads[key].ended = _now()
            manifest.loads[key].load_end = os.getloadavg()[0]
            write_json_atomic(out / MANIFEST, manifest.model_dump(mode="json"))
        (out / TABLE).write_text(render_table(out))
        console.print(f"{key}: done")


def _cell(records: list[EpisodeRecord], total: int, what: str) -> str:
    if not records:
        return "not run" if what == "sr_gc" else "—"
    s = summarize(records)
    part = "" if len(records) == total else f" ({len(records)} of {total})"
    match what:
        case "sr_gc":
            return f"{s['sr']:.3f} / {s['gc']:.3f}{part}"
        case "steps":
            return f"{s['steps']:.1f}"
        case _:
            return f"{s['wall_s_per_step']:.2f}"


def render_table(out: Path, brief: bool = False) -> str:
    """The Markdown table of a table run's folder: from its manifest and records only;
    ``brief``: the table alone, without each suite's time and load and TALES' scores."""
    manifest = TableManifest.model_validate_json((out / MANIFEST).read_text())
    cols = ["suite", "split", "actions", "tasks"]
    for agent in manifest.agents:
        cols += [f"{agent} SR / GC", f"{agent} steps"]
        if agent != "first":  # a model-free agent's seconds say nothing of a step's cost
            cols.append(f"{agent} s/step")
    ratio = "robomemory" in manifest.agents and "react" in manifest.agents
    if ratio:
        cols.append("robomemory ÷ react s/step")
    lines = [
        "| " + " | ".join(cols) + " |",
        "|" + "---|" * len(cols),
    ]
    notes = []
    for entry in manifest.suites:
        folder, total = out / entry.folder, entry.tasks
        records = [r for r in (load_records(folder) if folder.exists() else []) if r.error is None]
        by_agent = {
            a: [r for r in records if r.agent == a and r.attempt == 1] for a in manifest.agents
        }
        row = [f"`{entry.name}`", entry.split, entry.actions, str(total)]
        for agent in manifest.agents:
            row += [_cell(by_agent[agent], total, "sr_gc"), _cell(by_agent[agent], total, "steps")]
            if agent != "first":
                row.append(_cell(by_agent[agent], total, "s"))
        if ratio:
            mine, theirs = by_agent["robomemory"], by_agent["react"]
            a, b = summarize(mine)["wall_s_per_step"], summarize(theirs)["wall_s_per_step"]
            if theirs and not summarize(theirs)["calls"]:  # the table decided every react step
                row.append("— (react asked no model)")
            else:
                row.append(f"{a / b:.2f}×" if mine and theirs and b else "—")
        lines.append("| " + " | ".join(row) + " |")
        load = manifest.loads.get(folder.name)
        if load is not None:
            end = f" to {load.ended}, load {load.load_end:.1f}" if load.ended else ", not finished"
            link = f" ([records]({folder.name}/))" if records else ", no record yet"
            notes.append(
                f"- `{folder.name}`: {load.started}, load {load.load_start:.1f}{end}{link}"
            )
    tales = [t for t in manifest.suites if t.name in TALES_SUITES]
    compared = [tales_lines(out / t.folder, t, manifest.agents) for t in tales]
    head = (
        f"One run at commit `{manifest.commit[:7]}` begun {manifest.started}, "
        f"{manifest.cores} CPU cores, model `{manifest.model}`; attempt 1, empty memory; "
        "`first` is the model-free agent (the first candidate every step). "
        "dev: the suites the rules were written from; test: seeds nobody read traces of. "
        + ACTIONS_NOTE[tuple(sorted({t.actions for t in manifest.suites}))]
    )
    if brief:
        return "\n".join([head, "", *lines]) + "\n"
    parts = [head, "", *lines, "", "Each suite's time and load:", "", *notes]
    for block in compared:
        parts += ["", *block]
    return "\n".join(parts) + "\n"


ACTIONS_NOTE: dict[tuple[str, ...], str] = {
    ("listed",): "actions listed: the world's valid actions are given.",
    ("free",): "actions free: only what a player sees (texts, score, the game's end).",
    ("free", "listed"): "actions listed: the world's valid actions are given; free: only what "
    "a player sees (texts, score, the game's end).",
}


def tales_lines(folder: Path, entry: TableSuite, agents: list[str]) -> list[str]:
    """Our agents' TALES score on a TALES suite (mean over its tasks of best / max, in
    percent) beside the scores TALES published for some models (theirs, marked so)."""
    records = [r for r in (load_records(folder) if folder.exists() else []) if r.error is None]
    rows = []
    for agent in agents:
        mine = [r for r in records if r.agent == agent and r.attempt == 1]
        part = "" if len(mine) == entry.tasks else f" ({len(mine)} of {entry.tasks} tasks)"
        score = f"{100 * summarize(mine)['gc']:.1f}{part}" if mine else "not run"
        rows.append(f"| {agent} (ours, {entry.actions} actions) | {score} |")
    theirs = dict(published(entry.name))
    rows += [f"| {model} (TALES', no list) | {theirs[model]:.1f} |" for model in COMPARED]
    ours = "ours do" if entry.actions == "listed" else "nor do ours (free: only what a player sees)"
    return [
        f"TALES score on `{entry.name}` ({SUITE_FRAMEWORK[entry.name]}, {entry.actions} actions), "
        f"ours beside those TALES published ({PUBLISHED_SOURCE}); their agents get no list of "
        f"valid actions, {ours}:",
        "",
        "| agent | score (%) |",
        "|---|---|",
        *rows,
    ]


def docs_block(out: Path, root: Path, doc: Path) -> str:
    """The table between its markers for the document ``doc`` (the README's brief): the
    marker cites the run's folder relative to ``root``; links start from the document's
    folder."""
    folder = out.resolve().relative_to(root.resolve())
    there = Path(os.path.relpath(out.resolve(), doc.resolve().parent)).as_posix()
    text = render_table(out, brief=doc.name == "README.md")
    table = re.sub(r"\]\((?!https?:)", f"]({there}/", text)
    return f"<!-- bench-table:begin {folder.as_posix()} -->\n{table}{END}"


def replace_block(text: str, block: str, where: str) -> str:
    """``text`` with its table block replaced by ``block``; ValueError without markers."""
    start = BEGIN.search(text)
    end = text.find(END, start.end()) if start else -1
    if start is None or end < 0:
        raise ValueError(f"{where} has no <!-- bench-table:begin ... --> ... {END} block")
    return text[: start.start()] + block + text[end + len(END) :]


def cited_blocks(text: str) -> list[tuple[str, str]]:
    """Every (cited folder, block text) of a document."""
    out = []
    for start in BEGIN.finditer(text):
        end = text.find(END, start.end())
        if end >= 0:
            out.append((start["folder"], text[start.start() : end + len(END)]))
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--suites",
        required=True,
        metavar="NAME[:SPLIT],...",
        help="the table's suites, e.g. tiny,tw-cooking-medium:test,tales-twx (split: dev|test)",
    )
    p.add_argument(
        "--agent",
        action="append",
        help=f"agents (repeat or comma-separate); default {','.join(DEFAULT_AGENTS)}",
    )
    p.add_argument(
        "--model",
        choices=("local", "openai", "fake"),
        default="local",
        help="the model of the agents that have one (first has none)",
    )
    p.add_argument("--model-name", default=None, help="model id for --model openai")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint")
    p.add_argument("--episodes", type=int, default=None, help="first N tasks of each suite")
    p.add_argument(
        "--actions",
        default="listed",
        metavar="listed|free|listed,free",
        help="listed: the world's valid actions are the candidates (default); free: only what "
        "a player sees (TextWorldExpress and ScienceWorld suites); both: a row of each",
    )
    p.add_argument("--out", required=True, type=Path, help="the run's folder")
    p.add_argument(
        "--write-docs",
        action="store_true",
        help="put the table in README.md and docs/RESULTS.md (between their markers)",
    )
    p.add_argument("--no-progress", action="store_true")
    add_json_flag(p)


def main(args: argparse.Namespace) -> int:
    from robomemory.eval.committed import repo_root

    console = human_console(args)
    suites = table_suites(parse_specs(args.suites), args.episodes, parse_actions(args.actions))
    agents = parse_agents(args.agent or [",".join(DEFAULT_AGENTS)])
    cfg = config_from_args(args)
    root = repo_root()
    fresh = TableManifest(
        commit=git_commit(root),
        started=_now(),
        suites=suites,
        agents=agents,
        model=cfg.model.label,
        episodes=args.episodes,
    )
    args.out.mkdir(parents=True, exist_ok=True)
    manifest = open_manifest(args.out, fresh)
    runner_args = {"config": cfg, "show_progress": not (args.no_progress or wants_json(args))}
    run_table(args.out, runner_args, manifest, console)
    if wants_json(args):
        rows = markdown_rows(render_table(args.out, brief=True))
        print_json({"commit": manifest.commit, "model": manifest.model, "rows": rows})
    else:
        console.print((args.out / TABLE).read_text())
    if args.write_docs:
        for doc in (root / "README.md", root / "docs" / "RESULTS.md"):
            block = docs_block(args.out, root, doc)
            doc.write_text(replace_block(doc.read_text(), block, doc.name))
            console.print(f"wrote the table into {doc.relative_to(root)}")
    return 0
