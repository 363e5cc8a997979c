"""Algorithm 2's selection and merge as pure functions: no store, no model, no embedder.

The graph is plain data (a list of triples and one-hot vertex vectors) behind a twenty-line
:class:`GraphView`; every figure below can be checked by hand."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

import numpy as np
import pytest

from robomemory.memory.base import Triple
from robomemory.memory.spatial_algorithm import (
    GraphChange,
    GraphView,
    apply_decision,
    k_hop,
    make_triple,
    plan_merge,
    resolver_ids,
    select_local,
    settle_by_perception,
    stale_robot_facts,
    thing_of,
    top_n,
)


class ListView:
    """A GraphView over a list of valid triples; vertex i has the one-hot vector e_i."""

    def __init__(self, edges: Sequence[tuple[str, str, str]]):
        self.edges = [
            Triple(id=i, subject=s, relation=r, object=o) for i, (s, r, o) in enumerate(edges, 1)
        ]
        self.names = sorted({n for t in self.edges for n in (t.subject, t.object)})

    def vec(self, name: str) -> list[float]:
        return list(np.eye(len(self.names))[self.names.index(name)])

    def known_vertices(self, names: Iterable[str]) -> set[str]:
        return set(names) & set(self.names)

    def similar_vertices(self, embedding: Sequence[float], n: int) -> list[tuple[str, float]]:
        scores = [(name, float(np.dot(self.vec(name), embedding))) for name in self.names]
        return sorted(scores, key=lambda x: -x[1])[:n]

    def neighbors(self, names: Collection[str], undirected: bool = False) -> set[str]:
        out = {t.object for t in self.edges if t.subject in names}
        return out | ({t.subject for t in self.edges if t.object in names} if undirected else set())

    def degrees(self, names: Collection[str]) -> dict[str, int]:
        ends = [(t.subject, t.object) for t in self.edges]
        return {n: sum(n in e for e in ends) for n in self.known_vertices(names)}

    def edges_among(self, names: Iterable[str]) -> list[Triple]:
        names = set(names)
        return [t for t in self.edges if t.subject in names and t.object in names]

    def edges_by_id(self, ids: Collection[int]) -> list[Triple]:
        return [t for t in self.edges if t.id in ids]


def T(s: str, r: str, o: str) -> Triple:
    return Triple(subject=s, relation=r, object=o)


HOUSE = [
    ("I", "at", "hall"),  # 1
    ("hall", "north_of", "kitchen"),  # 2
    ("kitchen", "south_of", "hall"),  # 3
    ("cup", "on", "table"),  # 4
    ("table", "at", "kitchen"),  # 5
    ("knife", "on", "table"),  # 6
    *[(f"jar{i}", "at", "kitchen") for i in range(6)],  # 7-12: the kitchen is a hub
]


def test_the_test_view_is_a_graph_view():
    assert isinstance(ListView(HOUSE), GraphView)


def test_top_n_is_the_union_over_queries():
    view = ListView(HOUSE)
    assert top_n(view, [view.vec("cup"), view.vec("hall")], 1) == {"cup", "hall"}
    assert len(top_n(view, [view.vec("cup")], 3)) == 3


@pytest.mark.parametrize(
    ("seeds", "k", "undirected", "hub", "expected"),
    [
        (["cup"], 0, False, None, {"cup"}),
        (["cup"], 1, False, None, {"cup", "table"}),
        (["cup"], 2, False, None, {"cup", "table", "kitchen"}),
        (["cup"], 3, False, None, {"cup", "table", "kitchen", "hall"}),
        (["cup"], 3, False, 6, {"cup", "table", "kitchen"}),  # kitchen: 9 edges, not expanded
        (["table"], 1, True, 6, {"table", "cup", "knife", "kitchen"}),
        (["kitchen"], 1, True, 6, {"kitchen", "hall", "table"} | {f"jar{i}" for i in range(6)}),
        (["nowhere"], 2, True, None, set()),
    ],
)
def test_k_hop(seeds, k, undirected, hub, expected):
    assert k_hop(ListView(HOUSE), seeds, k, undirected=undirected, hub_degree=hub) == expected


def test_moving_object_brings_its_old_location_without_a_query():
    view = ListView(HOUSE)
    local = select_local(view, set(), [T("cup", "in", "sink")], k=2, hub_degree=6)
    assert [t.text() for t in local.fresh] == ["cup in sink"]
    assert {"cup", "sink", "table"} <= local.vertices
    assert [t.id for t in local.candidates] == [4]  # cup on table
    assert [t.text() for t in local.evidence] == ["cup in sink"]
    assert local.needs_resolver and (local.sent_edges, local.sent_vertices) == (2, 3)


def test_only_an_edge_a_fresh_edge_moves_goes_to_the_resolver():
    """The robot walks to the kitchen and sees the table with the cup on it and no knife:
    'I at hall' is put to the resolver (the robot is now elsewhere); 'knife on table' is not
    (no new edge places the knife elsewhere: absence is not taken as a move), and the
    restated 'cup on table' moves nothing."""
    view = ListView(HOUSE)
    new = [T("I", "at", "kitchen"), T("table", "at", "kitchen"), T("cup", "on", "table")]
    local = select_local(view, {"knife"}, new, k=1, hub_degree=6)
    assert [t.id for t in local.candidates] == [1]  # I at hall
    assert [t.text() for t in local.evidence] == ["I at kitchen"]
    assert local.edges == len(local.old) + 1  # one fresh edge: I at kitchen
    far = select_local(view, {"hall"}, new[1:], k=0, hub_degree=6)
    assert "hall" in far.vertices and far.candidates == []  # retrieved, but G_new is elsewhere


def test_what_i_hold_is_the_thing_an_edge_places():
    view = ListView(HOUSE)
    local = select_local(view, set(), [T("I", "hold", "cup")], k=2, hub_degree=6)
    assert [t.id for t in local.candidates] == [4]  # cup on table: the cup moved to the robot
    assert thing_of(T("I", "hold", "cup")) == "cup" and thing_of(T("cup", "on", "table")) == "cup"


def test_perception_settles_the_robot_and_what_it_holds_before_the_resolver():
    """The robot walks into the kitchen holding the cup, and sees the knife in the sink:
    'I at hall' is perception's to decide and 'cup on table' is false (a held thing is nowhere
    else), so only the knife's move is left to the resolver, with its own evidence."""
    view = ListView(HOUSE)
    new = [T("I", "at", "kitchen"), T("I", "hold", "cup"), T("knife", "in", "sink")]
    local = select_local(view, {"knife", "cup"}, new, k=1, hub_degree=6)
    assert sorted(t.id for t in local.candidates) == [1, 4, 6]
    settled, outdated = settle_by_perception(local, ["Cup"])
    assert outdated == [4]  # cup on table
    assert [t.id for t in settled.candidates] == [6]  # knife on table
    assert [t.text() for t in settled.evidence] == ["knife in sink"]
    alone, outdated = settle_by_perception(
        select_local(view, {"cup"}, new[:2], k=1, hub_degree=6), ["cup"]
    )
    assert not alone.needs_resolver and alone.sent_edges == 0 and outdated == [4]


