"""A new user's first hour on a stock machine (issue 68): ``bash scripts/setup.sh local`` installs
no CUDA package (pip's own report of what it would install, read here), and the README's first
command with ``--model fake`` wins its game with no model file anywhere (its seconds printed)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _reachable(host: str, port: int = 443) -> bool:
    try:
        with socket.create_connection((host, port), timeout=5):
            return True
    except OSError:
        return False


def _clean_clone(dest: Path) -> Path:
    """The files a clone has for setup (the package, its metadata, setup.sh), as tracked now."""
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("needs the git checkout: a clean clone is its tracked files")
    paths = ["pyproject.toml", "README.md", "scripts", "robomemory"]
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", *paths],
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    return dest


@pytest.mark.setup
def test_setup_local_would_install_cpu_torch_and_no_nvidia_package(tmp_path):
    if not _reachable("pypi.org"):
        pytest.skip("PyPI is not reachable: setup resolves the package's dependencies there")
    clone = _clean_clone(tmp_path / "clone")
    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.pop("ROBOMEMORY_TORCH_INDEX", None)  # the default: PyTorch's CPU index
    env["ROBOMEMORY_SETUP_REPORT"] = str(report)
    proc = subprocess.run(
        ["bash", str(clone / "scripts" / "setup.sh"), "local"],
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    installs = {
        item["metadata"]["name"].lower().replace("_", "-"): item["metadata"]["version"]
        for item in json.loads(report.read_text())["install"]
    }
    cuda = sorted(n for n in installs if n.startswith("nvidia-") or n == "triton")
    assert not cuda, f"setup.sh local would install CUDA packages: {cuda}"
    assert installs["torch"].endswith("+cpu"), installs["torch"]
    assert {"robomemory", "textworld", "jericho", "langgraph"} <= set(installs)  # local, worlds
    site = list((clone / ".venv").glob("lib/python*/site-packages"))
    assert site and not list(site[0].glob("torch*")), "the report mode installed torch"


def _readme_first_command() -> list[str]:
    """The README's first command, after its setup: ``robomemory run ...``."""
    text = (ROOT / "README.md").read_text()
    line = next(x for x in text.splitlines() if x.startswith("bash scripts/setup.sh local && "))
    argv = shlex.split(line.split("&&", 1)[1])
    assert argv[0] == ".venv/bin/robomemory", argv
    return [sys.executable, "-m", "robomemory.cli", *argv[1:]]


@pytest.mark.slow
def test_the_readmes_first_command_with_the_fake_model_wins_without_weights(
    tmp_path,
):
    pytest.importorskip("textworld", reason="needs the worlds extra")
    models, home = tmp_path / "models", tmp_path / "home"
    env = os.environ | {
        "HOME": str(tmp_path),
        "ROBOMEMORY_MODEL_CACHE": str(models),  # empty: no model file to be found
        "ROBOMEMORY_HOME": str(home),
    }
    argv = [*_readme_first_command(), "--model", "fake", "--thread", "first"]
    start = time.monotonic()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    seconds = time.monotonic() - start
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    trace = json.loads((home / "runs" / "first.json").read_text())
    assert trace["end_reason"] == "won", trace["end_reason"]
    assert not list(tmp_path.rglob("*.gguf")), "a model file was made"
    print(f"the README's first command with --model fake: {seconds:.1f} s")  # a figure, no bar
