"""Long-term part of `robomemory bench memory-scale`: retrieve + add cost per step as a robot's
memories pile up (100 / 1k / 10k items).

For each size N, a fresh robot's semantic and episodic stores get N items each (synthetic lessons
and episode records written straight into the store with their vectors: filling is not what is
measured). Then each of ``steps`` steps does what the graph does: both long-term branches
retrieve for 4 new queries + the task (MemRL two-phase, sharing the embedding cache), then one
Mem0 add of a new lesson through the FAKE model (a scripted ADD decision, no HTTP). Costs are
process CPU ms and wall ms, medians over the steps. Stores are real: Qdrant Edge (default) or
qdrant-client's local mode (``qdrant-local``, the engine used before, for comparison).
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from robomemory import models
from robomemory.config import MemoryConfig, ModelConfig
from robomemory.memory.embedding_cache import CachedEmbeddings
from robomemory.memory.history import MemoryHistory
from robomemory.memory.longterm import LongTermMemory, NewItem, content_hash
from robomemory.memory.stores.vector_edge import EdgeItemStore
from robomemory.memory.stores.vector_qdrant import QdrantItemStore, acquire_client, release_client
from robomemory.memory.stores.vector_store import CONTENT, INTENT, VectorStore, point_id
from robomemory.structured import StructuredLLM
from robomemory.testing import ScriptedChatModel
from robomemory.testing.embeddings import BagOfWordsEmbeddings

BACKENDS = ("edge", "qdrant-local")
EMBEDDERS = ("fake", "minilm")
OBJECTS = "apple cup knife towel soap book lamp remote pillow key plate bowl sponge mug".split()
PLACES = "fridge drawer counter shelf sofa bed sink table cabinet basket rack desk".split()
ROOMS = "kitchen bathroom bedroom living-room hallway pantry garage office".split()
VERBS = "open pick_up put go_to close take examine clean".split()


def lesson(rng: random.Random, n: int) -> str:
    obj, place, room, verb = (rng.choice(x) for x in (OBJECTS, PLACES, ROOMS, VERBS))
    return f"{verb} {obj} fails unless the {place} in the {room} is open (case {n})"


def task_text(rng: random.Random) -> str:
    return f"put the {rng.choice(OBJECTS)} in the {rng.choice(PLACES)}"


def make_embedder(name: str) -> Embeddings:
    if name == "minilm":
        return models.make_embedder(ModelConfig(embedder="minilm"))
    return BagOfWordsEmbeddings(384)


def open_store(backend: str, root: Path, collection: str, dim: int) -> tuple[VectorStore, Any]:
    if backend == "edge":
        return EdgeItemStore(root / "longterm" / collection, collection, dim), None
    client = acquire_client(path=root / "qdrant")
    return QdrantItemStore(client, collection, dim), client


def fill(memory: LongTermMemory, n: int, rng: random.Random, batch: int = 256) -> None:
    """N items written straight into the store (vectors embedded in batches)."""
    for start in range(0, n, batch):
        rows = []
        for i in range(start, min(n, start + batch)):
            task = task_text(rng)
            if memory.kind == "semantic":
                text, level = lesson(rng, i), ("action" if i % 2 else "task")
            else:
                text, level = f"Task: {task}. Outcome: failure. {lesson(rng, i)}.", None
            rows.append((text, level, task))
        vecs = memory.embedder.inner.embed_documents([x for t, _, k in rows for x in (t, k)])
        for j, (text, level, _task) in enumerate(rows):
            meta = {"level": level, "q": rng.random(), "visits": 1, "hash": content_hash(text)}
            vectors = {CONTENT: vecs[2 * j], INTENT: vecs[2 * j + 1]}
            memory.store.put(
                point_id(memory.collection, "fill", str(start + j)), text, meta, vectors
            )


def _timed(fn: Callable[[], Any]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return (time.process_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 2) if values else 0.0


def measure_size(n: int, *, steps: int, embedder: Embeddings, backend: str, root: Path) -> dict:
    cfg = MemoryConfig(data_dir=root)
    cache = CachedEmbeddings(embedder)
    dim = len(embedder.embed_query("dimension probe"))
    history = MemoryHistory(root / "history.sqlite3")
    opened = [open_store(backend, root, f"{kind}_bench", dim) for kind in ("semantic", "episodic")]
    semantic, episodic = (
        LongTermMemory(kind, cfg, store, cache, history)
        for kind, (store, _) in zip(("semantic", "episodic"), opened, strict=True)
    )
    rng = random.Random(n)
    started = time.perf_counter()
    fill(semantic, n, rng)
    fill(episodic, n, rng)
    fill_s = time.perf_counter() - started
    llm = StructuredLLM(ScriptedChatModel(responder=lambda s, m: {"event": "ADD"})).for_node("lt")
    cost: dict[str, list[float]] = {k: [] for k in ("sem_cpu", "epi_cpu", "ret_wall", "add_cpu")}
    cost["add_wall"] = []
    for step in range(steps):
        task = task_text(rng)
        queries = [f"where is the {rng.choice(OBJECTS)} (step {step}, q{i})" for i in range(4)]
        sem_cpu, sem_wall = _timed(lambda q=queries, t=task: semantic.retrieve(q, t))
        epi_cpu, epi_wall = _timed(lambda q=queries, t=task: episodic.retrieve(q, t))
        item = NewItem(lesson(rng, n + step), "action")
        add_cpu, add_wall = _timed(
            lambda i=item, s=step, t=task: semantic.update(
                i, idx=s, task=t, episode_id="bench", llm=llm
            )
        )
        cost["sem_cpu"].append(sem_cpu)
        cost["epi_cpu"].append(epi_cpu)
        cost["ret_wall"].append(sem_wall + epi_wall)
        cost["add_cpu"].append(add_cpu)
        cost["add_wall"].append(add_wall)
    for store, client in opened:
        store.close()
        if client is not None:
            release_client(client)
    history.close()
    return {
        "memories_per_kind": n,
        "fill_s": round(fill_s, 2),
        "retrieve_cpu_ms_semantic": _median(cost["sem_cpu"]),
        "retrieve_cpu_ms_episodic": _median(cost["epi_cpu"]),
        "retrieve_cpu_ms_per_branch": _median(
            [(a + b) / 2 for a, b in zip(cost["sem_cpu"], cost["epi_cpu"], strict=True)]
        ),
        "retrieve_wall_ms_both": _median(cost["ret_wall"]),
        "add_cpu_ms": _median(cost["add_cpu"]),
        "add_wall_ms": _median(cost["add_wall"]),
    }


def longterm_scale(
    sizes: tuple[int, ...] = (100, 1_000, 10_000),
    *,
    steps: int = 20,
    embedder: str = "fake",
    backend: str = "edge",
    data_dir: Path | None = None,
) -> dict:
    """Per-step long-term costs at each size (see the module docstring)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose from {', '.join(BACKENDS)}")
    if embedder not in EMBEDDERS:
        raise ValueError(f"unknown embedder {embedder!r}; choose from {', '.join(EMBEDDERS)}")
    if not sizes or min(sizes) < 1 or steps < 1:
        raise ValueError("sizes and steps must be positive")
    emb = make_embedder(embedder)
    rows = []
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="robomemory-lt-scale-", dir=data_dir) as tmp:
            rows.append(measure_size(n, steps=steps, embedder=emb, backend=backend, root=Path(tmp)))
    return {
        "backend": backend,
        "embedder": "MiniLM (real)" if embedder == "minilm" else "bag-of-words hash (FAKE)",
        "model": "scripted ADD decisions (FAKE, in process)",
        "steps": steps,
        "sizes": rows,
    }


