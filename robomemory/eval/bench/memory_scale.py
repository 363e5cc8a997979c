"""`robomemory bench memory-scale`: what one step of memory costs as memories pile up.

KG part (:func:`kg_scale`): a robot's spatial store (the default SQLite store, a real file) is
filled to 20 / 200 / 2,000 valid edges — rooms, things in them, the robot — then the same kind
of step is applied again and again: the robot moves (one edge invalidated, one added) and a
thing is moved (one invalidated, one added, now and then a new thing with its embedding). Per
step it reports the persistence cost (wall ms of ``apply``: the rows, one transaction, the
fsync) and the bytes the process wrote, plus the in-process selection (Algorithm 2's G_local)
for comparison. Flat figures across sizes mean persistence is proportional to the change.
Embeddings are random 384-d unit vectors (MiniLM's size); no model is involved.

Long-term part (:func:`robomemory.eval.bench.memory_scale_longterm.longterm_scale`): retrieve + add
cost per step at 100 / 1k / 10k memories per kind, on the real vector store with a FAKE model.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from robomemory.config import SpatialConfig
from robomemory.eval.bench.memory_scale_longterm import format_longterm, longterm_scale
from robomemory.memory.base import Triple
from robomemory.memory.spatial import open_graph_store
from robomemory.memory.spatial_algorithm import GraphChange, select_local
from robomemory.memory.stores.graph_store import GraphStore

KG_SIZES = (20, 200, 2000)
THINGS_PER_ROOM = 9
DIM = 384


# ---- KG costs ----------------------------------------------------------------------------------
def kg_scale(
    sizes: tuple[int, ...] = KG_SIZES,
    steps: int = 50,
    data_dir: Path | None = None,
    seed: int = 0,
) -> dict[str, list[dict[str, float | int]]]:
    """Per-step spatial persistence cost at each KG size (valid edges); a dict of figures:
    ``{"kg": [{"size", "edges", "vertices", "apply_ms_median", "apply_ms_p95", "select_ms_median",
    "bytes_written_per_step", "file_bytes"}, ...]}``."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            root = Path(data_dir or tmp) / f"kg{size}"
            store = open_graph_store(SpatialConfig(), root, f"spatial_scale{size}")
            try:
                rows.append(_measure(store, size, steps, np.random.default_rng(seed), root))
            finally:
                store.close()
    return {"kg": rows}


def _vec(rng: np.random.Generator) -> list[float]:
    v = rng.standard_normal(DIM).astype(np.float32)
    return list(v / np.linalg.norm(v))


