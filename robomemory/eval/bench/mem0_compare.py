"""`robomemory bench mem0-compare`: long-term add and search, robomemory vs Mem0 (``mem0ai``,
the optional extra ``mem0``), on the same FAKE model and the same embedder.

Both start empty and get the same ``--adds`` lessons, then the same ``--searches`` queries:

- robomemory: ``semantic.update`` (content-hash dedupe, top-S similar, one updater decision,
  journaled plan, idempotent store write + history row) on a Qdrant Edge shard, then
  ``semantic.retrieve([query], query)`` (MemRL two-phase, one search batch; top 5 gated at
  cosine 0.1, as Mem0's search);
- Mem0: ``Memory.add`` (one extraction call, hash dedupe, insert, history) on its default
  Qdrant store (qdrant-client local mode on disk), then ``Memory.search(top_k=5)``.

The model is one FAKE OpenAI-compatible server in a child process (so its CPU is not counted)
that answers robomemory's updater with ADD and Mem0's extractor with the lesson it was sent:
one model call per add on each side, over real HTTP. The embedder is shared: a bag-of-words
hash (FAKE, fixed vectors) or MiniLM (real). Reported: median wall and CPU ms per operation
and the ratio robomemory / Mem0 (below 1: robomemory is faster).
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing as mp
import os
import random
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from robomemory.commands.json_out import add_json_flag, json_file, print_json, wants_json
from robomemory.config import MemoryConfig
from robomemory.eval.bench.memory_scale_longterm import EMBEDDERS, OBJECTS, lesson, make_embedder
from robomemory.memory.longterm import NewItem
from robomemory.memory.system import MemorySystem
from robomemory.structured import StructuredLLM
from robomemory.testing.openai_server import FakeOpenAIServer

os.environ.setdefault("MEM0_TELEMETRY", "False")  # read when mem0 is imported: no phoning home
MEM0_TOP_K = 5
MEM0_THRESHOLD = 0.1  # Mem0's default search threshold
MARK = re.compile(r"\[\[(\d+)\|(.*?)\]\]")


def fake_model(name: str, schema: dict, messages: list[dict]) -> dict:
    """The FAKE model: ADD for robomemory's updater; for Mem0's extractor, the newest lesson
    of the prompt (marked ``[[n|text]]``) as the one extracted memory."""
    if name == "MemoryDecision":
        return {"event": "ADD"}
    text = str(messages[-1].get("content", "")) if messages else ""
    found = MARK.findall(text)
    if not found:
        return {"memory": []}
    newest = max(found, key=lambda m: int(m[0]))
    return {"memory": [{"text": newest[1]}]}


def _serve(port_queue: Any, stop: Any) -> None:
    with FakeOpenAIServer(responder=fake_model) as srv:
        port_queue.put(srv.port)
        stop.wait()


class ModelProcess:
    """The fake server in a spawned child process."""

    def __enter__(self) -> str:
        ctx = mp.get_context("spawn")
        self.stop, queue = ctx.Event(), ctx.Queue()
        self.proc = ctx.Process(target=_serve, args=(queue, self.stop), daemon=True)
        self.proc.start()
        return f"http://127.0.0.1:{queue.get(timeout=60)}/v1"

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.proc.join(timeout=10)


def _timed(fn: Callable[[], Any]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def _summary(samples: list[tuple[float, float]]) -> dict[str, float]:
    return {
        "wall_ms": round(statistics.median(s[0] for s in samples), 3),
        "cpu_ms": round(statistics.median(s[1] for s in samples), 3),
        "total_wall_s": round(sum(s[0] for s in samples) / 1000, 3),
    }


def run_robomemory(url: str, emb: Embeddings, lessons: list[str], queries: list[str], root: Path):
    from langchain_openai import ChatOpenAI

    cfg = MemoryConfig(data_dir=root)
    cfg.spatial.enabled = cfg.longterm.episodic_enabled = False
    # the same search as Mem0's: top 5 (all lessons are action-level), gated at its 0.1
    cfg.longterm.semantic_action_n, cfg.longterm.semantic_task_n = MEM0_TOP_K, 0
    cfg.longterm.semantic_verdict_n = 0
    cfg.utility.delta, cfg.utility.k2 = MEM0_THRESHOLD, MEM0_TOP_K
    chat = ChatOpenAI(base_url=url, api_key="fake", model="fake", temperature=0, max_retries=0)
    llm = StructuredLLM(chat, max_retries=0).for_node("compare")
    system = MemorySystem.open(cfg, emb, "compare")
    sem = system.semantic
    adds = [
        _timed(
            lambda i=i, t=t: sem.update(
                NewItem(t, "action"), idx=i, task=t, episode_id="c", llm=llm
            )
        )
        for i, t in enumerate(lessons)
    ]
    found = []
    searches = [_timed(lambda q=q: found.append(sem.retrieve([q], q))) for q in queries]
    result = {"add": _summary(adds), "search": _summary(searches), "items": len(sem.items())}
    result["hits_per_search"] = round(statistics.mean(len(f) for f in found), 2)
    system.close()
    return result


def run_mem0(url: str, emb: Embeddings, lessons: list[str], queries: list[str], root: Path):
    os.environ.setdefault("MEM0_DIR", str(root / "mem0home"))
    try:
        from mem0 import Memory
        from mem0.embeddings.base import EmbeddingBase
    except ImportError as exc:
        raise ValueError("Mem0 is not installed: pip install 'robomemory[mem0]'") from exc

    class Shared(EmbeddingBase):  # the same LangChain embedder robomemory uses
        def __init__(self) -> None:
            super().__init__(None)

        def embed(self, text, memory_action=None):
            return emb.embed_query(text)

        def embed_batch(self, texts, memory_action="add"):
            return emb.embed_documents(list(texts))

    dim = len(emb.embed_query("dimension probe"))
    memory = Memory.from_config(
        {
            "llm": {
                "provider": "openai",
                "config": {"model": "fake", "api_key": "fake", "openai_base_url": url},
            },
            "embedder": {
                "provider": "openai",
                "config": {"api_key": "fake", "embedding_dims": dim},
            },
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "path": str(root / "mem0-qdrant"),
                    "collection_name": "compare",
                    "embedding_model_dims": dim,
                    "on_disk": True,
                },
            },
            "history_db_path": str(root / "mem0-history.db"),
        }
    )
    memory.embedding_model = Shared()
    who = {"agent_id": "compare"}
    adds = [
        _timed(lambda i=i, t=t: memory.add([{"role": "user", "content": f"[[{i}|{t}]]"}], **who))
        for i, t in enumerate(lessons)
    ]
    found = []
    searches = [
        _timed(lambda q=q: found.append(memory.search(q, filters=who, top_k=MEM0_TOP_K)["results"]))
        for q in queries
    ]
    items = len(memory.get_all(filters=who, top_k=len(lessons) + 10)["results"])
    result = {"add": _summary(adds), "search": _summary(searches), "items": items}
    result["hits_per_search"] = round(statistics.mean(len(f) for f in found), 2)
    return result


def compare(adds: int = 200, searches: int = 200, embedder: str = "fake", seed: int = 0) -> dict:
    """Run both on the same lessons and queries; ratios are robomemory / Mem0."""
    if adds < 1 or searches < 1:
        raise ValueError("adds and searches must be positive")
    if embedder not in EMBEDDERS:
        raise ValueError(f"unknown embedder {embedder!r}; choose from {', '.join(EMBEDDERS)}")
    rng = random.Random(seed)
    lessons = [lesson(rng, i) for i in range(adds)]
    queries = [f"how do I get the {rng.choice(OBJECTS)} (query {i})" for i in range(searches)]
    emb = make_embedder(embedder)
    logging.getLogger("mem0").setLevel(logging.ERROR)
    with ModelProcess() as url, tempfile.TemporaryDirectory(prefix="robomemory-mem0-") as tmp:
        ours = run_robomemory(url, emb, lessons, queries, Path(tmp) / "robomemory")
        theirs = run_mem0(url, emb, lessons, queries, Path(tmp) / "mem0")
    from importlib.metadata import version

    ratio = {
        op: {k: round(ours[op][k] / theirs[op][k], 3) for k in ("wall_ms", "cpu_ms")}
        for op in ("add", "search")
    }
    return {
        "mem0ai": version("mem0ai"),
        "embedder": "MiniLM (real)" if embedder == "minilm" else "bag-of-words hash (FAKE)",
        "adds": adds,
        "searches": searches,
        "robomemory": ours,
        "mem0": theirs,
        "ratio_robomemory_over_mem0": ratio,
    }


def format_compare(r: dict) -> str:
    lines = [
        f"long-term add/search: robomemory (Qdrant Edge) vs Mem0 {r['mem0ai']} (its default"
        f" Qdrant local mode); FAKE model over HTTP, embedder {r['embedder']};"
        f" {r['adds']} adds, {r['searches']} searches (median per op)",
        f"{'':12}{'add wall ms':>12}{'add CPU ms':>11}{'search wall ms':>15}{'search CPU ms':>14}"
        f"{'items':>7}{'hits/search':>12}",
    ]
    for name in ("robomemory", "mem0"):
        x = r[name]
        lines.append(
            f"{name:12}{x['add']['wall_ms']:>12}{x['add']['cpu_ms']:>11}"
            f"{x['search']['wall_ms']:>15}{x['search']['cpu_ms']:>14}{x['items']:>7}"
            f"{x['hits_per_search']:>12}"
        )
    q = r["ratio_robomemory_over_mem0"]
    lines.append(
        f"{'ratio':12}{q['add']['wall_ms']:>12}{q['add']['cpu_ms']:>11}"
        f"{q['search']['wall_ms']:>15}{q['search']['cpu_ms']:>14}   (robomemory / Mem0)"
    )
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--adds", type=int, default=200)
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--embedder", choices=EMBEDDERS, default="fake")
    add_json_flag(parser, to_file=True)


def main(args: argparse.Namespace) -> int:
    result = compare(args.adds, args.searches, args.embedder)
    if wants_json(args):
        print_json(result)
        return 0
    print(format_compare(result))
    if json_file(args) is not None:
        json_file(args).write_text(json.dumps(result, indent=2))
    return 0
