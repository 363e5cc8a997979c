"""The run page (`robomemory show --html`) as a browser draws it: headless Chromium renders a
played run to a screenshot. Needs Debian's chromium (`apt-get install -y chromium`); marked
reliability, so the default run skips it (see README: Tests). The model is a FAKE."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from robomemory.cli import main as cli_main
from robomemory.commands.trace import trace_payload, write_trace
from robomemory.executors.envs.textworld import (
    TextWorldExecutor,
    bundled_game,
    walkthrough_actions,
)
from robomemory.testing import PlanScript, scripted_llm

pytestmark = pytest.mark.reliability
Image = pytest.importorskip("PIL.Image", reason="the screenshot check needs pillow")
WIDTH, HEIGHT = 1200, 1600


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    pytest.skip("no chromium: apt-get install -y chromium")


def _headless(exe: str, *args: str) -> subprocess.CompletedProcess:
    base = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    return subprocess.run([*base, *args], capture_output=True, text=True, timeout=120, check=False)


def test_headless_chromium_draws_the_run_page(agent_config, make_agent, tmp_path, capsys):
    exe = _chromium()
    game = bundled_game("cooking_1room")
    steps = iter(walkthrough_actions(game))
    llm = scripted_llm({"Plan": PlanScript(lambda m: [(a.verb, a.args) for a in [next(steps)]])})
    agent_config.max_steps = 3
    agent = make_agent(agent_config, TextWorldExecutor(game), llm)
    trace = write_trace(tmp_path / "run.json", trace_payload(agent.run(thread_id="shot")))
    page = tmp_path / "page.html"
    assert cli_main(["show", str(trace), "--html", str(page)]) == 0
    capsys.readouterr()

    dom = _headless(exe, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "examine(cookbook)" in dom.stdout and dom.stdout.count('class="step') >= 3

    shot = tmp_path / "page.png"
    size = f"--window-size={WIDTH},{HEIGHT}"
    drawn = _headless(exe, f"--screenshot={shot}", size, page.as_uri())
    assert drawn.returncode == 0 and shot.is_file(), drawn.stderr[-2000:]
    with Image.open(shot) as img:
        assert img.size == (WIDTH, HEIGHT)
        rgb = img.convert("RGB")
        colours = rgb.getcolors(maxcolors=1 << 20) or []
        # a drawn page: text, the score chart, step boxes; not one blank colour
        assert len(colours) > 50, len(colours)
        background = max(colours)[1]
        top = rgb.crop((0, 0, WIDTH, HEIGHT // 4)).getcolors(maxcolors=1 << 20) or []
        assert sum(n for n, colour in top if colour != background) > 2_000  # the header drawn
