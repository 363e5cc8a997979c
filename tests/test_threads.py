"""The embedded model's thread count: chosen from the cores other work keeps busy now."""

from __future__ import annotations

import os

import pytest

from robomemory import local_model
from robomemory.local_model import busy_between, cpu_times, default_threads

# The first lines of a real /proc/stat (user nice system idle iowait irq softirq steal ...).
STAT = (
    "cpu  1000 50 300 8000 100 10 20 30 0 0\ncpu0 500 25 150 4000 50 5 10 15 0 0\nintr 12345 0 0\n"
)


def test_cpu_times_counts_idle_and_iowait_as_not_busy():
    busy, total = cpu_times(STAT)
    assert total == 1000 + 50 + 300 + 8000 + 100 + 10 + 20 + 30
    assert busy == total - 8000 - 100  # steal counts as busy: the core is not ours


def test_cpu_times_rejects_other_text():
    with pytest.raises(ValueError, match="not /proc/stat"):
        cpu_times("MemTotal: 100 kB\n")


def test_busy_between_is_cores_kept_busy():
    # 2 cores, 200 ticks elapsed in all, 150 of them busy: 1.5 cores busy.
    assert busy_between((1000, 5000), (1150, 5200), cpus=2) == pytest.approx(1.5)
    assert busy_between((1000, 5000), (1000, 5000), cpus=2) == 0.0  # no time passed


@pytest.fixture
def four_cores(monkeypatch):
    monkeypatch.delenv("ROBOMEMORY_THREADS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)


def test_every_core_when_other_work_leaves_them_free(four_cores):
    assert default_threads(busy=0.3) == 4
    assert default_threads(busy=1.9) == 4


def test_all_cores_but_one_when_others_are_busy(four_cores):
    assert default_threads(busy=2.0) == 3
    assert default_threads(busy=7.0) == 3


def test_the_cpu_is_sampled_not_the_lagging_load_average(four_cores, monkeypatch):
    # Just after another process ended: the 1-minute load is still high, the cores are idle.
    monkeypatch.setattr(os, "getloadavg", lambda: (3.5, 3.0, 2.0))
    monkeypatch.setattr(local_model, "busy_cores", lambda: 0.1)
    assert default_threads() == 4
    monkeypatch.setattr(local_model, "busy_cores", lambda: 3.2)
    assert default_threads() == 3


def test_without_proc_stat_the_load_average_decides(four_cores, monkeypatch):
    monkeypatch.setattr(local_model, "busy_cores", lambda: None)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    assert default_threads() == 4
    monkeypatch.setattr(os, "getloadavg", lambda: (2.5, 0.5, 0.5))
    assert default_threads() == 3


def test_the_environment_overrides(monkeypatch):
    monkeypatch.setenv("ROBOMEMORY_THREADS", "5")
    assert default_threads(busy=9.0) == 5
    monkeypatch.setenv("ROBOMEMORY_THREADS", "two")
    with pytest.raises(ValueError, match="ROBOMEMORY_THREADS must be a positive integer"):
        default_threads()


@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="needs Linux /proc/stat")
def test_busy_cores_reads_this_machine():
    busy = local_model.busy_cores(interval=0.05)
    assert busy is not None and 0.0 <= busy <= (os.cpu_count() or 1) + 1e-6
