"""Every third-party module the package imports is declared in pyproject.toml, and every
declared runtime dependency is imported (no dependency the code does not use)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0].strip().lower().replace("_", "-")


def _imported_modules() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "robomemory").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"robomemory", "__future__"}


def test_imports_and_declared_dependencies_match():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {_name(r) for r in project["dependencies"]}
    extras = {_name(r) for reqs in project["optional-dependencies"].values() for r in reqs}
    owners = packages_distributions()
    imported: dict[str, set[str]] = {}
    for module in _imported_modules():
        dists = {d.lower().replace("_", "-") for d in owners.get(module, [])}
        imported[module] = dists
    undeclared = {m: d for m, d in imported.items() if d and not d & (runtime | extras)}
    assert not undeclared, f"imported but not declared in pyproject.toml: {undeclared}"
    used = set().union(*imported.values())
    unused = runtime - used
    assert not unused, f"declared but never imported: {sorted(unused)}"