def test_perception_outdates_the_robots_own_facts():
    view = ListView([("I", "at", "hall"), ("I", "hold", "cup"), ("I", "hold", "key"), *HOUSE[1:]])
    # in the kitchen, holding the key; the cup is seen on the table
    assert stale_robot_facts(view, "kitchen", ["key"], ["cup", "table"]) == [1, 2]
    # nothing reported held and the cup not seen: only the place is known to have changed
    assert stale_robot_facts(view, "kitchen", [], ["table"]) == [1]
    # a world that reports holding at every step says empty hands: both holds are stale
    # (a thing put where it is not seen, no names reported, was still held on the map)
    assert stale_robot_facts(view, "hall", [], [], holding_known=True) == [2, 3]
    assert stale_robot_facts(view, "hall", ["cup", "key"], []) == []
    assert stale_robot_facts(ListView(HOUSE[1:]), "hall", [], []) == []  # no robot yet


def test_through_a_hub_only_a_fresh_edge_of_the_same_subject_is_evidence():
    """jar0 went into the bag: the kitchen's (a hub) other contents are not evidence, and
    without the bag edge jar0's absence is not inferred through the hub."""
    view = ListView(HOUSE)
    new = [T(f"jar{i}", "at", "kitchen") for i in range(1, 6)] + [T("jar0", "in", "bag")]
    local = select_local(view, set(), new, k=2, hub_degree=6)
    assert [t.id for t in local.candidates] == [7]
    assert [t.text() for t in local.evidence] == ["jar0 in bag"]
    assert not select_local(view, set(), new[:-1], k=2, hub_degree=6).needs_resolver


