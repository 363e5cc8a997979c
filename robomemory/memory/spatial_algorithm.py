"""Algorithm 2 of the paper (Appendix E of "RoboMemory: A Brain-inspired Multi-memory Agentic
Framework for Interactive Environmental Learning in Physical Embodied Systems") as pure
functions over a read-only graph view.

Selection — top-n per query, K-hop expansion, V_merged = V_retrieved ∪ V_new, the subgraph of
G ∪ G_new induced by V_merged — and merge — the resolver's answer turned into edges to add and
ids to invalidate, then deduplicated and pruned against the graph — are written once here. The
backends (``graph_sqlite``/``graph_nx``, ``graph_neo4j``) only answer :class:`GraphView` reads
and write a :class:`MergePlan`. Nothing here calls a model or a store.

Hubs: a vertex with more than ``hub_degree`` valid edges (a room, the robot carrying things) is
reached but not expanded through — its direct edges to the vertices already selected stay in
the induced subgraph, its other neighbours do not enter it. A seed is always expanded (it was
asked about). Without this, one hop into a room pulls every object in it.

What the resolver is shown (:meth:`LocalGraph.shown`): the *candidates* — old edges of G_local
that G_new does not restate and that share a vertex with G_new (the only old edges the
observation can contradict) — and the *evidence* — the edges of G_new sharing a vertex with a
candidate; through a hub, only a fresh edge with the same subject counts ("I at hall" is
evidence against "I at kitchen" although the robot is a hub; "jar at kitchen" is no evidence
about "table at kitchen"). Old edges that G_new restates are unchanged facts and are not shown;
fresh edges with no candidate next to them are added without asking. The price: that a thing
left a hub unseen is not inferred from the hub's other contents.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, runtime_checkable

from robomemory.core import PLACEMENT_RELATIONS, Route  # the extractor's placing words
from robomemory.memory.base import Triple

log = logging.getLogger(__name__)

Key = tuple[str, str, str]


def edge_key(t: Triple) -> Key:
    """(subject, relation, object): edges with equal keys are the same fact."""
    return (t.subject, t.relation, t.object)


@runtime_checkable
class GraphView(Protocol):
    """Read-only access to a robot's KG: what Algorithm 2 reads (valid edges only)."""

    def known_vertices(self, names: Iterable[str]) -> set[str]:
        """The subset of ``names`` that are vertices of the graph."""
        ...

    def similar_vertices(self, embedding: Sequence[float], n: int) -> list[tuple[str, float]]:
        """Top-n vertices by cosine similarity to ``embedding``, best first."""
        ...

    def neighbors(self, names: Collection[str], undirected: bool = False) -> set[str]:
        """Vertices one valid edge away from ``names``: outgoing, or either way."""
        ...

    def degrees(self, names: Collection[str]) -> dict[str, int]:
        """Valid edges (in + out) of each existing vertex of ``names``."""
        ...

    def edges_among(self, names: Iterable[str]) -> list[Triple]:
        """Valid edges of the subgraph induced by ``names``, by id."""
        ...

    def edges_by_id(self, ids: Collection[int]) -> list[Triple]:
        """The valid edges with these ids (missing or invalidated ids are left out)."""
        ...


# ---- selection -----------------------------------------------------------------------------
def top_n(view: GraphView, query_vectors: Iterable[Sequence[float]], n: int) -> set[str]:
    """V_similar: the union over queries of the top-n vertices by cosine similarity."""
    out: set[str] = set()
    for vec in query_vectors:
        out |= {name for name, _ in view.similar_vertices(vec, n)}
    return out


def k_hop(
    view: GraphView,
    seeds: Iterable[str],
    k: int,
    *,
    undirected: bool = False,
    hub_degree: int | None = None,
) -> set[str]:
    """Vertices within k valid edges of ``seeds`` (seeds included). A vertex reached at depth
    ≥ 1 with more than ``hub_degree`` edges is kept but not expanded (None: no hub limit)."""
    seen = view.known_vertices(seeds)
    expand = set(seen)
    for _ in range(k):
        if not expand:
            break
        reached = view.neighbors(expand, undirected) - seen
        seen |= reached
        expand = reached if hub_degree is None else non_hubs(view, reached, hub_degree)
    return seen


def non_hubs(view: GraphView, names: Collection[str], hub_degree: int) -> set[str]:
    """The vertices of ``names`` with at most ``hub_degree`` valid edges."""
    return {n for n, d in view.degrees(names).items() if d <= hub_degree}


