"""The GraphStore protocol: what spatial memory (Algorithm 2) needs from a graph backend.

A store holds one robot's directed spatial KG: vertices (a name and its embedding) and valid
edges, plus the history of invalidated edges. Every write goes through :meth:`GraphStore.apply`,
which is atomic and records the update key so a re-run of the same (episode, step) is detected.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from robomemory.memory.base import Triple


@dataclass
class GraphChange:
    """One atomic update: new vertices, edges to add, edge ids to invalidate, the update key."""

    key: str
    step: int
    episode_id: str
    vertices: dict[str, list[float]] = field(default_factory=dict)
    add: list[Triple] = field(default_factory=list)
    invalidate: list[int] = field(default_factory=list)


@dataclass
class ApplyResult:
    """What :meth:`GraphStore.apply` did."""

    added: list[int] = field(default_factory=list)
    invalidated: list[int] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)


@runtime_checkable
class GraphStore(Protocol):
    """A spatial KG backend (networkx on disk by default, Neo4j over Bolt to scale out)."""

    graph_id: str

    def has_update(self, key: str) -> bool:
        """True when an update with this key was already applied."""
        ...

    def last_step(self) -> int | None:
        """The largest ``GraphChange.step`` applied so far (None for a new graph)."""
        ...

    def vertex_names(self) -> set[str]:
        """Names of the vertices (every one has at least one valid edge)."""
        ...

    def similar_vertices(self, embedding: Sequence[float], n: int) -> list[tuple[str, float]]:
        """Top-n vertices by cosine similarity to ``embedding``, best first."""
        ...

    def k_hop(self, seeds: Iterable[str], k: int, undirected: bool = False) -> set[str]:
        """Vertices reachable from ``seeds`` by at most k valid edges (seeds included):
        outgoing edges only (the update's bound), or either direction (``undirected``)."""
        ...

    def edges_among(self, names: Iterable[str]) -> list[Triple]:
        """Valid edges of the subgraph induced by ``names``."""
        ...

    def triples(self, include_invalid: bool = False) -> list[Triple]:
        """All valid edges, and the invalidated history when asked, ordered by id."""
        ...

    def size(self) -> tuple[int, int]:
        """(vertices, valid edges)."""
        ...

    def apply(self, change: GraphChange) -> ApplyResult:
        """Atomically add vertices and edges, invalidate edges, prune isolated vertices, and
        record ``change.key``. An edge equal to a valid one (subject, relation, object) is not
        duplicated."""
        ...

    def close(self) -> None:
        """Release connections or files."""
        ...
