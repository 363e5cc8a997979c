"""The kill -9 sweep: kill a worker before write point K, resume it in a new process, and
compare every store with an uninterrupted run.

``python -m reliability.sweep OUT [--points 24] [--postgres URL] [--memory-postgres URL]``
(tests/ on PYTHONPATH) prints one line per point and a total; the reliability test asserts 0
lost, 0 duplicated. ``--postgres``: the checkpoints in that server; ``--memory-postgres``: the
long-term memory (the fleet's store, pgvector); each point gets fresh databases.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from reliability.harness import differences, spread

ROOT = Path(__file__).resolve().parents[2]
CONSOLIDATION = ("MemoryHistory.", "ItemStore.", "VectorStore.", "Shard")


@dataclass
class PointResult:
    point: int
    write: str
    killed: bool
    diff: dict[str, dict] = field(default_factory=dict)
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.killed and not self.diff and not self.error

    def line(self) -> str:
        if self.error:
            return f"{self.point:4d} {self.write:36s} ERROR {self.error}"
        if not self.killed:
            return f"{self.point:4d} {self.write:36s} not reached (no kill)"
        if not self.diff:
            return f"{self.point:4d} {self.write:36s} ok"
        parts = [
            f"{store}: {len(d['lost'])} lost, {len(d['extra'])} duplicated/extra"
            for store, d in self.diff.items()
        ]
        return f"{self.point:4d} {self.write:36s} " + "; ".join(parts)


def worker(data: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = os.environ | {"PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}
    return subprocess.run(
        [sys.executable, "-m", "reliability.worker", str(data), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )


def _databases(name: str, checkpoints: str | None, memory: str | None) -> list[str]:
    """The worker's options naming fresh databases ``name`` / ``name_m`` on the servers."""
    extra = ["--checkpoints", _fresh_database(checkpoints, name)] if checkpoints else []
    if memory:
        extra += ["--memory-url", _fresh_database(memory, f"{name}_m")]
    return extra


def reference(out: Path, extra: list[str]) -> tuple[dict, list[str]]:
    """An uninterrupted run: its stores and its numbered write points."""
    log, snap = out / "reference.log", out / "reference.json"
    done = worker(out / "reference", "--log", str(log), "--snapshot", str(snap), *extra)
    if done.returncode != 0:
        raise RuntimeError(f"reference run failed:\n{done.stderr[-3000:]}")
    writes = [line.split("\t", 1)[1] for line in log.read_text().splitlines()]
    return json.loads(snap.read_text()), writes


def choose(writes: list[str], n: int, n_consolidation: int = 10) -> list[int]:
    """``n`` points evenly spread over the pair, ``n_consolidation`` spread over the
    consolidation writes (long-term stores, history), and the first write of each kind."""
    points = set(spread(len(writes), n))
    inside = [i + 1 for i, w in enumerate(writes) if w.startswith(CONSOLIDATION) or "Item" in w]
    points |= {inside[i - 1] for i in spread(len(inside), n_consolidation)}
    first: dict[str, int] = {}
    for i, w in enumerate(writes, start=1):
        first.setdefault(w, i)  # every kind of write at least once (KG writes included)
    return sorted(points | set(first.values()))


def run_point(out: Path, point: int, write: str, ref: dict, extra: list[str]) -> PointResult:
    data = out / f"k{point}"
    killed = worker(data, "--kill-at", str(point), *extra)
    result = PointResult(point, write, killed=killed.returncode == -9)
    if not result.killed:
        result.error = f"worker exited {killed.returncode}: {killed.stderr[-300:]}"
        return result
    snap = out / f"k{point}.json"
    resumed = worker(data, "--snapshot", str(snap), *extra)
    if resumed.returncode != 0:
        result.error = "resume failed: " + (resumed.stderr.strip().splitlines() or ["?"])[-1]
        return result
    result.diff = differences(ref, json.loads(snap.read_text()))
    return result


def _fresh_database(url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + f"/{name}"


def _echo(line: str) -> None:
    print(line, flush=True)


def sweep(
    out: Path,
    n: int = 24,
    postgres: str | None = None,
    echo=_echo,
    memory_postgres: str | None = None,
) -> list[PointResult]:
    out.mkdir(parents=True, exist_ok=True)
    ref, writes = reference(out, _databases("reference", postgres, memory_postgres))
    points = choose(writes, n)
    echo(f"{len(writes)} write points in the task pair; killing at {len(points)} of them")
    results = []
    for point in points:
        extra = _databases(f"k{point}", postgres, memory_postgres)  # fresh ones per point
        result = run_point(out, point, writes[point - 1], ref, extra)
        echo(result.line())
        results.append(result)
    bad = [r for r in results if not r.ok]
    echo(f"{len(results) - len(bad)}/{len(results)} points: nothing lost, nothing duplicated")
    return results


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("out", type=Path)
    p.add_argument("--points", type=int, default=24)
    p.add_argument("--postgres", help="checkpoints in this PostgreSQL server (URL)")
    p.add_argument("--memory-postgres", help="long-term memory in this server (pgvector; URL)")
    p.add_argument("--json", type=Path, help="write each point's differences here")
    args = p.parse_args()
    results = sweep(args.out, args.points, args.postgres, memory_postgres=args.memory_postgres)
    if args.json:
        rows = [vars(r) | {"ok": r.ok} for r in results]
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
