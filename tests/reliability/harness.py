"""The kill -9 harness: numbered write points, store snapshots, and their differences.

A *write point* is a call of a write method of a memory store, the change history or the
checkpointer (found by name on the classes of ``robomemory.memory.stores``, MemoryHistory and
the checkpoint savers, so a new store class is covered without editing this file). A worker
started with ``kill_at=K`` sends itself SIGKILL just before write point K: the process dies
with that write, and every later one, undone.

Snapshots read every store through public APIs (LongTermMemory.items, SpatialMemory.triples,
MemoryHistory.changes / episode_report) and drop what differs between two faithful runs
(row ids, timestamps).
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import re
import signal
import threading
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

WRITE_METHOD = re.compile(
    r"^(put|put_writes|delete|delete_thread|modify|apply|record|finish_episode|journal_put|"
    r"upsert|add|update|set|write|save|remove|invalidate|insert|commit)(_[a-z_]+)?$"
)
READ_ONLY = frozenset({"update_stats"})


def write_classes() -> list[type]:
    """Classes whose write methods are kill points."""
    import robomemory.memory.stores as stores
    from robomemory.memory.history import MemoryHistory

    classes: list[type] = [MemoryHistory]
    for info in pkgutil.iter_modules(stores.__path__):
        try:
            module = importlib.import_module(f"{stores.__name__}.{info.name}")
        except ImportError:  # an optional backend (neo4j) not installed
            continue
        classes += [
            c
            for _, c in inspect.getmembers(module, inspect.isclass)
            if c.__module__ == module.__name__ and not issubclass(c, BaseException)
        ]
    from langgraph.checkpoint.sqlite import SqliteSaver

    classes.append(SqliteSaver)
    try:
        from langgraph.checkpoint.postgres import PostgresSaver

        classes.append(PostgresSaver)
    except ImportError:
        pass
    return classes


class KillPoints:
    """Counts write calls; logs them; SIGKILLs this process before call number ``kill_at``."""

    def __init__(self, kill_at: int | None, log: Path | None):
        self.kill_at = kill_at
        self.count = 0
        self._lock = threading.Lock()
        self._log = open(log, "a", buffering=1) if log else None  # noqa: SIM115 (process-long)

    def install(self, classes: Iterable[type]) -> None:
        for cls in classes:
            for name, fn in list(vars(cls).items()):
                if callable(fn) and WRITE_METHOD.match(name) and name not in READ_ONLY:
                    setattr(cls, name, self._wrap(cls.__name__, name, fn))

    def _wrap(self, owner: str, name: str, fn: Any):
        points = self

        def write_point(*args: Any, **kwargs: Any) -> Any:
            with points._lock:
                points.count += 1
                number = points.count
                if points._log is not None:
                    points._log.write(f"{number}\t{owner}.{name}\n")
            if number == points.kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return fn(*args, **kwargs)

        write_point.__name__ = name
        return write_point


def snapshot(memory: Any, episodes: list[str]) -> dict[str, list]:
    """Every store of one robot as comparable rows."""
    vectors = [
        [m.kind, i.id, i.text, i.level, round(i.q, 6), i.visits]
        for m in memory.longterm()
        for i in m.items()
    ]
    edges = [
        [t.subject, t.relation, t.object, t.valid_from_step, t.invalidated_at_step, t.episode_id]
        for t in (memory.spatial.triples(include_invalid=True) if memory.spatial else [])
    ]
    history = [
        [
            r["collection"],
            r["item_id"],
            r["event"],
            r["old_text"],
            r["new_text"],
            _round(r["q_old"]),
            _round(r["q_new"]),
            r["episode_id"],
        ]
        for r in memory.history.changes()
    ]
    reports = [[e, memory.history.episode_report(e) is not None] for e in episodes]
    return {
        "vector items": vectors,
        "kg edges": edges,
        "history rows": history,
        "consolidated": reports,
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def differences(reference: dict[str, list], got: dict[str, list]) -> dict[str, dict]:
    """Per store: rows lost (in the reference only) and duplicated/extra (in ``got`` only)."""
    out: dict[str, dict] = {}
    for store, rows in reference.items():
        want = Counter(map(repr, rows))
        have = Counter(map(repr, got.get(store, [])))
        lost, extra = want - have, have - want
        if lost or extra:
            out[store] = {"lost": sorted(lost.elements()), "extra": sorted(extra.elements())}
    return out


def spread(total: int, n: int) -> list[int]:
    """``n`` write points evenly spread over ``1..total``."""
    if total <= n:
        return list(range(1, total + 1))
    return sorted({1 + round(i * (total - 1) / (n - 1)) for i in range(n)})
