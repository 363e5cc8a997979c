"""``--json`` of every command that prints a table: the same rows as JSON on stdout.

With ``--json`` stdout holds one JSON document and nothing else; what a person reads besides
(progress, "wrote ...") goes to stderr (:func:`human_console`). A bench that already wrote its
figures to a file with ``--json PATH`` keeps that: ``--json`` alone prints them instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

STDOUT = "-"
HELP = "print the table's rows as JSON on stdout instead of the table"


def add_json_flag(parser: argparse.ArgumentParser, *, to_file: bool = False) -> None:
    """``--json``; ``to_file``: also ``--json PATH``, the figures written to PATH."""
    if to_file:
        parser.add_argument(
            "--json",
            nargs="?",
            const=STDOUT,
            default=None,
            metavar="PATH",
            help=f"{HELP}; with PATH, write them there and print the table",
        )
    else:
        parser.add_argument("--json", action="store_true", help=HELP)


def wants_json(args: argparse.Namespace) -> bool:
    """Whether stdout is to carry JSON instead of the table."""
    value = getattr(args, "json", None)
    return value is True or value == STDOUT


def json_file(args: argparse.Namespace) -> Path | None:
    """The file ``--json PATH`` names, or None."""
    value = getattr(args, "json", None)
    if value is None or isinstance(value, bool) or value == STDOUT:
        return None
    return Path(value)


def human_console(args: argparse.Namespace) -> Console:
    """The console of what a person reads: stderr when stdout carries JSON."""
    return Console(stderr=wants_json(args))


def to_json(data: Any) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False, default=str)


def print_json(data: Any) -> None:
    """``data`` as one JSON document on stdout."""
    sys.stdout.write(to_json(data) + "\n")
    sys.stdout.flush()


def markdown_rows(text: str) -> list[dict[str, str]]:
    """The rows of the first Markdown table in ``text``, each a dict by column name."""
    lines = [x.strip() for x in text.splitlines()]
    start = next((i for i, x in enumerate(lines) if x.startswith("|")), None)
    if start is None:
        return []
    table: list[list[str]] = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        table.append([cell.strip() for cell in line.strip("|").split("|")])
    header, body = table[0], [r for r in table[1:] if not set("".join(r)) <= set("-: ")]
    return [dict(zip(header, row, strict=False)) for row in body]
