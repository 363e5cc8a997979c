"""The data folder's one name on the command line: ``--home DIR``, the folder that
``ROBOMEMORY_HOME`` names (``DIR/memory``, ``DIR/runs``). ``--data DIR``, its older name, is
still taken, with a one-line note on stderr."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from robomemory.config import default_data_dir

DEPRECATED = "--data"


class _Deprecated(argparse.Action):
    """An option's older name: its value is kept, and a note says the new name."""

    def __init__(self, *args: Any, note: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.note = note

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        print(f"robomemory: note: {self.note}", file=sys.stderr, flush=True)
        setattr(namespace, self.dest, values)


def add_home_argument(
    parser: argparse.ArgumentParser, help: str, *, data_dest: str = "home", data_note: str = ""
) -> None:
    """``--home DIR`` and its deprecated alias ``--data`` (hidden). ``data_dest``: where
    ``--data`` puts its value when it named another folder (inspect's: the memory folder)."""
    parser.add_argument("--home", type=Path, default=None, metavar="DIR", help=help)
    note = data_note or f"{DEPRECATED} is deprecated; use --home DIR (as ROBOMEMORY_HOME)"
    if data_dest != "home":
        parser.set_defaults(**{data_dest: None})
    parser.add_argument(
        DEPRECATED,
        type=Path,
        dest=data_dest,
        metavar="DIR",
        action=_Deprecated,
        note=note,
        help=argparse.SUPPRESS,
    )


def home_of(args: argparse.Namespace) -> Path:
    """The data folder: ``--home``, else ``$ROBOMEMORY_HOME``, else ``~/.robomemory``."""
    return Path(args.home) if args.home else default_data_dir()
