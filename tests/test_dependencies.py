"""Every third-party module the package imports is declared in pyproject.toml, and every
declared runtime dependency is imported (no dependency the code does not use)."""

from __future__ import annotations

import ast
import re
import subprocess
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


WORLDS = {"textworld", "jericho", "scienceworld", "textworld-express"}


def test_worlds_are_an_extra_and_setup_installs_them():
    """The core installs no world and no package kept only for its logging; the `worlds` extra
    holds the four worlds, and setup.sh's `local` and `all` targets install it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {_name(r) for r in project["dependencies"]}
    assert not runtime & (WORLDS | {"transformers", "langchain-qdrant"})
    assert {_name(r) for r in project["optional-dependencies"]["worlds"]} == WORLDS
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    for target in ("local", "all"):
        line = next(x for x in setup.splitlines() if x.startswith(f'[ "$extras" = "{target}" ]'))
        assert "worlds" in line.split("extras=")[1].strip('"').split(","), line


BLOCKED = """
import sys
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("textworld", "jericho", "transformers"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Blocker())
import robomemory.cli, robomemory.commands.run, robomemory.factory, robomemory.graphs.agent
import robomemory.memory.system, robomemory.commands.inspect, robomemory.commands.show
from robomemory.cli import main
sys.exit(main(["bench", "kg-growth", "--embedder", "fake"]))
"""


def test_the_core_imports_without_the_worlds_and_a_world_command_names_the_extra():
    proc = subprocess.run(
        [sys.executable, "-c", BLOCKED], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines() == [
        "robomemory: error: textworld is not installed; it comes with the worlds extra: "
        "pip install '.[worlds]'"
    ]
