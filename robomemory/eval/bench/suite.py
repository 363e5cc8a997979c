"""`robomemory bench suite`: SR/GC of agents and ablations on a suite, resumable, with reports.

Example::

    robomemory bench suite --suite tiny --agent robomemory --agent react --attempts 2 \\
        --ablate critic,spatial --model local --out runs/tiny

Instead of a named suite, pick tasks of any world (they combine into one suite, ``picked``)::

    robomemory bench suite --sw boil:0-2 melt --sw-simplifications easy \\
        --twx coin:0-4 mapreader:3 --twx-params numLocations=8,includeDoors=1 \\
        --tw tw-treasure_hunter-goal:21-23 --tw-settings="--level 15" --games my/*.z8 ...

``--split test`` runs a named suite's test split (``NAME-test``: other seeds, the worlds' test
variations; eval/suites.py), its traces sealed (eval/report.py); the default, dev, is the suite
the rules were written from.

Or list them in a suite file (``--suite-file PATH.yaml``; eval/picks.py). ``--games PATH...``
alone runs TextWorld games a user brings (files, folders or glob patterns), the suite ``games``.
``--ablate`` adds one RoboMemory run per listed component (``a+b`` removes both at once) next
to the full system; baselines ignore it. Re-running the same command resumes. Each task's step
limit is at least twice its oracle's (free mode: the world's oracle is not read).

``--actions free`` plays TextWorldExpress and ScienceWorld tasks reading only what a player sees
(the texts, the score, the game's end: executors/perceived.py), TALES' terms; ``listed`` (the
default, or the suite file's ``actions``) gives the world's valid actions as candidates.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pydantic import ValidationError
from rich.console import Console

from robomemory.commands.json_out import add_json_flag, print_json, wants_json
from robomemory.config import AgentConfig, config_error_line
from robomemory.eval.picks import check_worlds, load_suite_file, picked_suite
from robomemory.eval.report import write_report
from robomemory.eval.runner import AGENTS, SuiteRunner
from robomemory.eval.suites import SPLITS, SUITES, TW_CHALLENGES, Suite, get_suite
from robomemory.executors.perceived import ACTIONS_MODES

PICKS = ("games", "sw", "twx", "tw")
# options of a pick: (option, its pick)
PICK_OPTIONS = (
    ("sw_simplifications", "sw"),
    ("twx_fold", "twx"),
    ("twx_params", "twx"),
    ("tw_settings", "tw"),
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    which = p.add_argument_group(
        "tasks", "one of --suite, --suite-file, or picks of any world (--sw, --twx, --tw, --games)"
    )
    which.add_argument("--suite", choices=sorted(SUITES), help="a named suite")
    which.add_argument(
        "--split",
        choices=SPLITS,
        default=None,
        help="with --suite: dev (the default; the rules were written from its traces; TALES' "
        "suites: test only) or test "
        "(NAME-test: other seeds and variations, traces sealed in OUT/sealed/)",
    )
    which.add_argument(
        "--suite-file",
        type=Path,
        metavar="PATH",
        help="a suite of your own (YAML: name, description, max_steps, tasks of world/id/params)",
    )
    which.add_argument(
        "--games",
        nargs="+",
        action="extend",
        metavar="PATH",
        help="TextWorld games of your own: files, folders or glob patterns (the same protocol)",
    )
    which.add_argument(
        "--sw",
        nargs="+",
        action="extend",
        metavar="TASK[:VARIATIONS]",
        help="ScienceWorld tasks, e.g. boil:0-2 melt:0,5 (default variation 0)",
    )
    which.add_argument(
        "--sw-simplifications",
        default=None,
        metavar="easy|none|LIST",
        help="ScienceWorld simplifications of --sw: easy (default), none, or a comma list of "
        "teleportAction,openDoors,openContainers,selfWateringFlowerPots,noElectricalAction",
    )
    which.add_argument(
        "--twx",
        nargs="+",
        action="extend",
        metavar="GAME[:SEEDS]",
        help="TextWorldExpress games, e.g. coin:0-4 mapreader:7 (default seed 0)",
    )
    which.add_argument(
        "--twx-fold", choices=("train", "dev", "test"), default=None, help="default train"
    )
    which.add_argument(
        "--twx-params",
        default=None,
        metavar="K=V,...",
        help="TextWorldExpress gameParams of every --twx game, e.g. numLocations=8,includeDoors=1 "
        "(default: the game's own; cookingworld and twc: the named suites')",
    )
    which.add_argument(
        "--tw",
        nargs="+",
        action="extend",
        metavar="CHALLENGE[:SEEDS]",
        help=f"TextWorld games made by tw-make ({', '.join(TW_CHALLENGES)}), e.g. "
        "tw-coin_collector-goal:1-3",
    )
    which.add_argument(
        "--tw-settings",
        default=None,
        metavar="SETTINGS",
        help='tw-make settings of every --tw challenge, e.g. --tw-settings="--level 15"',
    )
    p.add_argument(
        "--agent",
        action="append",
        help=f"{'|'.join(AGENTS)}; repeat or comma-separate; default robomemory",
    )
    add_actions_argument(p)
    p.add_argument("--attempts", type=int, default=2, help="lifelong attempts per task")
    p.add_argument(
        "--ablate",
        default="",
        help="comma list: critic,spatial,longterm,episodic,"
        "semantic,utility,temporal,condenser (a+b = both at once)",
    )
    p.add_argument(
        "--model",
        choices=("local", "openai", "fake"),
        default="local",
        help="local: the embedded model; openai: an OpenAI-compatible endpoint; fake: no "
        "weights, the first candidate every step (a dry run)",
    )
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
    add_json_flag(p)


def add_actions_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--actions",
        choices=ACTIONS_MODES,
        default=None,
        help="listed: the world's valid actions are the candidates (default: the suite's); "
        "free: only what a player sees, the texts, score and game's end (TALES' terms; "
        "TextWorldExpress and ScienceWorld)",
    )


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


def suite_from_args(args: argparse.Namespace) -> Suite:
    """The suite the arguments choose: a named one, a suite file, or the picked tasks (these
    two checked against their worlds first). ValueError: one line."""
    picked = [f"--{name}" for name in PICKS if getattr(args, name)]
    chosen = [*(["--suite"] if args.suite else []), *(["--suite-file"] if args.suite_file else [])]
    if len(chosen) + bool(picked) != 1:
        given = ", ".join(chosen + picked) or "none"
        raise ValueError(
            "choose one of --suite NAME, --suite-file PATH, or tasks of any world "
            f"(--sw, --twx, --tw, --games); given: {given}"
        )
    for option, pick in PICK_OPTIONS:
        if getattr(args, option) is not None and not getattr(args, pick):
            raise ValueError(f"--{option.replace('_', '-')} goes with --{pick}")
    if args.split is not None and not args.suite:
        raise ValueError("--split goes with --suite (a suite file says split: test itself)")
    actions = getattr(args, "actions", None)
    if args.suite:
        suite = get_suite(args.suite, args.split)
        return suite.with_actions(actions) if actions else suite
    if args.suite_file:
        suite = load_suite_file(args.suite_file)
    else:
        suite = picked_suite(
            games=args.games or (),
            sw=args.sw or (),
            twx=args.twx or (),
            tw=args.tw or (),
            sw_simplifications=args.sw_simplifications or "easy",
            twx_fold=args.twx_fold or "train",
            twx_params=args.twx_params,
            tw_settings=args.tw_settings or "",
            max_steps=args.max_steps or Suite.model_fields["max_steps"].default,
        )
    if actions:
        suite = suite.with_actions(actions)
    check_worlds(suite)
    return suite


def main(args: argparse.Namespace) -> int:
    suite = suite_from_args(args)
    runner = SuiteRunner(
        suite,
        args.out,
        config=config_from_args(args),
        memory_scope=args.memory_scope,
        show_progress=not (args.no_progress or wants_json(args)),
        max_steps=args.max_steps,
    )
    ablations = [a for a in args.ablate.split(",") if a]
    runner.run(parse_agents(args.agent), ablations, args.attempts, args.episodes)
    files = write_report(args.out, title=f"Suite {suite.name}")
    if wants_json(args):  # summary.json: what summary.md's tables are drawn from
        print_json(json.loads(files["summary.json"].read_text()))
        return 0
    console = Console()
    console.print(files["summary.md"].read_text())
    console.print(f"report: {args.out}")
    return 0