@dataclass
class LocalGraph:
    """G_local of one update: V_merged, its old edges, G_new split into fresh and restated,
    and what the resolver is shown."""

    vertices: set[str]
    old: list[Triple]
    new: list[Triple]
    fresh: list[Triple]
    candidates: list[Triple] = field(default_factory=list)
    evidence: list[Triple] = field(default_factory=list)

    @property
    def edges(self) -> int:
        """|E(G_local)|: old edges plus G_new's fresh ones."""
        return len(self.old) + len(self.fresh)

    @property
    def sent_edges(self) -> int:
        """Edges in the resolver's prompt (0 when it is not asked)."""
        return len(self.candidates) + len(self.evidence) if self.needs_resolver else 0

    @property
    def sent_vertices(self) -> int:
        """Vertices named in the resolver's prompt (0 when it is not asked)."""
        if not self.needs_resolver:
            return 0
        return len(set().union(*map(_ends, self.candidates + self.evidence)))

    @property
    def needs_resolver(self) -> bool:
        return bool(self.candidates and self.evidence)


def select_local(
    view: GraphView,
    similar: set[str],
    new: Sequence[Triple],
    *,
    k: int,
    hub_degree: int | None,
) -> LocalGraph:
    """Algorithm 2, lines 1–6, and the resolver's share of G_local.

    V_retrieved = K-hop(V_similar). The old relations of every vertex G_new changes (a subject
    or object of a fresh edge) are added one hop out, hubs included (their direct edges only):
    an object's old location is then in G_local even when no query names it."""
    v_new = {t.subject for t in new} | {t.object for t in new}
    restated = {edge_key(t) for t in view.edges_among(v_new)}
    fresh = [t for t in new if edge_key(t) not in restated]
    changed = {t.subject for t in fresh} | {t.object for t in fresh}
    retrieved = k_hop(view, similar, k, hub_degree=hub_degree)
    anchors = view.neighbors(view.known_vertices(changed), undirected=False)
    merged = retrieved | anchors | v_new
    old = view.edges_among(merged)
    new_keys = {edge_key(t) for t in new}
    candidates = [t for t in old if edge_key(t) not in new_keys and _ends(t) & v_new]
    local = LocalGraph(vertices=merged, old=old, new=list(new), fresh=fresh)
    if not candidates:
        return local
    hubs = _hubs(view, set().union(*map(_ends, candidates)), hub_degree)
    fresh_keys = {edge_key(t) for t in fresh}

    def supports(t: Triple, cand: Triple) -> bool:
        """Evidence shares a vertex with the candidate; through a hub, only a fresh edge with
        the same subject (the hub itself changed, e.g. the robot moved) counts."""
        if _ends(t) & _ends(cand) - hubs:
            return True
        return t.subject == cand.subject and t.subject in hubs and edge_key(t) in fresh_keys

    local.evidence = [t for t in new if any(supports(t, c) for c in candidates)]
    supported = [c for c in candidates if any(supports(t, c) for t in local.evidence)]
    # A thing is in one place: an old edge can only be outdated by a fresh edge that places
    # the same thing elsewhere. Only those are put to the resolver (a small model otherwise
    # deletes whatever is listed first, e.g. "fridge in kitchen" when the robot enters).
    moved = {thing_of(t) for t in fresh}
    local.candidates = [c for c in supported if thing_of(c) in moved]
    local.evidence = [t for t in local.evidence if thing_of(t) in moved] if local.candidates else []
    return local


def stale_robot_facts(
    view: GraphView,
    place: str | None,
    holding: Collection[str],
    seen: Collection[str],
    *,
    holding_known: bool = False,
) -> list[int]:
    """Ids of the robot's own edges that perception now contradicts (perception is the
    authority on the robot itself): 'I at' another place than ``place``; 'I hold x' when x is
    seen lying in the scene (``seen``), or when ``holding`` is reported (non-empty, or
    ``holding_known``: empty hands) and x is not in it."""
    if not view.known_vertices(["I"]):
        return []
    held = {normalize_name(h) for h in holding}
    visible = {normalize_name(n) for n in seen} - held
    here = normalize_name(place) if place else None
    reported = bool(held) or holding_known
    out = []
    for t in view.edges_among({"I"} | view.neighbors({"I"})):
        if t.subject != "I" or t.id is None:
            continue
        if t.relation == "at" and here is not None and t.object != here:
            out.append(t.id)
        elif t.relation == "hold" and (t.object in visible or (reported and t.object not in held)):
            out.append(t.id)
    return sorted(out)


