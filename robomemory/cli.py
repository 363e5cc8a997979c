"""The `robomemory` command: run | show | inspect | bench NAME.

Each subcommand lives in its own module exposing ``add_arguments(parser)`` and
``main(args) -> int``; modules are imported only when their command runs.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from typing import NoReturn

from robomemory import __version__
from robomemory.errors import missing_extra, print_error

COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("robomemory.commands.run", "play a task with the RoboMemory agent"),
    "show": ("robomemory.commands.show", "look at a run step by step (console or HTML page)"),
    "inspect": ("robomemory.commands.inspect", "print a robot's memories"),
    "native": ("robomemory.commands.native", "the embedded model's runtime; build it for this CPU"),
}

# One module per `robomemory bench NAME`, each in robomemory/eval/bench/.
BENCH = "robomemory.eval.bench"
BENCHES: dict[str, tuple[str, str]] = {
    "memory-latency": (f"{BENCH}.memory_latency", "memory update+retrieve wall time"),
    "kg-growth": (f"{BENCH}.kg_growth", "spatial KG size vs resolver load per step"),
    "memory-scale": (f"{BENCH}.memory_scale", "per-step memory costs as memories grow"),
    "pi0-client": (f"{BENCH}.pi0_client", "π0 client round-trip overhead"),
    "sim-aloha": (f"{BENCH}.sim_aloha", "π0 skill loop on a MuJoCo ALOHA arm (sim extra)"),
    "local-model": (f"{BENCH}.local_model_bench", "prompt/generated tokens/s of each runtime"),
    "summary-claims": (
        f"{BENCH}.summary_claims",
        "share of step summaries claiming an action not taken",
    ),
    "suite": (f"{BENCH}.suite", "SR/GC of agents and ablations on a suite"),
    "table": (f"{BENCH}.table", "the results table: suites x agents, one run at one commit"),
    "fleet": (f"{BENCH}.fleet", "robot B's first attempt with robot A's shared memory"),
    "spatial-accuracy": (f"{BENCH}.spatial_accuracy", "spatial KG accuracy vs ground truth"),
    "mem0-compare": (f"{BENCH}.mem0_compare", "long-term add/search vs Mem0 (extra mem0)"),
}


class Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as the one error line, exit status 2."""

    def error(self, message: str) -> NoReturn:
        print_error(f"{message} (see {self.prog} --help)")
        raise SystemExit(2)


def _load(module: str):
    """A command's module; one needing an extra that is not installed: the error line, exit 1."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        line = missing_extra(exc)
        if line is None:
            raise
        print_error(line)
        raise SystemExit(1) from None


def build_parser(argv: list[str]) -> tuple[argparse.ArgumentParser, dict[str, object]]:
    parser = Parser(prog="robomemory", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    handlers: dict[str, object] = {}
    wanted = argv[0] if argv else None
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text)
        if name == wanted:
            mod = _load(module)
            mod.add_arguments(p)
            handlers[name] = mod
    bench = sub.add_parser("bench", help="benchmarks that print figures")
    bench_sub = bench.add_subparsers(dest="bench", required=True)
    wanted_bench = argv[1] if wanted == "bench" and len(argv) > 1 else None
    for name, (module, help_text) in BENCHES.items():
        p = bench_sub.add_parser(name, help=help_text)
        if name == wanted_bench:
            mod = _load(module)
            mod.add_arguments(p)
            handlers[f"bench:{name}"] = mod
    return parser, handlers


def not_utf8(argv: list[str]) -> str | None:
    """One line naming the first argument that is no UTF-8 text, or None when all are.

    Python gives undecodable bytes of the command line as lone surrogates, which would fail
    far from the shell (a tokenizer, a database); they are refused before anything runs."""
    for i, arg in enumerate(argv):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError as exc:
            option, _, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
            if not option and i > 0 and argv[i - 1].startswith("-"):
                option = argv[i - 1]
            name = f"argument {option}" if option else f"argument {i + 1}"
            byte = arg[exc.start].encode("utf-8", "surrogateescape")
            return f"{name} is not valid UTF-8 (byte 0x{byte.hex()}); give text in UTF-8"
    return None


def main(argv: list[str] | None = None) -> int:
    # no third-party progress bars (transformers' "Loading weights") over our own displays
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    argv = list(sys.argv[1:] if argv is None else argv)
    bad = not_utf8(argv)
    if bad is not None:
        print_error(bad)
        return 2
    flags = [a for a in argv if a in ("-v", "--verbose")]
    rest = [a for a in argv if a not in flags]
    parser, handlers = build_parser(rest)
    args = parser.parse_args(flags + rest)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    key = f"bench:{args.bench}" if args.command == "bench" else args.command
    try:
        if args.command == "bench" and getattr(args, "out", None) is not None:
            from robomemory.diskspace import check_free_space

            check_free_space(args.out, "the report folder")  # before a model or store opens
        return int(handlers[key].main(args) or 0)
    except SystemExit as exc:  # a command's own message: bad input
        if not isinstance(exc.code, str):
            raise
        print_error(exc.code)
        return 2
    except Exception as exc:
        if args.verbose:  # -v shows the traceback
            raise
        return report(exc)


def report(exc: Exception) -> int:
    """Print ``exc`` as the one error line; its exit status: 2 bad input, 1 a failure (3 the
    model unavailable: a re-run resumes)."""
    extra = missing_extra(exc)
    if extra is not None:  # a world, the simulator, ...: installed with an extra
        print_error(extra)
        return 1
    unavailable = _model_unavailable(exc)
    if unavailable is not None:  # the endpoint and why (a bench's re-run resumes)
        print_error(f"{exc}; stopped")
        return unavailable.exit_status
    if is_bad_input(exc):
        print_error(exc)
        return 2
    print_error(f"{type(exc).__name__}: {exc} (robomemory -v ... shows the traceback)")
    return 1


BAD_INPUT: tuple[type[Exception], ...] = (
    ValueError,  # unreadable text and JSON too, a configuration refused
    FileNotFoundError,
    FileExistsError,  # a file where a folder is to be made
    IsADirectoryError,
    NotADirectoryError,
)


def is_bad_input(exc: Exception) -> bool:
    """Whether ``exc`` says the input was bad (a file, a value); YAML's errors are looked up,
    not imported."""
    yaml = sys.modules.get("yaml")
    return isinstance(exc, BAD_INPUT) or (yaml is not None and isinstance(exc, yaml.YAMLError))


def _model_unavailable(exc: Exception):
    """``exc`` as a ModelUnavailableError (the model cannot answer), or None; its module is
    looked up, not imported: a command that never loaded it cannot have raised one."""
    structured = sys.modules.get("robomemory.structured")
    if structured is not None and isinstance(exc, structured.ModelUnavailableError):
        return exc
    return None


if __name__ == "__main__":
    raise SystemExit(main())
