"""Algorithm 2 (spatial KG update) on hand-built graphs, with a FAKE model and FAKE embedder.

The model's answers are scripted (ScriptedChatModel); embeddings are langchain's deterministic
hash embeddings (identical text → identical vector, different text → near-orthogonal), so a
query equal to a vertex name retrieves exactly that vertex. Graph store and files are real.
"""

from __future__ import annotations

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from pydantic import ValidationError

from robomemory.config import SpatialConfig
from robomemory.memory.spatial import SpatialMemory, render_triples
from robomemory.memory.stores.graph_nx import NetworkxGraphStore
from robomemory.structured import StructuredLLM
from robomemory.testing import ScriptedChatModel, message_text


class Script:
    """Scripted answers: ``rels`` for the extractor, ``decision`` for the resolver."""

    def __init__(self):
        self.rels: list[tuple[str, str, str]] = []
        self.decision: dict | str = {"delete": [], "modify": [], "add": []}
        self.prompts: dict[str, list[str]] = {"ExtractedTriples": [], "ResolverDecision": []}

    def __call__(self, schema, messages):
        self.prompts.setdefault(schema.__name__, []).append(message_text(messages))
        if schema.__name__ in ("ExtractedTriples", "ExtractedRelations"):  # free, grounded
            return {
                "relations": [{"subject": s, "relation": r, "object": o} for s, r, o in self.rels]
            }
        return self.decision


@pytest.fixture
def script():
    return Script()


@pytest.fixture
def llm(script):
    return StructuredLLM(ScriptedChatModel(responder=script), max_retries=0).for_node("spatial")


def make_memory(k_hops=2, top_n=1):
    store = NetworkxGraphStore("g")
    cfg = SpatialConfig(top_n=top_n, k_hops=k_hops)
    return SpatialMemory(cfg, store, DeterministicFakeEmbedding(size=64))


def step(mem, script, llm, n, rels, queries=(), decision=None, episode="ep"):
    script.rels = rels
    script.decision = {"delete": []} if decision is None else decision
    return mem.update("obs", list(queries), step=n, episode_id=episode, llm=llm)


def valid(mem):
    return {t.text() for t in mem.triples()}


def test_first_update_adds_relations_without_resolver(script, llm):
    mem = make_memory()
    stats = step(mem, script, llm, 1, [("The Apple", "in", "fridge"), ("robot", "hold", "cup")])
    assert valid(mem) == {"apple in fridge", "I hold cup"}
    assert (stats.vertices, stats.edges, stats.new_edges) == (4, 2, 2)
    assert script.prompts["ResolverDecision"] == []


def test_khop_bound_and_induced_subgraph(script, llm):
    """G_local holds the K-hop of the query's vertex; the resolver sees only its old edges
    that touch G_new (candidates) and the new edges next to them (evidence)."""
    mem = make_memory(k_hops=2)
    chain = [
        ("a", "east_of", "b"),
        ("b", "east_of", "c"),
        ("c", "east_of", "d"),
        ("d", "east_of", "e"),
    ]
    step(mem, script, llm, 1, chain)
    stats = step(mem, script, llm, 2, [("a", "near", "x")], queries=["a"])
    prompt = script.prompts["ResolverDecision"][-1]
    assert "1: a east_of b" in prompt and "- a near x" in prompt
    assert "b east_of c" not in prompt  # in G_local (2 hops) but untouched by G_new
    assert "c east_of d" not in prompt and "d east_of e" not in prompt
    assert stats.local_edges == 3  # a→b, b→c (K = 2 from a) + the new a→x
    assert (stats.sent_edges, stats.sent_vertices, stats.new_edges) == (2, 3, 1)


def test_nothing_to_resolve_skips_the_resolver(script, llm):
    mem = make_memory(k_hops=2)
    step(mem, script, llm, 1, [("a", "east_of", "b"), ("b", "east_of", "c")])
    stats = step(mem, script, llm, 2, [("x", "near", "y")], queries=["a"])
    assert script.prompts["ResolverDecision"] == [] and stats.sent_edges == 0
    assert stats.local_edges == 3 and valid(mem) >= {"x near y", "a east_of b"}