def settle_by_perception(
    local: LocalGraph, holding: Collection[str]
) -> tuple[LocalGraph, list[int]]:
    """Take off the resolver what perception already settles; return G_local with the
    candidates left and the ids of the old edges perception makes false.

    Perception is the authority on the robot itself: its own old edges ('I at', 'I hold')
    are decided by :func:`stale_robot_facts`, and a thing the robot holds now is nowhere else,
    so its old placements are false. Only the other candidates (a thing seen moved from one
    holder to another) are put to the resolver."""
    held = {normalize_name(h) for h in holding}
    outdated = [c.id for c in local.candidates if c.subject != "I" and c.subject in held]
    left = [c for c in local.candidates if c.subject != "I" and c.subject not in held]
    things = {thing_of(c) for c in left}
    evidence = [t for t in local.evidence if thing_of(t) in things] if left else []
    settled = replace(local, candidates=left, evidence=evidence)
    return settled, sorted(i for i in outdated if i is not None)


def thing_of(t: Triple) -> str:
    """What an edge places: the held object of 'I hold x', else the subject."""
    return t.object if t.subject == "I" and t.relation == "hold" else t.subject


def _ends(t: Triple) -> set[str]:
    return {t.subject, t.object}


def _hubs(view: GraphView, names: Collection[str], hub_degree: int | None) -> set[str]:
    if hub_degree is None:
        return set()
    return {n for n, d in view.degrees(names).items() if d > hub_degree}


# ---- merge ---------------------------------------------------------------------------------
@dataclass
class Resolution:
    """The resolver's answer applied to G_local: edges to add and store ids to invalidate."""

    add: list[Triple]
    invalidate: list[int] = field(default_factory=list)
    applied: int = 0
    rejected: int = 0


def resolver_ids(local: LocalGraph) -> dict[int, Triple]:
    """The small integer ids under which the resolver sees the candidates (1, 2, ...)."""
    return dict(enumerate(local.candidates, start=1))


def apply_decision(local: LocalGraph, delete: Sequence[int]) -> Resolution:
    """Turn the resolver's answer (the shown ids of the known edges now false) into a
    :class:`Resolution`, all or nothing: G_new's fresh edges are always added; an unknown id
    rejects the whole answer, and nothing is invalidated then (what the robot observes now is
    never dropped)."""
    ids = resolver_ids(local)
    if any(i not in ids for i in delete):
        log.warning("spatial resolver: rejected %d deletions (unknown id)", len(delete))
        return Resolution(add=list(local.fresh), rejected=len(delete))
    invalidate = sorted({ids[i].id for i in delete if ids[i].id is not None})
    return Resolution(add=list(local.fresh), invalidate=invalidate, applied=len(set(delete)))


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
class MergePlan:
    """Exactly what a store writes for a :class:`GraphChange` (ids of added edges are the
    store's to assign, in order)."""

    vertices: dict[str, list[float]]
    add: list[Triple]
    invalidate: list[Triple]
    prune: list[str]
    missing: list[int] = field(default_factory=list)


def plan_merge(view: GraphView, change: GraphChange) -> MergePlan:
    """Algorithm 2, lines 8–9: invalidate (history keeps the edge), add what is not already a
    valid edge (after the invalidations), prune vertices left without a valid edge."""
    wanted = list(dict.fromkeys(change.invalidate))
    found = {t.id: t for t in view.edges_by_id(wanted)}
    invalidate = [
        found[i].model_copy(update={"invalidated_at_step": change.step})
        for i in wanted
        if i in found
    ]
    names = set().union(*map(_ends, change.add)) if change.add else set()
    existing = view.known_vertices(names | set(change.vertices))
    vertices = {n: v for n, v in change.vertices.items() if n not in existing}
    for t in change.add:
        if not _ends(t) <= existing | set(vertices):
            raise ValueError(f"edge {t.text()!r} names a vertex without an embedding")
    gone = {edge_key(t) for t in invalidate}
    valid = {edge_key(t) for t in view.edges_among(names & existing)} - gone
    add: list[Triple] = []
    for t in change.add:
        if edge_key(t) not in valid:
            valid.add(edge_key(t))
            add.append(
                Triple(
                    subject=t.subject,
                    relation=t.relation,
                    object=t.object,
                    valid_from_step=change.step,
                    episode_id=change.episode_id,
                )
            )
    touched = set().union(*map(_ends, invalidate)) if invalidate else set()
    degree = dict.fromkeys(vertices, 0) | view.degrees(touched)
    for t in invalidate:
        for n in _ends(t):
            degree[n] -= 1
    for t in add:
        for n in _ends(t) & degree.keys():
            degree[n] += 1
    return MergePlan(
        vertices=vertices,
        add=add,
        invalidate=invalidate,
        prune=sorted(n for n, d in degree.items() if d <= 0),
        missing=[i for i in wanted if i not in found],
    )