def _fill(store: GraphStore, size: int, rng: np.random.Generator) -> int:
    """A house of ~size edges: rooms in a row (exits both ways), things at rooms, the robot.
    Returns the number of rooms."""
    rooms = max(2, size // (THINGS_PER_ROOM + 2))
    edges = [Triple(subject="I", relation="at", object="room0")]
    for r in range(rooms - 1):
        edges.append(Triple(subject=f"room{r}", relation="west_of", object=f"room{r + 1}"))
        edges.append(Triple(subject=f"room{r + 1}", relation="east_of", object=f"room{r}"))
    thing = 0
    while len(edges) < size:
        edges.append(Triple(subject=f"thing{thing}", relation="at", object=f"room{thing % rooms}"))
        thing += 1
    names = {n for t in edges for n in (t.subject, t.object)}
    store.apply(
        GraphChange(
            key="fill", step=0, episode_id="fill", vertices={n: _vec(rng) for n in names}, add=edges
        )
    )
    return rooms


def _valid_id(store: GraphStore, subject: str) -> int:
    """The id of ``subject``'s (only) valid outgoing edge: where it is."""
    near = store.edges_among(store.neighbors([subject]) | {subject})
    edge = next(t for t in near if t.subject == subject)
    assert edge.id is not None
    return edge.id


def _measure(
    store: GraphStore, size: int, steps: int, rng: np.random.Generator, root: Path
) -> dict[str, float | int]:
    rooms = _fill(store, size, rng)
    things = [n for n in store.vertex_names() if n.startswith("thing")]
    apply_ms, select_ms, written = [], [], []
    for step in range(1, steps + 1):
        robot_id = _valid_id(store, "I")
        thing = things[int(rng.integers(len(things)))]
        thing_id = _valid_id(store, thing)
        room, other = f"room{step % rooms}", f"room{(step * 7 + 3) % rooms}"
        add = [Triple(subject="I", relation="at", object=room)]
        add.append(Triple(subject=thing, relation="at", object=other))
        vertices = {}
        if step % 5 == 0:  # now and then a thing never seen before
            new = f"new thing {step}"
            vertices[new] = _vec(rng)
            add.append(Triple(subject=new, relation="at", object=room))
        t0 = time.perf_counter()
        select_local(store, {room}, add, k=2, hub_degree=SpatialConfig().hub_degree)
        select_ms.append((time.perf_counter() - t0) * 1000)
        change = GraphChange(
            key=f"scale:{step}",
            step=step,
            episode_id="scale",
            vertices=vertices,
            add=add,
            invalidate=[robot_id, thing_id],
        )
        before = _bytes_written()
        t0 = time.perf_counter()
        store.apply(change)
        apply_ms.append((time.perf_counter() - t0) * 1000)
        written.append(_bytes_written() - before)
    v, e = store.size()
    return {
        "size": size,
        "edges": e,
        "vertices": v,
        "steps": steps,
        "apply_ms_median": round(statistics.median(apply_ms), 2),
        "apply_ms_p95": round(float(np.percentile(apply_ms, 95)), 2),
        "select_ms_median": round(statistics.median(select_ms), 2),
        "bytes_written_per_step": int(statistics.median(written)),
        "file_bytes": sum(p.stat().st_size for p in root.rglob("*.sqlite3*") if p.is_file()),
    }


def _bytes_written() -> int:
    """Bytes this process has handed to write(2) so far (Linux ``/proc/self/io``: wchar)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise RuntimeError("/proc/self/io has no wchar line")


# ---- command -----------------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kg-sizes",
        default=",".join(map(str, KG_SIZES)),
        help="KG sizes in valid edges, comma-separated",
    )
    parser.add_argument("--kg-steps", type=int, default=50, help="steps measured per size")
    parser.add_argument(
        "--memories",
        default="100,1000,10000",
        help="long-term memories per kind, comma-separated ('' skips the long-term part)",
    )
    parser.add_argument("--lt-steps", type=int, default=20, help="long-term steps per size")
    parser.add_argument(
        "--embedder", choices=("fake", "minilm"), default="fake", help="long-term embedder"
    )
    parser.add_argument("--data", type=Path, default=None, help="folder for the store files")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")


def main(args: argparse.Namespace) -> int:
    try:
        sizes = tuple(int(s) for s in args.kg_sizes.split(","))
    except ValueError:
        msg = f"--kg-sizes: expected integers like 20,200,2000, got {args.kg_sizes!r}"
        raise ValueError(msg) from None
    if any(s < 4 for s in sizes) or args.kg_steps < 1:
        raise ValueError("--kg-sizes must be ≥ 4 edges each and --kg-steps ≥ 1")
    try:
        memories = tuple(int(s) for s in args.memories.split(",") if s.strip())
    except ValueError:
        msg = f"--memories: expected integers like 100,1000,10000, got {args.memories!r}"
        raise ValueError(msg) from None
    figures = kg_scale(sizes, args.kg_steps, args.data)
    if memories:
        figures["longterm"] = longterm_scale(
            memories, steps=args.lt_steps, embedder=args.embedder, data_dir=args.data
        )
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    _print_kg(figures["kg"])
    if memories:
        print(format_longterm(figures["longterm"]))
    return 0


def _print_kg(rows: list[dict[str, float | int]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title="memory-scale: spatial persistence per step (SQLite, one transaction per step)",
        caption="apply = rows written + commit (fsync); written = bytes handed to write(2); "
        "select = Algorithm 2's G_local on the in-process graph",
    )
    cols = ("KG edges", "vertices", "apply ms (median)", "apply ms (p95)", "written B/step")
    for col in (*cols, "select ms", "file B"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(
            f"{r['size']}→{r['edges']}",
            *(str(r[k]) for k in ("vertices", "apply_ms_median", "apply_ms_p95")),
            str(r["bytes_written_per_step"]),
            str(r["select_ms_median"]),
            str(r["file_bytes"]),
        )
    Console().print(table)