def test_hub_is_not_expanded_through(script, llm):
    """The robot carries many things (a hub): reaching it does not pull them all in."""
    mem = make_memory(k_hops=2)
    carried = [("I", "hold", f"thing{i}") for i in range(8)]
    step(mem, script, llm, 1, [("mug", "near", "I"), ("I", "at", "hall"), *carried])
    stats = step(mem, script, llm, 2, [("mug", "in", "sink")], queries=["mug"])
    assert stats.local_edges == 2  # mug→I, then I (9 edges > hub_degree 6) stops; + mug→sink
    prompt = script.prompts["ResolverDecision"][-1]
    assert "1: mug near I" in prompt and "thing0" not in prompt and "hall" not in prompt
    assert {t.text() for t in mem.retrieve(["mug"])} == {"mug near I", "mug in sink"}
    assert len(mem.retrieve(["I"])) == 11  # a queried hub is expanded: its 10 edges + mug→sink


def test_old_location_enters_local_graph_without_query(script, llm):
    mem = make_memory()
    step(mem, script, llm, 1, [("cup", "on", "table"), ("lamp", "on", "desk")])
    step(mem, script, llm, 2, [("cup", "in", "drawer")], queries=[])
    prompt = script.prompts["ResolverDecision"][-1]
    assert "1: cup on table" in prompt and "- cup in drawer" in prompt
    assert "lamp on desk" not in prompt


def test_invalidation_keeps_history_and_prunes(script, llm):
    mem = make_memory()
    step(mem, script, llm, 1, [("cup", "on", "table")])
    stats = step(mem, script, llm, 2, [("cup", "in", "drawer")], decision={"delete": [1]})
    assert valid(mem) == {"cup in drawer"}
    old = [t for t in mem.triples(include_invalid=True) if not t.valid]
    assert [(o.text(), o.valid_from_step, o.invalidated_at_step) for o in old] == [
        ("cup on table", 1, 2)
    ]
    assert "table" not in mem.store.vertex_names()  # isolated → pruned
    assert stats.ops_applied == 1 and stats.vertices == 2
    assert [t.text() for t in mem.retrieve(["cup"])] == ["cup in drawer"]
    assert "until step 2" in render_triples(mem.triples(include_invalid=True), history=True)


def test_an_answer_that_deletes_nothing_keeps_old_and_new(script, llm):
    """Both may be true ("milk at fridge" and "milk in kitchen"): the resolver decides."""
    mem = make_memory()
    step(mem, script, llm, 1, [("milk", "at", "fridge")])
    stats = step(mem, script, llm, 2, [("milk", "in", "kitchen")], decision={"delete": []})
    assert script.prompts["ResolverDecision"], "resolver must have been asked"
    assert valid(mem) == {"milk at fridge", "milk in kitchen"} and stats.ops_applied == 0


def test_entering_a_room_asks_nothing_about_what_is_there(script, llm):
    """The robot enters the kitchen: the resolver is asked about where the robot was, not
    about the fridge, which no new edge moves ('fridge in kitchen' stays; a small model
    deleted it when it was listed)."""
    mem = make_memory()
    step(mem, script, llm, 1, [("fridge", "in", "kitchen"), ("I", "at", "hall")])
    step(mem, script, llm, 2, [("I", "at", "kitchen")], queries=["kitchen"])
    prompt = script.prompts["ResolverDecision"][-1]
    assert "I at hall" in prompt and "fridge in kitchen" not in prompt
    assert "fridge in kitchen" in valid(mem)


BAD_ANSWERS = [
    {"delete": [99]},
    {"delete": [1, 99]},  # one bad id rejects the whole answer
    {"modify": [{"id": 1, "subject": "cup", "relation": "on", "object": "x"}]},  # old format
    {"delete": [], "add": [{"subject": "cup", "relation": "on", "object": "cup"}]},
    {"delete": ["one"]},
    "definitely not json",
]


