"""The GraphStore protocol: what spatial memory (Algorithm 2) needs from a graph backend.

A store holds one robot's directed spatial KG: vertices (a name and its embedding) and valid
edges, plus the history of invalidated edges. It answers the algorithm's reads as a
:class:`~robomemory.memory.spatial_algorithm.GraphView`; every write goes through
:meth:`GraphStore.apply`, which turns the change into a merge plan with the shared pure
:func:`~robomemory.memory.spatial_algorithm.plan_merge`, writes it atomically and records the
update key so a re-run of the same (episode, step) is detected.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from robomemory.memory.base import Triple
from robomemory.memory.spatial_algorithm import GraphChange, GraphView

__all__ = ["ApplyResult", "GraphChange", "GraphStore", "StoreInUseError"]


class StoreInUseError(RuntimeError):
    """Another process holds this robot's spatial map (one writer per robot)."""


@dataclass
class ApplyResult:
    """What :meth:`GraphStore.apply` did."""

    added: list[int] = field(default_factory=list)
    invalidated: list[int] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)


@runtime_checkable
class GraphStore(GraphView, Protocol):
    """A spatial KG backend (networkx in memory persisted to SQLite by default, Neo4j to
    scale out)."""

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

    def k_hop(self, seeds: Iterable[str], k: int, undirected: bool = False) -> set[str]:
        """Vertices reachable from ``seeds`` by at most k valid edges (seeds included)."""
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
