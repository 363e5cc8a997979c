"""The benchmark runs committed under ``docs/results/``: which one is the newest of each suite.

The rule: ``docs/RESULTS.md``'s "Agent suites" table has one row a suite, and the row's last
cell links the suite's newest run folder (``[`NAME`](results/NAME/)``). Neither a folder's name
(it holds a commit hash) nor a file's time in a checkout orders runs, and git may be absent;
the table is the one place where the newest run is chosen, by whoever commits it.
``tests/test_docs_links.py`` checks that every folder it names holds episodes of its suite.
"""

from __future__ import annotations

import re
from pathlib import Path

import robomemory

ROW = re.compile(r"^\|\s*`(?P<suite>[^`]+)`\s*\|.*\]\(results/(?P<folder>[^)]+?)/?\)\s*\|\s*$")


def repo_root() -> Path:
    """The checkout this package was installed from (editable install)."""
    return Path(robomemory.__file__).resolve().parents[1]


def newest_runs(root: Path | None = None) -> dict[str, Path]:
    """Suite name -> its newest committed run folder, in the table's order ({} without docs)."""
    root = repo_root() if root is None else Path(root)
    results = root / "docs" / "RESULTS.md"
    if not results.is_file():
        return {}
    text = results.read_text(encoding="utf-8")
    if "## Agent suites" not in text:
        return {}
    table = text.split("## Agent suites", 1)[1].split("\n## ", 1)[0]
    runs: dict[str, Path] = {}
    for line in table.splitlines():
        m = ROW.match(line.strip())
        if m:
            runs[m["suite"]] = root / "docs" / "results" / m["folder"]
    return runs
