"""Spatial memory: a directed KG updated by the paper's Algorithm 2 (seed 003, Appendix E).

Per step: (1) the relation extractor (model) turns s_t into G_new; (2) V_similar is the union
over queries of the top-n vertices by cosine similarity; (3) K-hop expansion along outgoing
valid edges gives V_retrieved, and V_merged = V_retrieved ∪ V_new; (4) G_local is the subgraph
of G ∪ G_new induced by V_merged (old and new edges); (5) the conflict resolver (model) sees
G_local's edges under small integer ids and answers delete / modify / add; (6) the result is
merged back: deleted or modified edges are invalidated (kept as history), not erased;
(7) vertices left without a valid edge are pruned.

Choices beyond the paper, all for safety:
- K-hop seeds are V_similar plus the vertices of G_new already in G, so an object's old
  location is in G_local even when no query names the object (bounded by |V_new|·D^K).
- The resolver is asked only when G_new is non-empty and G_local holds an old edge that G_new
  does not restate; otherwise there is nothing to resolve and G_new is merged as is.
- Only old edges that G_new does not restate get ids; G_new (true now) is listed without ids,
  so the resolver can invalidate old edges but not drop what the robot just observed.
- The resolver's answer is all-or-nothing: if any operation names an unknown id or is malformed,
  every operation is rejected (counted in ``ops_rejected``). Rejected, unparseable or failed
  answers never delete: the old edges stay and G_new is added (it is what the robot observes
  now); a contradiction left that way is in G_local next step and is resolved then.
- An extractor failure yields no new relations.
- Updates are idempotent per (episode_id, step): the key is stored atomically with the change.
- Validity steps are monotonic per robot (lifelong): a step not above the graph's last one
  (a caller counting steps per task) is stamped last + 1; ``SpatialUpdateStats.step`` is it.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from langchain_core.embeddings import Embeddings

from robomemory.config import SpatialConfig
from robomemory.memory.base import SceneGrounding, SpatialUpdateStats, Triple
from robomemory.memory.stores.graph_store import GraphChange, GraphStore
from robomemory.prompts import spatial as prompts
from robomemory.structured import NodeLLM

log = logging.getLogger(__name__)

_ARTICLES = re.compile(r"^(the|a|an|some)\s+")
# Names by which an observation or a model refers to the robot itself (and what it carries).
_SELF = {"i", "me", "myself", "robot", "agent", "you", "yourself", "inventory", "your inventory"}
_CACHE_MAX = 4096

Key = tuple[str, str, str]


def normalize_name(name: str) -> str:
    """Canonical vertex name: lower case, single spaces, no leading article; the robot is 'I'."""
    text = " ".join(str(name).strip().lower().split())
    text = _ARTICLES.sub("", text)
    return "I" if text in _SELF else text


def normalize_relation(relation: str) -> str:
    return " ".join(str(relation).strip().lower().split())


def _key(t: Triple) -> Key:
    return (t.subject, t.relation, t.object)


def make_triple(subject: str, relation: str, obj: str) -> Triple | None:
    """A normalized triple, or None when a part is empty or it is a self-loop."""
    s, r, o = normalize_name(subject), normalize_relation(relation), normalize_name(obj)
    if not (s and r and o) or s == o:
        return None
    return Triple(subject=s, relation=r, object=o)


def _robot_facts(grounding: SceneGrounding) -> list[Triple]:
    """The robot's place and holdings as its own facts."""
    facts = [make_triple("I", "at", grounding.place)] if grounding.place else []
    facts += [make_triple("I", "hold", name) for name in grounding.holding]
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
        self._lock = threading.Lock()

    # ---- retrieval ---------------------------------------------------------------------------
    def retrieve(self, queries: list[str]) -> list[Triple]:
        """Valid edges among the top-n vertices per query and their K-hop neighbourhood.

        Retrieval follows edges both ways ("I hold apple" answers a query about the apple);
        the update's local subgraph follows outgoing edges only (the paper's O(D^K) bound)."""
        similar = self._similar(queries)
        if not similar:
            return []
        return self.store.edges_among(self.store.k_hop(similar, self.cfg.k_hops, undirected=True))

    def triples(self, include_invalid: bool = False) -> list[Triple]:
        """Every valid edge, plus the invalidated history when asked."""
        return self.store.triples(include_invalid=include_invalid)

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
    ) -> SpatialUpdateStats:
        """Run Algorithm 2 for s_t = ``summary`` and q_t = ``queries``; idempotent per step.

        With ``grounding`` the extractor relates only the names perception reports, and the
        robot's place and holdings are added as its own facts."""
        key = f"{episode_id}:{step}"
        with self._lock:
            if self.store.has_update(key):
                v, e = self.store.size()
                return SpatialUpdateStats(step=step, vertices=v, edges=e, skipped=True)
            last = self.store.last_step()
            step = step if last is None or step > last else last + 1  # monotonic per robot
            new = self._extract(summary, llm, grounding)
            existing = self.store.vertex_names()
            similar = self._similar(queries)
            v_new = {t.subject for t in new} | {t.object for t in new}
            retrieved = self.store.k_hop(similar | (v_new & existing), self.cfg.k_hops) | similar
            merged = retrieved | v_new
            old_local = self.store.edges_among(merged)
            old_by_key = {_key(t): t for t in old_local}
            fresh = [t for t in new if _key(t) not in old_by_key]
            stats = SpatialUpdateStats(
                step=step,
                sent_vertices=len(merged),
                sent_edges=len(old_local) + len(fresh),
                new_edges=len(fresh),
            )
            add, invalidate = list(fresh), []
            restated = {_key(t) for t in new}
            if new and any(_key(t) not in restated for t in old_local):
                add, invalidate = self._resolve(new, old_local, old_by_key, fresh, llm, stats)
            names = {t.subject for t in add} | {t.object for t in add}
            change = GraphChange(
                key=key,
                step=step,
                episode_id=episode_id,
                vertices=self._embed_names(sorted(names - existing)),
                add=add,
                invalidate=invalidate,
            )
            self.store.apply(change)
            stats.vertices, stats.edges = self.store.size()
            return stats

    def _extract(
        self, summary: str, llm: NodeLLM, grounding: SceneGrounding | None = None
    ) -> list[Triple]:
        out: dict[Key, Triple] = {}
        if grounding is not None:
            for t in _robot_facts(grounding):
                out.setdefault(_key(t), t)
        names = _grounded_names(grounding)
        if not summary.strip() or (grounding is not None and len(names) < 2):
            return list(out.values())
        if grounding is not None:
            schema = prompts.grounded_relations_model(tuple(names), grounding.place)
            system = prompts.GROUNDED_EXTRACT_SYSTEM
        else:
            schema, system = prompts.ExtractedRelations, prompts.EXTRACT_SYSTEM
        fallback = (lambda: None) if grounding is not None else prompts.ExtractedRelations
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
                out.setdefault(_key(t), t)
        return list(out.values())

    def _resolve(
        self,
        new: list[Triple],
        old_local: list[Triple],
        old_by_key: dict[Key, Triple],
        fresh: list[Triple],
        llm: NodeLLM,
        stats: SpatialUpdateStats,
    ) -> tuple[list[Triple], list[int]]:
        """Ask the conflict resolver; return (edges to add, store ids to invalidate).

        Only old edges that G_new does not restate get ids: G_new is what the robot observes
        now, so the resolver cannot delete it (a small model otherwise drops the new edge)."""
        restated = {_key(t) for t in new}
        ids = dict(enumerate((t for t in old_local if _key(t) not in restated), start=1))
        shown_old = [(i, t.text()) for i, t in ids.items()]
        res = llm.call(
            prompts.ResolverDecision,
            prompts.RESOLVE_SYSTEM,
            prompts.resolve_user(shown_old, [t.text() for t in new]),
            fallback=prompts.ResolverDecision(),
        )
        d = res.value
        n_ops = len(d.delete) + len(d.modify) + len(d.add)
        removed = list(d.delete) + [m.id for m in d.modify]
        extra = [make_triple(m.subject, m.relation, m.object) for m in d.modify]
        extra += [make_triple(a.subject, a.relation, a.object) for a in d.add]
        if any(i not in ids for i in removed) or any(t is None for t in extra):
            log.warning("spatial resolver: rejected %d ops (unknown id or malformed)", n_ops)
            stats.ops_rejected = n_ops
            return list(fresh), []
        stats.ops_applied = n_ops
        invalidate = sorted({ids[i].id for i in removed if ids[i].id is not None})
        add = list(fresh)
        kept = {_key(t) for t in old_by_key.values() if t.id not in invalidate}
        seen = {_key(t) for t in add} | kept
        for t in extra:
            if t is not None and _key(t) not in seen:
                add.append(t)
                seen.add(_key(t))
        return add, invalidate

    # ---- embeddings --------------------------------------------------------------------------
    def _vectors(self, texts: Sequence[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            if len(self._cache) + len(missing) > _CACHE_MAX:
                self._cache.clear()
            for text, vec in zip(missing, self.embedder.embed_documents(missing), strict=True):
                self._cache[text] = list(vec)
        return [self._cache[t] for t in texts]

    def _embed_names(self, names: Sequence[str]) -> dict[str, list[float]]:
        return dict(zip(names, self._vectors(names), strict=True)) if names else {}

    def _similar(self, queries: Sequence[str]) -> set[str]:
        qs = [q.strip() for q in queries if q and q.strip()]
        if not qs:
            return set()
        out: set[str] = set()
        for vec in self._vectors(qs):
            out |= {name for name, _ in self.store.similar_vertices(vec, self.cfg.top_n)}
        return out


def open_graph_store(cfg: SpatialConfig, data_dir: Path, graph_id: str) -> GraphStore:
    """Open a robot's graph: networkx JSON under ``data_dir`` (default) or Neo4j over Bolt."""
    if cfg.backend == "neo4j":
        import os

        from robomemory.memory.stores.graph_neo4j import Neo4jGraphStore

        uri = cfg.neo4j_uri or os.environ.get("NEO4J_URI")
        if not uri:
            raise ValueError("spatial backend 'neo4j' needs spatial.neo4j_uri or NEO4J_URI")
        return Neo4jGraphStore.from_env(graph_id, uri, cfg.neo4j_user_env, cfg.neo4j_password_env)
    from robomemory.memory.stores.graph_nx import NetworkxGraphStore

    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in graph_id)
    return NetworkxGraphStore(graph_id, Path(data_dir) / "spatial" / f"{safe}.json")