@pytest.mark.parametrize("answer", BAD_ANSWERS)
def test_bad_resolver_answer_invalidates_nothing(script, llm, answer):
    mem = make_memory(top_n=1)
    step(mem, script, llm, 1, [("cup", "on", "table"), ("book", "on", "shelf")])
    before = [t.model_dump() for t in mem.triples(include_invalid=True)]
    stats = step(mem, script, llm, 2, [("cup", "in", "drawer")], queries=["book"], decision=answer)
    assert script.prompts["ResolverDecision"], "resolver must have been asked"
    after = [t.model_dump() for t in mem.triples(include_invalid=True)]
    assert after[:2] == before and [t["subject"] for t in after[2:]] == ["cup"]
    assert stats.ops_applied == 0 and valid(mem) == {
        "cup on table",
        "book on shelf",
        "cup in drawer",
    }
    # unknown ids and names outside the shown edges fail the schema itself (the grammar keeps
    # the model from writing them); what passes it is rejected whole when applied
    if isinstance(answer, dict):
        assert stats.ops_rejected in (0, sum(len(v) for v in answer.values()))


def test_the_resolver_may_name_only_shown_ids():
    from robomemory.prompts.spatial import resolver_model

    schema = resolver_model((1, 2))
    ok = schema.model_validate_json('{"delete": [2]}')
    assert ok.delete == [2]
    for bad in ('{"delete": [3]}', '{"delete": [], "add": []}', "{}", '{"delete": [1, 2, 1]}'):
        with pytest.raises(ValidationError):
            schema.model_validate_json(bad)


def test_rejected_answer_still_adds_observed_edges(script, llm):
    mem = make_memory()
    step(mem, script, llm, 1, [("cup", "on", "table")])
    step(mem, script, llm, 2, [("cup", "in", "drawer")], decision={"delete": [7]})
    assert valid(mem) == {"cup on table", "cup in drawer"}
    assert all(t.valid for t in mem.triples(include_invalid=True))


def test_a_duplicate_key_answer_invalidates_nothing(script, llm):
    """``{"delete": [], "delete": [1]}`` is refused whole (as the Mem0 updater refuses it),
    not read as its last key: the known edge stays valid, the observed one is added."""
    mem = make_memory()
    step(mem, script, llm, 1, [("cup", "on", "table")])
    stats = step(
        mem, script, llm, 2, [("cup", "in", "drawer")], decision='{"delete": [], "delete": [1]}'
    )
    assert valid(mem) == {"cup on table", "cup in drawer"}
    assert stats.ops_applied == 0


def test_extractor_failure_adds_nothing(script, llm):
    mem = make_memory()
    step(mem, script, llm, 1, [("cup", "on", "table")])
    script.rels = None  # the responder below now answers garbage for the extractor

    def broken(schema, messages):
        return "??" if schema.__name__ == "ExtractedTriples" else {}

    llm.llm.chat_model.responder = broken
    stats = mem.update("obs", [], step=2, episode_id="ep", llm=llm)
    assert valid(mem) == {"cup on table"} and stats.new_edges == 0
    assert llm.usage.fallbacks == 1


def test_rerunning_a_step_is_a_noop(script, llm):
    mem = make_memory()
    step(mem, script, llm, 1, [("cup", "on", "table")])
    again = step(mem, script, llm, 1, [("cup", "on", "floor")])
    assert again.skipped and valid(mem) == {"cup on table"}
    assert len(script.prompts["ExtractedTriples"]) == 1
    other = step(mem, script, llm, 1, [("cup", "on", "floor")], episode="ep2")
    assert not other.skipped


def test_lifelong_steps_stay_monotonic_across_tasks(script, llm):
    mem = make_memory()
    for n in range(3):
        step(mem, script, llm, n, [("cup", "on", "table")], episode="task1")
    stats = step(
        mem, script, llm, 0, [("cup", "in", "sink")], episode="task2", decision={"delete": [1]}
    )
    assert stats.step == 3  # task 2 counts from 0; the map keeps one clock per robot
    (old,) = [t for t in mem.triples(include_invalid=True) if not t.valid]
    assert (old.valid_from_step, old.invalidated_at_step) == (0, 3)
    assert step(mem, script, llm, 0, [], episode="task2").skipped


