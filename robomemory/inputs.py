"""A user's files and folders, read with bounds: each problem is a one-line ValueError that
names the path (the command line prints it and exits 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

MAX_TEXT_BYTES = 1024 * 1024  # a suite file, a waypoint map: hand-written, small


def read_text(path: Path, max_bytes: int = MAX_TEXT_BYTES) -> str:
    """``path``'s UTF-8 text; missing, a folder, over ``max_bytes`` or not UTF-8: ValueError."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise ValueError(f"{path} is not a file")
        if size > max_bytes:
            raise ValueError(f"{path} is {size:,} bytes; at most {max_bytes:,} are read")
        data = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = data[exc.start : exc.start + 1].hex()
        raise ValueError(
            f"{path} is not UTF-8 text (byte 0x{byte} at {exc.start}): is it binary?"
        ) from None


class _NoAliases(yaml.SafeLoader):
    """YAML without anchors' aliases: a hand-written file needs none, and aliases of aliases
    (a "billion laughs") would build a structure exponentially larger than the file."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "aliases (*name) are not allowed here", event.start_mark
            )
        return super().compose_node(parent, index)


def load_yaml(path: Path, max_bytes: int = MAX_TEXT_BYTES) -> Any:
    """``path``'s YAML (JSON is YAML) with no aliases; a problem names the file and line."""
    text = read_text(path, max_bytes)
    try:
        return yaml.load(text, Loader=_NoAliases)  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ValueError(f"{path}: not YAML: {problem}{where}") from None


def out_folder(path: Path) -> Path:
    """``path`` as a folder to write into: missing is fine (it is made), a file is not."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{path} is not a folder")
    return path
