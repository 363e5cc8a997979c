"""The documentation's front door stays small and every relative link in it resolves.

README.md and docs/**/*.md: every markdown link to a relative path names a file or folder that
exists; README.md stays at most 150 lines with at most 3 commit hashes; docs/RESULTS.md names
at most 60; docs/results/ keeps at most 25 run folders, and the run RESULTS.md names as each
suite's newest holds episodes of that suite. Text only, no model: well under a second.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from robomemory.eval.committed import newest_runs

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# [text](target) or [text](target "title"), not an image; text may hold one level of [...]
LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CODE = re.compile(r"`[^`\n]*`")
# a commit hash as these docs write it: a 7-hex-digit word with a digit and a letter in it
HASH = re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7}\b")


def relative_links(path: Path) -> list[str]:
    text = CODE.sub("", FENCE.sub("", path.read_text(encoding="utf-8")))
    targets = []
    for target in LINK.findall(text):
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith(("#", "/")):
            continue  # a URL, mailto:, an anchor in the same page, or a site path
        targets.append(target.split("#", 1)[0].split("?", 1)[0])
    return [t for t in targets if t]


def test_the_link_pattern_finds_links_and_skips_code():
    sample = '[a](x.md) [`b`](dir/ "t") ![img](p.png) `[c](no.md)` [d](https://e) [f](#g)'
    assert LINK.findall(CODE.sub("", sample)) == ["x.md", "dir/", "https://e", "#g"]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path):
    missing = [t for t in relative_links(path) if not (path.parent / t).exists()]
    assert not missing, f"{path.relative_to(ROOT)} links to missing paths: {missing}"


def test_the_readme_is_a_front_door():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    assert len(HASH.findall(text)) <= 3, HASH.findall(text)
    assert "## Two commands" in text


def test_results_names_few_commits():
    text = (ROOT / "docs" / "RESULTS.md").read_text(encoding="utf-8")
    assert len(HASH.findall(text)) <= 60


def test_docs_results_keeps_at_most_25_run_folders():
    folders = [p.name for p in (ROOT / "docs" / "results").iterdir() if p.is_dir()]
    assert len(folders) <= 25, sorted(folders)


def test_each_suites_newest_run_holds_that_suites_episodes():
    runs = newest_runs(ROOT)
    assert {"tiny", "tw-cooking-easy", "tw-cooking-medium", "tw-cooking-hard", "sw-easy"} <= set(
        runs
    )
    for suite, folder in runs.items():
        episodes = sorted((folder / "episodes").glob("*.json"))
        assert episodes, f"{folder} has no episodes"
        assert {json.loads(p.read_text())["suite"] for p in episodes} == {suite}, folder


@pytest.mark.parametrize("name", ["README.md", "docs/RESULTS.md"])
def test_the_results_table_is_the_run_it_cites(name):
    """Each results table in the README and RESULTS.md is ``bench table``'s rendering of the
    committed run its marker cites, unchanged (nobody edits a figure by hand)."""
    from robomemory.eval.bench.table import cited_blocks, docs_block

    doc = ROOT / name
    blocks = cited_blocks(doc.read_text(encoding="utf-8"))
    assert blocks, f"{name} has no table written by bench table"
    for folder, block in blocks:
        assert (ROOT / folder / "table.json").is_file(), f"{name} cites {folder}: no run there"
        again = docs_block(ROOT / folder, ROOT, doc)
        assert block == again, f"{name}'s table differs from {folder}"
