"""Fault 1: a nearly full disk on a fresh robot once ended the process by SIGBUS with no message
(the stores map their files). A command that writes a data folder checks its disk's free space
first: below ROBOMEMORY_MIN_FREE_MB (200 by default) it is one line on stderr, exit status 2,
and nothing written. The disk is the test's: shutil.disk_usage is swapped for a fake."""

from __future__ import annotations

import shutil
from collections import namedtuple

import pytest

from robomemory.cli import main
from robomemory.diskspace import MB, check_free_space, min_free_bytes

Usage = namedtuple("Usage", "total used free")


@pytest.fixture
def free_mb(monkeypatch):
    """Set the free space every disk reports, in MB."""

    def set_free(mb: float) -> None:
        usage = Usage(100_000 * MB, 0, int(mb * MB))
        monkeypatch.setattr(shutil, "disk_usage", lambda path: usage)

    monkeypatch.delenv("ROBOMEMORY_MIN_FREE_MB", raising=False)
    return set_free


def one_error_line(argv: list[str], capsys) -> str:
    capsys.readouterr()
    code = main(argv)
    said = capsys.readouterr()
    lines = said.err.strip().splitlines()
    assert code == 2, said
    assert len(lines) == 1 and lines[0].startswith("robomemory: error: "), said
    return lines[0]


def test_run_on_a_nearly_full_disk_is_one_line_and_writes_nothing(tmp_path, free_mb, capsys):
    free_mb(50)
    home = tmp_path / "fresh-robot"
    argv = ["run", "--model", "fake", "--game", "cooking_1room", "--home", str(home)]
    line = one_error_line(argv, capsys)
    assert "only 50 MB free" in line and "200 MB" in line and str(home) in line, line
    assert "ROBOMEMORY_MIN_FREE_MB" in line
    assert not home.exists()


def test_a_bench_checks_the_disk_of_its_report_folder(tmp_path, free_mb, capsys):
    free_mb(10)
    out = tmp_path / "report"
    line = one_error_line(
        ["bench", "suite", "--model", "fake", "--suite", "tiny", "--out", str(out)], capsys
    )
    assert "only 10 MB free" in line and "report folder" in line, line
    assert not out.exists()


def test_the_threshold_is_set_by_the_environment(tmp_path, free_mb, monkeypatch):
    free_mb(150)
    with pytest.raises(ValueError, match="only 150 MB free"):
        check_free_space(tmp_path / "not" / "made" / "yet")
    monkeypatch.setenv("ROBOMEMORY_MIN_FREE_MB", "100")
    check_free_space(tmp_path)  # 150 MB is enough now
    monkeypatch.setenv("ROBOMEMORY_MIN_FREE_MB", "0")
    free_mb(0)
    check_free_space(tmp_path)  # 0: no check
    for bad in ("lots", "-1", "nan"):
        monkeypatch.setenv("ROBOMEMORY_MIN_FREE_MB", bad)
        with pytest.raises(ValueError, match="ROBOMEMORY_MIN_FREE_MB must be"):
            min_free_bytes()
