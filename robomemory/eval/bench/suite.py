"""`robomemory bench suite`: SR/GC of agents and ablations on a suite, resumable, with reports.

Example::

    robomemory bench suite --suite tiny --agent robomemory --agent react --attempts 2 \\
        --ablate critic,spatial --model local --out runs/tiny

``--games PATH...`` runs the same protocol on TextWorld games a user brings (files, folders or
glob patterns) instead of a named suite. ``--ablate`` adds one RoboMemory run per listed
component (``a+b`` removes both at once) next to the full system; baselines ignore it.
Re-running the same command resumes. Each task's step limit is at least twice its oracle's.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pydantic import ValidationError
from rich.console import Console

from robomemory.config import AgentConfig, config_error_line
from robomemory.eval.report import write_report
from robomemory.eval.runner import AGENTS, SuiteRunner
from robomemory.eval.suites import SUITES, games_suite, get_suite


def add_arguments(p: argparse.ArgumentParser) -> None:
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--suite", choices=sorted(SUITES))
    which.add_argument(
        "--games",
        nargs="+",
        metavar="PATH",
        help="TextWorld games of your own: files, folders or glob patterns (the same protocol)",
    )
    p.add_argument(
        "--agent",
        action="append",
        help=f"{'|'.join(AGENTS)}; repeat or comma-separate; default robomemory",
    )
    p.add_argument("--attempts", type=int, default=2, help="lifelong attempts per task")
    p.add_argument(
        "--ablate",
        default="",
        help="comma list: critic,spatial,longterm,episodic,"
        "semantic,utility,temporal,condenser (a+b = both at once)",
    )
    p.add_argument("--model", choices=("local", "openai"), default="local")
    p.add_argument("--model-name", default=None, help="model id for --model openai")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint")
    p.add_argument("--episodes", type=int, default=None, help="first N tasks of the suite")
    p.add_argument("--max-steps", type=int, default=None, help="default: the suite's")
    p.add_argument(
        "--plan-len",
        type=int,
        default=None,
        metavar="N",
        help="the planner names N actions a plan (the critic checks the later ones); "
        "default: 1 to the config's max_plan_len, the model's choice",
    )
    p.add_argument(
        "--memory-scope",
        choices=("suite", "task"),
        default="suite",
        help="one robot memory for the suite, or one per task",
    )
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--no-progress", action="store_true")


def config_from_args(args: argparse.Namespace) -> AgentConfig:
    cfg = AgentConfig()
    cfg.model.provider = args.model
    if args.model_name:
        cfg.model.model = args.model_name
    if args.base_url:
        cfg.model.base_url = args.base_url
    plan_len = getattr(args, "plan_len", None)  # other benches share these arguments
    if plan_len is not None:
        try:
            cfg.plan_exactly(plan_len)
        except ValidationError as exc:
            raise SystemExit(f"--plan-len: {config_error_line(exc)}") from None
    return cfg


def parse_agents(values: list[str] | None) -> list[str]:
    agents = [a for v in values or ["robomemory"] for a in v.split(",") if a]
    bad = [a for a in agents if a not in AGENTS]
    if bad:
        raise SystemExit(f"unknown agent(s) {', '.join(bad)}; choose from {', '.join(AGENTS)}")
    return list(dict.fromkeys(agents))


def main(args: argparse.Namespace) -> int:
    suite = games_suite(args.games) if args.games else get_suite(args.suite)
    runner = SuiteRunner(
        suite,
        args.out,
        config=config_from_args(args),
        memory_scope=args.memory_scope,
        show_progress=not args.no_progress,
        max_steps=args.max_steps,
    )
    ablations = [a for a in args.ablate.split(",") if a]
    runner.run(parse_agents(args.agent), ablations, args.attempts, args.episodes)
    files = write_report(args.out, title=f"Suite {suite.name}")
    console = Console()
    console.print(files["summary.md"].read_text())
    console.print(f"report: {args.out}")
    return 0