# ---- names ---------------------------------------------------------------------------------
_ARTICLES = re.compile(r"^(the|a|an|some)\s+")
# Names by which an observation or a model refers to the robot itself (and what it carries).
_SELF = {"i", "me", "myself", "robot", "agent", "you", "yourself", "inventory", "your inventory"}


def normalize_name(name: str) -> str:
    """Canonical vertex name: lower case, single spaces, no leading article; the robot is 'I'."""
    text = " ".join(str(name).strip().lower().split())
    text = _ARTICLES.sub("", text)
    return "I" if text in _SELF else text


def normalize_relation(relation: str) -> str:
    return " ".join(str(relation).strip().lower().split())


def make_triple(subject: str, relation: str, obj: str) -> Triple | None:
    """A normalized triple, or None when a part is empty or it is a self-loop."""
    s, r, o = normalize_name(subject), normalize_relation(relation), normalize_name(obj)
    if not (s and r and o) or s == o:
        return None
    return Triple(subject=s, relation=r, object=o)


# ---- ways between places -------------------------------------------------------------------
COMPASS = ("north", "south", "east", "west")


def move_fact(left: str, direction: str, arrived: str) -> Triple | None:
    """What a move proves: going ``direction`` from ``left`` reached ``arrived``, so
    ``arrived`` lies that way of ``left`` ("kitchen east_of livingroom"); None for a move
    that is not a compass direction."""
    way = direction.strip().lower()
    return make_triple(arrived, f"{way}_of", left) if way in COMPASS else None


def routes_of(triples: Iterable[Triple]) -> list[Route]:
    """The ways between places that the map's valid compass facts give, in their order:
    "kitchen east_of livingroom" is going east from livingroom to the kitchen."""
    out: list[Route] = []
    for t in triples:
        way = t.relation.removesuffix("_of")
        if t.valid and t.relation.endswith("_of") and way in COMPASS:
            route = Route(src=t.object, direction=way, dst=t.subject)
            if route not in out:
                out.append(route)
    return out


# ---- where things are ----------------------------------------------------------------------


def places_of_things(triples: Iterable[Triple], max_hops: int = 3) -> dict[str, str]:
    """Where each thing of the map was last placed, as a place the robot stood at or a way
    led to: its valid placing edges followed up to ``max_hops`` ("cup in box", "box in
    hall": the cup is in the hall), the nearest place first. A thing with no valid place
    that is not held now (taken and used up, or put down unseen) is given where it was last
    found: the holder of its latest invalidated placing edge, followed the same way (a later
    task in a world set back finds it there; one not set back sees it gone there). The
    robot, the places and what it holds are no things; a thing no chain leads from to a
    place is left out."""
    triples = list(triples)
    places = {t.object for t in triples if t.subject == "I" and t.relation == "at"}
    places |= {p for r in routes_of(triples) for p in (r.src, r.dst)}
    held = {t.object for t in triples if t.valid and t.subject == "I" and t.relation == "hold"}
    holders: dict[str, list[str]] = {}
    found: dict[str, Triple] = {}  # each thing's latest invalidated placing edge
    for t in triples:
        if t.relation not in PLACEMENT_RELATIONS or t.subject == "I":
            continue
        if t.valid:
            holders.setdefault(t.subject, []).append(t.object)
        elif (last := found.get(t.subject)) is None or _placed_later(t, last):
            found[t.subject] = t

    def place_of(start: list[str]) -> str | None:
        if place := next((h for h in start if h in places), None):
            return place
        frontier, visited = start, set(start)
        for _ in range(max_hops - 1):
            frontier = [h for n in frontier for h in holders.get(n, []) if h not in visited]
            visited.update(frontier)
            if place := next((h for h in frontier if h in places), None):
                return place
        return None

    out: dict[str, str] = {}
    for thing in [*holders, *(t for t in found if t not in holders)]:
        if thing in places or thing in held:
            continue
        place = place_of(holders[thing] if thing in holders else [found[thing].object])
        if place is not None:
            out[thing] = place
    return out


def _placed_later(a: Triple, b: Triple) -> bool:
    """Whether invalidated placing edge ``a`` held later than ``b``: it ended later."""
    return (a.invalidated_at_step or 0, a.valid_from_step) > (
        b.invalidated_at_step or 0,
        b.valid_from_step,
    )