def test_retrieval_follows_edges_both_ways(script, llm):
    """A query about the apple finds 'I hold apple' although the edge points at the apple;
    the update's local subgraph still expands along outgoing edges only."""
    mem = make_memory(k_hops=1)
    step(mem, script, llm, 1, [("I", "hold", "apple"), ("I", "at", "kitchen")])
    assert {t.text() for t in mem.retrieve(["apple"])} == {"I hold apple"}
    assert mem.store.k_hop(["apple"], 1) == {"apple"}
    assert mem.store.k_hop(["apple"], 2, undirected=True) == {"apple", "I", "kitchen"}


def test_the_robots_place_and_holdings_follow_perception(script, llm):
    """Where the robot is and what it holds come from perception; its old facts that
    perception contradicts are invalidated, whatever the resolver says."""
    from robomemory.memory.base import SceneGrounding

    mem = make_memory()
    at_hall = SceneGrounding(names=["cup"], place="hall", holding=["cup"])
    mem.update("obs", [], step=1, episode_id="ep", llm=llm, grounding=at_hall)
    assert valid(mem) == {"I at hall", "I hold cup"}
    put_down = SceneGrounding(names=["cup", "table"], place="kitchen", holding=[])
    mem.update("obs", [], step=2, episode_id="ep", llm=llm, grounding=put_down)
    assert valid(mem) == {"I at kitchen"}


def test_perception_settles_what_it_knows_without_asking_the_resolver(script, llm):
    """The robot takes the cup and walks to the hall: its old place and the cup's old place are
    outdated by perception, no resolver call; a thing seen moved still goes to the resolver."""
    from robomemory.memory.base import SceneGrounding
    from robomemory.memory.spatial import make_triple

    mem = make_memory()
    kitchen = SceneGrounding(names=["table", "cup", "knife"], place="kitchen")
    first = [("I", "at", "kitchen"), ("table", "in", "kitchen"), ("cup", "on", "table")]
    first += [("knife", "on", "table")]
    new = [make_triple(*t) for t in first]
    mem.update("obs", [], step=1, episode_id="ep", llm=llm, grounding=kitchen, new=new)
    hall = SceneGrounding(names=[], place="hall", holding=["cup"])
    new = mem.extract("", llm, hall)  # the robot's own facts: no model call
    stats = mem.update("obs", ["cup"], step=2, episode_id="ep", llm=llm, grounding=hall, new=new)
    assert script.prompts["ResolverDecision"] == [] and stats.sent_edges == 0
    assert valid(mem) == {"I at hall", "I hold cup", "table in kitchen", "knife on table"}
    back = SceneGrounding(names=["knife", "sink"], place="kitchen", holding=["cup"])
    new = [*mem.extract("", llm, back), make_triple("knife", "in", "sink")]
    script.decision = {"delete": [1]}
    mem.update("obs", ["knife"], step=3, episode_id="ep", llm=llm, grounding=back, new=new)
    prompt = script.prompts["ResolverDecision"][-1]
    assert "1: knife on table" in prompt and "I at" not in prompt.split("New edges:")[0]
    assert "knife in sink" in valid(mem) and "knife on table" not in valid(mem)


