"""Spatial memory: a directed KG updated by the paper's Algorithm 2 (Appendix E of
"RoboMemory: A Brain-inspired Multi-memory Agentic Framework for Interactive Environmental
Learning in Physical Embodied Systems").

Per step: (1) the relation extractor (model) turns s_t into G_new; (2) V_similar is the union
over queries of the top-n vertices by cosine similarity; (3) K-hop expansion along outgoing
valid edges gives V_retrieved, and V_merged = V_retrieved ∪ V_new; (4) G_local is the subgraph
of G ∪ G_new induced by V_merged (old and new edges); (5) the conflict resolver (model) sees
G_local's edges under small integer ids and answers delete / modify / add; (6) the result is
merged back: deleted or modified edges are invalidated (kept as history), not erased;
(7) vertices left without a valid edge are pruned. Steps 2–4, 6 and 7 are the pure functions of
:mod:`~robomemory.memory.spatial_algorithm`; this module embeds, calls the model and the store.

Choices beyond the paper, for locality and safety (details in ``spatial_algorithm``):
- Hubs (vertices with more than ``hub_degree`` edges: rooms, the robot carrying things) are not
  expanded through by K-hop; the vertices of G_new's fresh edges add their old relations one
  hop out, so an object's old location is in G_local even when no query names it.
- The resolver sees only the old edges of G_local that G_new does not restate and that touch
  G_new (the candidates, with ids), and the edges of G_new next to them (the evidence, without
  ids: the resolver can invalidate old edges but not drop what the robot observes now). It is
  asked only when there are both; otherwise G_new's fresh edges are merged as they are.
- With grounding, perception settles what it is the authority on before the resolver is asked
  (``settle_by_perception``): the robot's own old edges, and the old places of a thing it holds
  now. The resolver is left the things seen moved from one holder to another.
- The resolver's answer is all-or-nothing: if any operation names an unknown id or is malformed,
  every operation is rejected (counted in ``ops_rejected``). Rejected, unparseable or failed
  answers never delete: the old edges stay and G_new is added.
- An extractor failure yields no new relations.
- Updates are idempotent per (episode_id, step): the key is stored atomically with the change.
- Validity steps are monotonic per robot (lifelong): a step not above the graph's last one
  (a caller counting steps per task) is stamped last + 1; ``SpatialUpdateStats.step`` is it.
- Spatial memories sharing a store share one update lock (two agents on threads of a process).
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path

from langchain_core.embeddings import Embeddings

from robomemory.config import SpatialConfig
from robomemory.core import Route
from robomemory.memory.base import SceneGrounding, SpatialUpdateStats, Triple
from robomemory.memory.spatial_algorithm import (
    GraphChange,
    LocalGraph,
    Resolution,
    apply_decision,
    edge_key,
    k_hop,
    make_triple,
    move_fact,
    normalize_name,
    normalize_relation,
    places_of_things,
    resolver_ids,
    routes_of,
    select_local,
    settle_by_perception,
    stale_robot_facts,
    top_n,
)
from robomemory.memory.stores.graph_sqlite import open_sqlite_store, read_sqlite_graph
from robomemory.memory.stores.graph_store import GraphStore
from robomemory.prompts import spatial as prompts
from robomemory.structured import NodeLLM

__all__ = [
    "SpatialMemory",
    "make_triple",
    "normalize_name",
    "normalize_relation",
    "open_graph_store",
    "render_triples",
]

log = logging.getLogger(__name__)

_CACHE_MAX = 4096
_update_locks: weakref.WeakKeyDictionary[GraphStore, threading.Lock] = weakref.WeakKeyDictionary()
_update_locks_guard = threading.Lock()


EXTRACT_TEXT_CHARS = 1200  # the world's words given to the extractor, at most


def _update_lock(store: GraphStore) -> threading.Lock:
    with _update_locks_guard:
        return _update_locks.setdefault(store, threading.Lock())


def _robot_facts(grounding: SceneGrounding) -> list[Triple]:
    """The robot's place and holdings as its own facts, the way it just walked, and the
    fixtures it sees in its room."""
    facts = [make_triple("I", "at", grounding.place)] if grounding.place else []
    facts += [make_triple("I", "hold", name) for name in grounding.holding]
    if grounding.place and grounding.arrived_by:
        left, direction = grounding.arrived_by
        facts.append(move_fact(left, direction, grounding.place))
    if grounding.place:
        held = set(grounding.holding)
        fixed = [n for n in grounding.fixtures if n not in held]
        facts += [make_triple(n, "in", grounding.place) for n in fixed]
    return [t for t in facts if t is not None]


def _grounded_names(grounding: SceneGrounding | None) -> list[str]:
    """Names the extractor may use: the scene's, its room, without the robot's holdings
    (those are placed by the robot's own facts)."""
    if grounding is None:
        return []
    held = set(grounding.holding)
    names = [n for n in grounding.names if n not in held]
    if grounding.place:
        names.append(grounding.place)
    return list(dict.fromkeys(names))


def places_news(grounding: SceneGrounding, names: Sequence[str]) -> bool:
    """Whether the extractor may learn where something is from this scene: ``names`` (the
    scene's and its room, :func:`_grounded_names`) relate at least two things, and an answer
    in the same place names two besides the room. "You take the knife from the counter."
    names one: what moved is held, and the robot's own facts say so; a recipe read naming
    the milk says nothing of where the milk is; "You open the fridge, revealing a carrot."
    names two and is read. A room entered, or the task's first scene, is read for one thing
    too. Only a thing that moves is asked about: a fixture's place is a fact already."""
    room = 1 if grounding.place in names else 0
    here = grounding.short_here or grounding.stayed
    movable = [n for n in names if n != grounding.place and n not in grounding.fixtures]
    return bool(movable) and len(names) - room >= (2 if here else 1) and len(names) >= 2


def render_triples(triples: Iterable[Triple], history: bool = False) -> str:
    """Compact text for prompts: one relation per line; invalidated ones marked when shown."""
    lines = []
    for t in triples:
        if t.valid:
            lines.append(t.text())
        elif history:
            lines.append(f"{t.text()} (until step {t.invalidated_at_step})")
    return "\n".join(lines) if lines else "(no spatial knowledge yet)"


class SpatialMemory:
    """One robot's spatial KG with the Algorithm-2 update and top-n + K-hop retrieval."""

    def __init__(self, cfg: SpatialConfig, store: GraphStore, embedder: Embeddings):
        self.cfg = cfg
        self.store = store
        self.embedder = embedder
        self._cache: dict[str, list[float]] = {}
        self._lock = _update_lock(store)

    # ---- retrieval ---------------------------------------------------------------------------
    def retrieve(self, queries: list[str]) -> list[Triple]:
        """Valid edges among the top-n vertices per query and their K-hop neighbourhood.

        Retrieval follows edges both ways ("I hold apple" answers a query about the apple);
        the update's local subgraph follows outgoing edges only (the paper's O(D^K) bound).
        Neither expands through hubs."""
        similar = self._similar(queries)
        if not similar:
            return []
        cfg = self.cfg
        near = k_hop(self.store, similar, cfg.k_hops, undirected=True, hub_degree=cfg.hub_degree)
        return self.store.edges_among(near)

    def triples(self, include_invalid: bool = False) -> list[Triple]:
        """Every valid edge, plus the invalidated history when asked."""
        return self.store.triples(include_invalid=include_invalid)

    def routes(self) -> list[Route]:
        """The ways between places this map knows (from the moves the robot made here)."""
        return routes_of(self.store.triples())

    def places(self) -> list[str]:
        """The places the robot stood at in this map ("I at" facts, past ones too), in order."""
        facts = self.store.triples(include_invalid=True)
        return list(
            dict.fromkeys(t.object for t in facts if t.subject == "I" and t.relation == "at")
        )

    def things_places(self) -> dict[str, str]:
        """Where this map last placed each thing, as a place (:func:`places_of_things`)."""
        return places_of_things(self.store.triples(include_invalid=True))

    # ---- update (Algorithm 2) ----------------------------------------------------------------
    def update(
        self,
        summary: str,
        queries: list[str],
        *,
        step: int,
        episode_id: str,
        llm: NodeLLM,
        grounding: SceneGrounding | None = None,
        new: list[Triple] | None = None,
    ) -> SpatialUpdateStats:
        """Run Algorithm 2 for s_t = ``summary`` and q_t = ``queries``; idempotent per step.

        With ``grounding`` the extractor relates only the names perception reports, reads the
        world's own words when perception has them (else the summary), and the robot's place
        and holdings are added as its own facts. ``new``: G_new already extracted
        (:meth:`extract`, run beside the step summarizer), so no extraction here."""
        key = f"{episode_id}:{step}"
        if self.has_update(episode_id, step):
            return self._skipped(step)
        if new is None:
            new = self.extract(summary, llm, grounding)  # reads no graph state: outside the lock
        with self._lock:
            if self.store.has_update(key):
                return self._skipped(step)
            last = self.store.last_step()
            step = step if last is None or step > last else last + 1  # monotonic per robot
            local = select_local(
                self.store,
                self._similar(queries),
                new,
                k=self.cfg.k_hops,
                hub_degree=self.cfg.hub_degree,
            )
            stale: list[int] = []
            if grounding is not None:
                local, stale = settle_by_perception(local, grounding.holding)
                stale += stale_robot_facts(
                    self.store,
                    grounding.place,
                    grounding.holding,
                    grounding.names,
                    holding_known=grounding.holding_known,
                )
            stats = SpatialUpdateStats(
                step=step,
                sent_vertices=local.sent_vertices,
                sent_edges=local.sent_edges,
                local_edges=local.edges,
                new_edges=len(local.fresh),
            )
            res = self._resolve(local, llm) if local.needs_resolver else Resolution(local.fresh)
            stats.ops_applied, stats.ops_rejected = res.applied, res.rejected
            names = {n for t in res.add for n in (t.subject, t.object)}
            change = GraphChange(
                key=key,
                step=step,
                episode_id=episode_id,
                vertices=self._embed_names(sorted(names - self.store.known_vertices(names))),
                add=res.add,
                invalidate=sorted(set(res.invalidate) | set(stale)),
            )
            self.store.apply(change)
            stats.vertices, stats.edges = self.store.size()
            return stats

    def _skipped(self, step: int) -> SpatialUpdateStats:
        v, e = self.store.size()
        return SpatialUpdateStats(step=step, vertices=v, edges=e, skipped=True)

    def has_update(self, episode_id: str, step: int) -> bool:
        """Whether the update of this episode's ``step`` is in the store already (a resume)."""
        return self.store.has_update(f"{episode_id}:{step}")

    def extract(
        self, summary: str, llm: NodeLLM, grounding: SceneGrounding | None = None
    ) -> list[Triple]:
        """G_new (Algorithm 2's relation retriever): the robot's own facts and, by a model
        call, where the things named are. With ``grounding`` that has the world's words, it
        reads those and not ``summary``."""
        out: dict[tuple[str, str, str], Triple] = {}
        if grounding is not None:
            for t in _robot_facts(grounding):
                out.setdefault(edge_key(t), t)
        names = _grounded_names(grounding)
        if grounding is not None and grounding.text.strip():
            summary = " ".join(grounding.text.split())[:EXTRACT_TEXT_CHARS]
        if not summary.strip() or (grounding is not None and not places_news(grounding, names)):
            return list(out.values())
        if grounding is not None:
            schema = prompts.grounded_relations_model(
                tuple(names), grounding.place, tuple(grounding.fixtures)
            )
            system = prompts.GROUNDED_EXTRACT_SYSTEM
        else:
            schema, system = prompts.ExtractedTriples, prompts.EXTRACT_SYSTEM
        fallback = (lambda: None) if grounding is not None else prompts.ExtractedTriples
        res = llm.call(schema, system, prompts.extract_user(summary, names), fallback=fallback)
        if res.value is None:  # the grounded extractor failed: no new relations
            parts = []
        elif grounding is not None:
            parts = prompts.grounded_triples(res.value)
        else:
            parts = [prompts.relation_parts(rel) for rel in res.value.relations]
        for part in parts:
            t = make_triple(*part)
            if t is not None:
                out.setdefault(edge_key(t), t)
        return list(out.values())

    def _resolve(self, local: LocalGraph, llm: NodeLLM) -> Resolution:
        """Ask the conflict resolver about the candidates, given the evidence; apply its
        answer with :func:`apply_decision` (all or nothing)."""
        ids = resolver_ids(local)
        shown = [(i, t.text()) for i, t in ids.items()]
        res = llm.call(
            prompts.resolver_model(tuple(ids)),
            prompts.RESOLVE_SYSTEM,
            prompts.resolve_user(shown, [t.text() for t in local.evidence]),
            fallback=prompts.ResolverDecision(delete=[]),
        )
        return apply_decision(local, delete=res.value.delete)

    # ---- embeddings --------------------------------------------------------------------------
    def _vectors(self, texts: Sequence[str]) -> list[list[float]]:
        """Embeddings of ``texts``, cached (retrieval and update may call this at once)."""
        found = {t: v for t in dict.fromkeys(texts) if (v := self._cache.get(t)) is not None}
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            if len(self._cache) + len(missing) > _CACHE_MAX:
                self._cache.clear()
            for text, vec in zip(missing, self.embedder.embed_documents(missing), strict=True):
                found[text] = self._cache[text] = list(vec)
        return [found[t] for t in texts]

    def _embed_names(self, names: Sequence[str]) -> dict[str, list[float]]:
        return dict(zip(names, self._vectors(names), strict=True)) if names else {}

    def _similar(self, queries: Sequence[str]) -> set[str]:
        qs = [q.strip() for q in queries if q and q.strip()]
        if not qs:
            return set()
        return top_n(self.store, self._vectors(qs), self.cfg.top_n)


def open_graph_store(
    cfg: SpatialConfig, data_dir: Path, graph_id: str, *, read_only: bool = False
) -> GraphStore:
    """Open a robot's graph: SQLite under ``data_dir/spatial`` (default; one shared object per
    file in a process, one writing process per file) or Neo4j over Bolt. ``read_only``: a
    snapshot that takes no lock (inspecting a robot that is running)."""
    if cfg.backend == "neo4j":
        from robomemory.memory.stores.graph_neo4j import Neo4jGraphStore  # neo4j extra

        uri = cfg.neo4j_uri or os.environ.get("NEO4J_URI")
        if not uri:
            raise ValueError("spatial backend 'neo4j' needs spatial.neo4j_uri or NEO4J_URI")
        return Neo4jGraphStore.from_env(graph_id, uri, cfg.neo4j_user_env, cfg.neo4j_password_env)
    path = graph_file(Path(data_dir) / "spatial", graph_id)
    return read_sqlite_graph(path, graph_id) if read_only else open_sqlite_store(path, graph_id)


def graph_file(folder: Path, graph_id: str) -> Path:
    """The SQLite file of ``graph_id`` in ``folder``, one to one: the ``~`` before a digest
    (:func:`robomemory.memory.base.world_key`, ``robot_key``) is kept, so a digest name never
    meets a plain one. A map kept under the earlier name (``~`` written ``_``) is opened there
    while no file has the new name."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "-_~") else "_" for c in graph_id)
    path = folder / f"{safe}.sqlite3"
    legacy = folder / f"{safe.replace('~', '_')}.sqlite3"
    kept = (legacy, legacy.with_name(legacy.name + ".bak"))
    if legacy != path and not path.exists() and any(f.exists() for f in kept):
        return legacy
    return path