def test_nothing_to_resolve_without_an_old_edge_next_to_g_new():
    local = select_local(ListView(HOUSE), {"cup"}, [T("lamp", "on", "desk")], k=2, hub_degree=6)
    assert not local.needs_resolver and local.sent_edges == 0 and local.candidates == []


def _moved_cup():
    view = ListView(HOUSE)
    new = [T("cup", "in", "sink"), T("I", "at", "kitchen")]
    return view, select_local(view, set(), new, k=2, hub_degree=6)


def test_decision_maps_shown_ids_to_store_ids():
    _, local = _moved_cup()
    assert {i: t.id for i, t in resolver_ids(local).items()} == {1: 1, 2: 4}
    res = apply_decision(local, delete=[2, 1])
    assert res.invalidate == [1, 4] and res.applied == 2 and res.rejected == 0
    assert [t.text() for t in res.add] == ["cup in sink", "I at kitchen"]  # G_new, once


@pytest.mark.parametrize("delete", [[3], [1, 3], [0]])
def test_decision_is_all_or_nothing(delete):
    _, local = _moved_cup()
    res = apply_decision(local, delete=delete)
    assert res.invalidate == [] and res.applied == 0 and res.rejected == len(delete)
    assert [t.text() for t in res.add] == ["cup in sink", "I at kitchen"]  # G_new still added


def test_decision_that_deletes_nothing_adds_g_new_only():
    _, local = _moved_cup()
    res = apply_decision(local, delete=[])
    assert res.invalidate == [] and (res.applied, res.rejected) == (0, 0)
    assert [t.text() for t in res.add] == ["cup in sink", "I at kitchen"]


def test_merge_plan_invalidates_adds_and_prunes():
    view = ListView(HOUSE)
    change = GraphChange(
        key="e:2",
        step=7,
        episode_id="e",
        vertices={"sink": [1.0], "cup": [0.0]},
        add=[T("cup", "in", "sink"), T("table", "at", "kitchen"), T("cup", "in", "sink")],
        invalidate=[4, 6, 99],
    )
    plan = plan_merge(view, change)
    assert list(plan.vertices) == ["sink"]  # cup exists: its embedding is kept
    assert [(t.text(), t.valid_from_step, t.episode_id) for t in plan.add] == [
        ("cup in sink", 7, "e")  # table at kitchen is already valid; the repeat is dropped
    ]
    assert [(t.id, t.invalidated_at_step) for t in plan.invalidate] == [(4, 7), (6, 7)]
    assert plan.prune == ["knife"] and plan.missing == [99]


def test_merge_plan_readds_an_edge_it_invalidates_and_rejects_unknown_vertices():
    view = ListView(HOUSE)
    change = GraphChange(key="k", step=3, episode_id="e", add=[T("cup", "on", "table")])
    assert plan_merge(view, change).add == []
    change.invalidate = [4]
    assert [t.text() for t in plan_merge(view, change).add] == ["cup on table"]
    with pytest.raises(ValueError, match="'cup on shelf' names a vertex without an embedding"):
        plan_merge(
            view, GraphChange(key="k", step=3, episode_id="e", add=[T("cup", "on", "shelf")])
        )


def test_a_new_vertex_without_an_edge_is_pruned():
    change = GraphChange(key="k", step=1, episode_id="e", vertices={"ghost": [1.0]})
    assert plan_merge(ListView(HOUSE), change).prune == ["ghost"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (("The Apple", "ON", "a  Table"), "apple on table"),
        (("robot", "hold", "your inventory"), None),  # I hold I: a self-loop
        (("you", "at", "Kitchen"), "I at kitchen"),
        (("", "on", "table"), None),
    ],
)
def test_make_triple_normalizes(raw, expected):
    t = make_triple(*raw)
    assert (t.text() if t else None) == expected


def test_the_robot_as_a_hub_still_moves():
    """Carrying seven things, the robot is a hub: its move is evidence against its old place,
    what it still carries is not shown."""
    carried = [("I", "hold", f"t{i}") for i in range(7)]
    view = ListView([("I", "at", "hall"), *carried])
    new = [T("I", "at", "kitchen"), *(T(*c) for c in carried)]
    local = select_local(view, set(), new, k=2, hub_degree=6)
    assert [t.text() for t in local.candidates] == ["I at hall"]
    assert [t.text() for t in local.evidence] == ["I at kitchen"]
    assert local.sent_edges == 2 and local.edges == 9