def test_a_move_in_a_compass_direction_becomes_a_way_between_places(script, llm):
    """Walking east from the hall into the kitchen proves 'kitchen east_of hall'; the map's
    routes give it back as the way there. A move by name (navigate_to) proves no direction."""
    from robomemory.core import Route
    from robomemory.memory.base import SceneGrounding

    mem = make_memory()
    east = SceneGrounding(place="kitchen", arrived_by=("hall", "east"))
    mem.update("obs", [], step=1, episode_id="ep", llm=llm, grounding=east)
    north = SceneGrounding(place="pantry", arrived_by=("kitchen", "north"))
    mem.update("obs", [], step=2, episode_id="ep", llm=llm, grounding=north)
    by_name = SceneGrounding(place="hall", arrived_by=("pantry", "hall"))
    mem.update("obs", [], step=3, episode_id="ep", llm=llm, grounding=by_name)
    assert valid(mem) == {"I at hall", "kitchen east_of hall", "pantry north_of kitchen"}
    assert mem.routes() == [Route("hall", "east", "kitchen"), Route("kitchen", "north", "pantry")]


def test_move_facts_and_routes_are_pure_inverses():
    from robomemory.core import Route
    from robomemory.memory.base import Triple
    from robomemory.memory.spatial_algorithm import move_fact, routes_of

    fact = move_fact("Living Room", " East ", "the kitchen")
    assert fact is not None and fact.text() == "kitchen east_of living room"
    assert move_fact("hall", "up", "attic") is None
    gone = Triple(subject="attic", relation="north_of", object="hall", invalidated_at_step=3)
    near = Triple(subject="cup", relation="near", object="hall")
    assert routes_of([fact, fact, gone, near]) == [Route("living room", "east", "kitchen")]


def test_the_spatial_branch_sees_a_move_only_when_the_robot_changed_place():
    from robomemory.nodes.memory_branches import _arrived_by

    def state(outcome="succeeded", args=("east",), place="hall"):
        item = {"outcome": outcome, "args": list(args), "place": place}
        return {"trajectory": [item]}

    assert _arrived_by(state(), "kitchen") == ("hall", "east")
    assert _arrived_by(state(), "hall") is None  # did not move
    assert _arrived_by(state(outcome="failed"), "kitchen") is None
    assert _arrived_by(state(args=("milk", "fridge")), "kitchen") is None
    assert _arrived_by({"trajectory": []}, "kitchen") is None


def test_a_short_answer_in_the_same_place_naming_one_thing_asks_the_extractor_nothing():
    """'You take the knife from the counter.' places nothing the robot's own facts do not
    (it holds the knife now); 'You open the fridge, revealing a carrot.' places the carrot."""
    from robomemory.memory.base import SceneGrounding

    asked: list[str] = []

    def where(schema, messages):
        asked.append(schema.__name__)
        return {"carrot": ["in", "fridge"], "fridge": ["in", "kitchen"]}

    llm = StructuredLLM(ScriptedChatModel(responder=where), max_retries=0).for_node("relations")
    mem = make_memory()
    took = SceneGrounding(
        names=["knife", "counter"],
        place="kitchen",
        holding=["knife"],
        text="You take the knife from the counter.",
        short_here=True,
    )
    assert {t.text() for t in mem.extract("", llm, took)} == {"I at kitchen", "I hold knife"}
    assert asked == []
    opened = SceneGrounding(
        names=["fridge", "carrot"],
        place="kitchen",
        text="You open the fridge, revealing a carrot.",
        short_here=True,
    )
    assert "carrot in fridge" in {t.text() for t in mem.extract("", llm, opened)}
    assert asked == ["ExtractedRelations"]


def test_fixtures_are_placed_in_the_room_and_never_asked_about():
    """A world's fixtures (furniture, doors) are in the room they are seen in: a room of
    fixtures alone asks the extractor nothing; with a thing that moves, only that thing is a
    key of the answer's schema, the fixtures stay its holders."""
    from robomemory.memory.base import SceneGrounding

    asked: list[type] = []

    def where(schema, messages):
        asked.append(schema)
        return {"milk": ["in", "fridge"]}

    llm = StructuredLLM(ScriptedChatModel(responder=where), max_retries=0).for_node("relations")
    mem = make_memory()
    bathroom = SceneGrounding(
        names=["toilet"], fixtures=["toilet"], place="bathroom", text="You see a toilet."
    )
    assert {t.text() for t in mem.extract("", llm, bathroom)} == {
        "I at bathroom",
        "toilet in bathroom",
    }
    assert asked == []
    kitchen = SceneGrounding(
        names=["fridge", "table", "milk"],
        fixtures=["fridge", "table"],
        place="kitchen",
        text="The fridge contains some milk. You see a table.",
    )
    got = {t.text() for t in mem.extract("", llm, kitchen)}
    assert got == {"I at kitchen", "fridge in kitchen", "table in kitchen", "milk in fridge"}
    (schema,) = asked
    assert [f.alias for f in schema.model_fields.values()] == ["milk"]
    assert "fridge" in str(schema.model_json_schema())  # still a holder