def format_longterm(result: dict) -> str:
    """The result as a table (one row per size)."""
    head = (
        f"long-term memory per step — backend {result['backend']}, embedder {result['embedder']},"
        f" model {result['model']}, median of {result['steps']} steps\n"
        f"{'memories':>9} {'fill s':>7} {'retrieve CPU ms/branch':>23} {'sem':>7} {'epi':>7}"
        f" {'retrieve wall ms':>17} {'add CPU ms':>11} {'add wall ms':>12}"
    )
    lines = [head]
    for r in result["sizes"]:
        lines.append(
            f"{r['memories_per_kind']:>9} {r['fill_s']:>7} {r['retrieve_cpu_ms_per_branch']:>23}"
            f" {r['retrieve_cpu_ms_semantic']:>7} {r['retrieve_cpu_ms_episodic']:>7}"
            f" {r['retrieve_wall_ms_both']:>17} {r['add_cpu_ms']:>11} {r['add_wall_ms']:>12}"
        )
    return "\n".join(lines)


if __name__ == "__main__":  # python -m robomemory.eval.bench.memory_scale_longterm [N ...]
    import argparse
    import json

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[100, 1_000, 10_000])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--embedder", choices=EMBEDDERS, default="fake")
    parser.add_argument("--backend", choices=BACKENDS, default="edge")
    parser.add_argument("--json", type=Path, default=None, help="also write the result here")
    args = parser.parse_args()
    out = longterm_scale(
        tuple(args.sizes), steps=args.steps, embedder=args.embedder, backend=args.backend
    )
    print(format_longterm(out))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
