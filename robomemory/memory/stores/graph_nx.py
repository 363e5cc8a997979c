"""The in-process spatial KG on networkx: the graph Algorithm 2 reads, kept in memory.

A ``networkx.MultiDiGraph`` holds vertices (name → unit-norm embedding) and valid edges keyed
by their integer id; invalidated edges move to a history list, so pruning a vertex never erases
where something used to be. On its own it is a memory-only store (tests, benches);
:class:`~robomemory.memory.stores.graph_sqlite.SqliteGraphStore` persists it row by row.
:func:`load_json_graph` reads the JSON files of the earlier on-disk format (for migration).
"""

from __future__ import annotations

import base64
import json
import logging
import threading
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from robomemory.memory.base import Triple
from robomemory.memory.spatial_algorithm import GraphChange, MergePlan, k_hop, plan_merge
from robomemory.memory.stores.graph_store import ApplyResult

log = logging.getLogger(__name__)

JSON_FORMAT_VERSION = 1


def unit(vec: Sequence[float]) -> np.ndarray:
    """``vec`` as float32 scaled to unit norm (zero stays zero)."""
    arr = np.asarray(vec, dtype=np.float32)
    norm = float(np.linalg.norm(arr))
    return arr / norm if norm > 0 else arr


class NetworkxGraphStore:
    """A memory-only :class:`GraphStore` (and :class:`GraphView`) on networkx."""

    def __init__(self, graph_id: str):
        self.graph_id = graph_id
        self._lock = threading.RLock()
        self._g = nx.MultiDiGraph()
        self._ends: dict[int, tuple[str, str]] = {}  # valid edge id → (subject, object)
        self._history: list[Triple] = []
        self._done: set[str] = set()
        self.next_id = 1
        self._last_step: int | None = None
        self._matrix: tuple[list[str], np.ndarray] | None = None

    # ---- GraphView -----------------------------------------------------------------------------
    def known_vertices(self, names: Iterable[str]) -> set[str]:
        with self._lock:
            return {n for n in names if n in self._g}

    def similar_vertices(self, embedding: Sequence[float], n: int) -> list[tuple[str, float]]:
        with self._lock:
            names, matrix = self._similarity_matrix()
        if not names or n <= 0:
            return []
        scores = matrix @ unit(embedding)
        order = np.argsort(-scores, kind="stable")[:n]
        return [(names[i], float(scores[i])) for i in order]

    def neighbors(self, names: Collection[str], undirected: bool = False) -> set[str]:
        with self._lock:
            out: set[str] = set()
            for u in names:
                if u in self._g:
                    out.update(self._g.successors(u))
                    if undirected:
                        out.update(self._g.predecessors(u))
            return out

    def degrees(self, names: Collection[str]) -> dict[str, int]:
        with self._lock:
            return {n: int(self._g.degree(n)) for n in names if n in self._g}

    def edges_among(self, names: Iterable[str]) -> list[Triple]:
        with self._lock:
            sub = self._g.subgraph([n for n in set(names) if n in self._g])
            out = [_triple(u, v, k, d) for u, v, k, d in sub.edges(keys=True, data=True)]
        return sorted(out, key=lambda t: t.id or 0)

    def edges_by_id(self, ids: Collection[int]) -> list[Triple]:
        with self._lock:
            out = []
            for i in ids:
                if i in self._ends:
                    u, v = self._ends[i]
                    out.append(_triple(u, v, i, self._g.edges[u, v, i]))
            return out

    # ---- GraphStore reads ----------------------------------------------------------------------
    def has_update(self, key: str) -> bool:
        with self._lock:
            return key in self._done

    def last_step(self) -> int | None:
        with self._lock:
            return self._last_step

    def vertex_names(self) -> set[str]:
        with self._lock:
            return set(self._g.nodes)

    def applied_keys(self) -> list[str]:
        """The update keys applied so far, sorted."""
        with self._lock:
            return sorted(self._done)

    def k_hop(self, seeds: Iterable[str], k: int, undirected: bool = False) -> set[str]:
        return k_hop(self, seeds, k, undirected=undirected)

    def triples(self, include_invalid: bool = False) -> list[Triple]:
        with self._lock:
            out = [_triple(u, v, k, d) for u, v, k, d in self._g.edges(keys=True, data=True)]
            if include_invalid:
                out += [t.model_copy() for t in self._history]
        return sorted(out, key=lambda t: t.id or 0)

    def size(self) -> tuple[int, int]:
        with self._lock:
            return self._g.number_of_nodes(), self._g.number_of_edges()

    def embedding(self, name: str) -> np.ndarray:
        """The unit-norm embedding of vertex ``name``."""
        with self._lock:
            return self._g.nodes[name]["embedding"]

    # ---- writes --------------------------------------------------------------------------------
    def apply(self, change: GraphChange) -> ApplyResult:
        with self._lock:
            return self.commit(change, plan_merge(self, change))

    def commit(self, change: GraphChange, plan: MergePlan) -> ApplyResult:
        """Apply a plan made against this graph's current state; edge ids continue from
        :attr:`next_id` in plan order (a persistent store writes the same ids first)."""
        with self._lock:
            for i in plan.missing:
                log.warning("spatial %s: no valid edge %d to invalidate", self.graph_id, i)
            result = ApplyResult(pruned=list(plan.prune))
            for name, vec in plan.vertices.items():
                self._g.add_node(name, embedding=unit(vec))
            for t in plan.invalidate:
                assert t.id is not None
                self._g.remove_edge(t.subject, t.object, key=t.id)
                del self._ends[t.id]
                self._history.append(t)
                result.invalidated.append(t.id)
            for t in plan.add:
                self._add_edge(t.model_copy(update={"id": self.next_id}))
                result.added.append(self.next_id)
                self.next_id += 1
            self._g.remove_nodes_from(plan.prune)
            self._done.add(change.key)
            last = self._last_step
            self._last_step = change.step if last is None else max(change.step, last)
            if plan.prune or plan.vertices:
                self._matrix = None
            return result

    def close(self) -> None:
        """Nothing to release."""

    # ---- loading (used by the persistent stores) -----------------------------------------------
    def load(
        self,
        vertices: Iterable[tuple[str, np.ndarray]],
        edges: Iterable[Triple],
        done: Iterable[str],
        next_id: int,
        last_step: int | None,
    ) -> None:
        """Fill an empty graph: valid and invalidated edges, applied keys, counters."""
        with self._lock:
            for name, vec in vertices:
                self._g.add_node(name, embedding=unit(vec))
            for t in edges:
                if t.valid:
                    self._add_edge(t)
                else:
                    self._history.append(t)
            self._history.sort(key=lambda t: t.id or 0)
            self._done = set(done)
            self.next_id, self._last_step = next_id, last_step
            self._matrix = None

    def _add_edge(self, t: Triple) -> None:
        assert t.id is not None
        self._g.add_edge(
            t.subject,
            t.object,
            key=t.id,
            relation=t.relation,
            valid_from_step=t.valid_from_step,
            episode_id=t.episode_id,
        )
        self._ends[t.id] = (t.subject, t.object)

    def _similarity_matrix(self) -> tuple[list[str], np.ndarray]:
        if self._matrix is None:
            names = sorted(self._g.nodes)
            vecs = [self._g.nodes[n]["embedding"] for n in names]
            self._matrix = (names, np.vstack(vecs) if vecs else np.zeros((0, 0), np.float32))
        return self._matrix


def _triple(u: str, v: str, key: int, data: dict[str, Any]) -> Triple:
    return Triple(
        id=key,
        subject=u,
        relation=data["relation"],
        object=v,
        valid_from_step=data.get("valid_from_step", 0),
        episode_id=data.get("episode_id"),
    )


def load_json_graph(path: Path, graph_id: str) -> NetworkxGraphStore:
    """A graph read from the earlier JSON format (version 1); ValueError names a bad file."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("version") != JSON_FORMAT_VERSION:
            raise ValueError(f"unsupported format {doc.get('version')!r}")
        vertices = [
            (name, np.frombuffer(base64.b64decode(enc), dtype="<f4"))
            for name, enc in doc["vertices"].items()
        ]
        edges = [Triple.model_validate(t) for t in [*doc["edges"], *doc["history"]]]
        store = NetworkxGraphStore(graph_id)
        store.load(vertices, edges, doc["done"], int(doc["next_id"]), doc.get("last_step"))
    except (ValueError, KeyError, TypeError) as exc:  # json.JSONDecodeError is a ValueError
        raise ValueError(f"spatial graph file {path} is unreadable: {exc}") from exc
    return store