def test_places_news_counts_the_things_besides_the_room():
    from robomemory.memory.base import SceneGrounding
    from robomemory.memory.spatial import places_news

    here = SceneGrounding(place="kitchen", short_here=True)
    moved = SceneGrounding(place="kitchen")
    assert not places_news(here, ["counter", "kitchen"])
    assert places_news(here, ["fridge", "carrot", "kitchen"])
    assert places_news(moved, ["counter", "kitchen"])  # a long answer or a move is read
    assert not places_news(moved, ["kitchen"])
    read = SceneGrounding(place="kitchen", stayed=True)  # a long answer where it was
    assert not places_news(read, ["milk", "kitchen"])
    assert places_news(read, ["fridge", "milk", "kitchen"])
    assert places_news(SceneGrounding(short_here=True), ["apple", "fridge"])  # no room known
    assert not places_news(SceneGrounding(short_here=True), ["apple"])
    furnished = SceneGrounding(place="kitchen", fixtures=["fridge", "table"])
    assert not places_news(furnished, ["fridge", "table", "kitchen"])  # fixtures only
    assert places_news(furnished, ["fridge", "milk", "kitchen"])


def test_things_are_placed_in_the_place_their_holders_lead_to():
    from robomemory.memory.base import Triple
    from robomemory.memory.spatial_algorithm import move_fact, places_of_things

    def t(s, r, o, gone=None):
        return Triple(subject=s, relation=r, object=o, invalidated_at_step=gone)

    triples = [
        t("I", "at", "kitchen", gone=4),  # a place the robot stood at, then left
        t("I", "at", "garden"),
        move_fact("kitchen", "east", "garden"),
        t("onion", "on", "garden"),
        t("milk", "in", "fridge"),
        t("fridge", "in", "kitchen"),
        t("egg", "in", "box"),
        t("box", "on", "shelf"),
        t("shelf", "at", "kitchen"),
        t("spoon", "in", "drawer"),  # no chain to a place
        t("cup", "on", "table", gone=6),  # moved since
        t("I", "hold", "knife"),
        t("knife", "on", "counter"),  # held now: goes where the robot goes
        t("counter", "in", "kitchen"),
    ]
    places = places_of_things(triples)
    assert places == {
        "onion": "garden",
        "milk": "kitchen",
        "fridge": "kitchen",
        "egg": "kitchen",
        "box": "kitchen",
        "shelf": "kitchen",
        "counter": "kitchen",
    }
    assert places_of_things(triples, max_hops=2)["box"] == "kitchen"
    # Taken, then used up or put down unseen: where it was last found.
    found = [
        *triples,
        t("carrot", "on", "shelf", gone=7),  # taken from the shelf, then used up
        t("I", "hold", "carrot", gone=9),
        t("pea", "in", "drawer", gone=3),  # no chain from the drawer to a place
        t("spoon", "on", "counter", gone=2),  # moved into the drawer: its valid place wins
    ]
    later = Triple(subject="carrot", relation="at", object="garden", valid_from_step=1)
    later.invalidated_at_step = 2
    got = places_of_things([*found, later])
    assert got["carrot"] == "kitchen"  # the shelf (step 0 to 7), not the garden (1 to 2)
    assert "pea" not in got and "spoon" not in got
    assert "knife" not in places_of_things([*found, t("knife", "on", "garden", gone=5)])
    assert "egg" not in places_of_things(triples, max_hops=2)
    assert places_of_things([]) == {}
