"""In-process spatial KG on networkx, persisted crash-safely as JSON (the default backend).

The active graph is a ``networkx.MultiDiGraph`` holding vertices (name → unit-norm embedding)
and valid edges keyed by their integer id; invalidated edges move to a history list so pruning
a vertex never erases where something used to be. Every :meth:`apply` writes the whole state to
a temporary file, fsyncs it and ``os.replace``s it over the old one, so a crash leaves either
the previous or the new graph on disk, never a torn one. One writer per graph file.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from robomemory.memory.base import Triple
from robomemory.memory.stores.graph_store import ApplyResult, GraphChange

log = logging.getLogger(__name__)

FORMAT_VERSION = 1


def _unit(vec: Sequence[float]) -> np.ndarray:
    arr = np.asarray(vec, dtype=np.float32)
    norm = float(np.linalg.norm(arr))
    return arr / norm if norm > 0 else arr


def _enc(vec: np.ndarray) -> str:
    return base64.b64encode(vec.astype("<f4").tobytes()).decode("ascii")


def _dec(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f4").copy()


class NetworkxGraphStore:
    """A :class:`GraphStore` on networkx; ``path`` is its JSON file (None: memory only)."""

    def __init__(self, graph_id: str, path: Path | None = None):
        self.graph_id = graph_id
        self.path = path
        self._lock = threading.RLock()
        self._g = nx.MultiDiGraph()
        self._history: list[Triple] = []
        self._done: set[str] = set()
        self._next_id = 1
        self._last_step: int | None = None
        self._matrix: tuple[list[str], np.ndarray] | None = None
        if path is not None and path.exists():
            self._load(path)

    # ---- reads -------------------------------------------------------------------------------
    def has_update(self, key: str) -> bool:
        with self._lock:
            return key in self._done

    def last_step(self) -> int | None:
        with self._lock:
            return self._last_step

    def vertex_names(self) -> set[str]:
        with self._lock:
            return set(self._g.nodes)

    def similar_vertices(self, embedding: Sequence[float], n: int) -> list[tuple[str, float]]:
        with self._lock:
            names, matrix = self._similarity_matrix()
        if not names or n <= 0:
            return []
        scores = matrix @ _unit(embedding)
        order = np.argsort(-scores, kind="stable")[:n]
        return [(names[i], float(scores[i])) for i in order]

    def k_hop(self, seeds: Iterable[str], k: int, undirected: bool = False) -> set[str]:
        with self._lock:
            frontier = {s for s in seeds if s in self._g}
            seen = set(frontier)
            for _ in range(k):
                nxt = {v for u in frontier for v in self._g.successors(u)}
                if undirected:
                    nxt |= {v for u in frontier for v in self._g.predecessors(u)}
                frontier = nxt - seen
                if not frontier:
                    break
                seen |= frontier
            return seen

    def edges_among(self, names: Iterable[str]) -> list[Triple]:
        with self._lock:
            sub = self._g.subgraph([n for n in set(names) if n in self._g])
            return sorted(
                (
                    self._triple(u, v, key, data)
                    for u, v, key, data in sub.edges(keys=True, data=True)
                ),
                key=lambda t: t.id or 0,
            )

    def triples(self, include_invalid: bool = False) -> list[Triple]:
        with self._lock:
            out = [self._triple(u, v, k, d) for u, v, k, d in self._g.edges(keys=True, data=True)]
            if include_invalid:
                out += [t.model_copy() for t in self._history]
        return sorted(out, key=lambda t: t.id or 0)

    def size(self) -> tuple[int, int]:
        with self._lock:
            return self._g.number_of_nodes(), self._g.number_of_edges()

    # ---- writes ------------------------------------------------------------------------------
    def apply(self, change: GraphChange) -> ApplyResult:
        with self._lock:
            g = self._g.copy()
            history = list(self._history)
            next_id = self._next_id
            result = ApplyResult()
            for name, vec in change.vertices.items():
                if name not in g:
                    g.add_node(name, embedding=_unit(vec))
            for edge_id in dict.fromkeys(change.invalidate):
                found = self._find_edge(g, edge_id)
                if found is None:
                    log.warning(
                        "spatial %s: no valid edge %d to invalidate", self.graph_id, edge_id
                    )
                    continue
                u, v, data = found
                old = self._triple(u, v, edge_id, data)
                old.invalidated_at_step = change.step
                history.append(old)
                g.remove_edge(u, v, key=edge_id)
                result.invalidated.append(edge_id)
            for t in change.add:
                if t.subject not in g or t.object not in g:
                    raise ValueError(f"edge {t.text()!r} names a vertex without an embedding")
                if any(
                    d["relation"] == t.relation
                    for d in g.get_edge_data(t.subject, t.object, default={}).values()
                ):
                    continue
                g.add_edge(
                    t.subject,
                    t.object,
                    key=next_id,
                    relation=t.relation,
                    valid_from_step=change.step,
                    episode_id=change.episode_id,
                )
                result.added.append(next_id)
                next_id += 1
            result.pruned = sorted(n for n in g.nodes if g.degree(n) == 0)
            g.remove_nodes_from(result.pruned)
            done = self._done | {change.key}
            last = max(change.step, self._last_step if self._last_step is not None else change.step)
            if self.path is not None:
                self._persist(g, history, done, next_id, last)
            self._g, self._history, self._done, self._next_id = g, history, done, next_id
            self._last_step = last
            self._matrix = None
            return result

    def close(self) -> None:
        """Nothing to release: every apply is already on disk."""

    # ---- helpers -----------------------------------------------------------------------------
    @staticmethod
    def _find_edge(g: nx.MultiDiGraph, edge_id: int) -> tuple[str, str, dict[str, Any]] | None:
        for u, v, key, data in g.edges(keys=True, data=True):
            if key == edge_id:
                return u, v, data
        return None

    @staticmethod
    def _triple(u: str, v: str, key: int, data: dict[str, Any]) -> Triple:
        return Triple(
            id=key,
            subject=u,
            relation=data["relation"],
            object=v,
            valid_from_step=data.get("valid_from_step", 0),
            episode_id=data.get("episode_id"),
        )

    def _similarity_matrix(self) -> tuple[list[str], np.ndarray]:
        if self._matrix is None:
            names = sorted(self._g.nodes)
            vecs = [self._g.nodes[n]["embedding"] for n in names]
            self._matrix = (names, np.vstack(vecs) if vecs else np.zeros((0, 0), np.float32))
        return self._matrix

    def _persist(
        self, g: nx.MultiDiGraph, history: list[Triple], done: set[str], next_id: int, last: int
    ) -> None:
        assert self.path is not None
        doc = {
            "version": FORMAT_VERSION,
            "graph_id": self.graph_id,
            "next_id": next_id,
            "last_step": last,
            "vertices": {n: _enc(d["embedding"]) for n, d in g.nodes(data=True)},
            "edges": [
                self._triple(u, v, k, d).model_dump()
                for u, v, k, d in g.edges(keys=True, data=True)
            ],
            "history": [t.model_dump() for t in history],
            "done": sorted(done),
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, separators=(",", ":"))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
        dir_fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

    def _load(self, path: Path) -> None:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("version") != FORMAT_VERSION:
            raise ValueError(f"{path}: unsupported spatial graph format {doc.get('version')!r}")
        for name, enc in doc["vertices"].items():
            self._g.add_node(name, embedding=_dec(enc))
        for e in doc["edges"]:
            t = Triple.model_validate(e)
            self._g.add_edge(
                t.subject,
                t.object,
                key=t.id,
                relation=t.relation,
                valid_from_step=t.valid_from_step,
                episode_id=t.episode_id,
            )
        self._history = [Triple.model_validate(t) for t in doc["history"]]
        self._done = set(doc["done"])
        self._next_id = int(doc["next_id"])
        self._last_step = doc.get("last_step")
