"""A robot that works in several worlds (sites, games) keeps a spatial map of each; its
long-term memories stay one."""

from __future__ import annotations

from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory.config import MemoryConfig
from robomemory.memory.base import MemoryHandles, Triple
from robomemory.memory.spatial_algorithm import GraphChange
from robomemory.memory.system import MemorySystem

DIM = 32


def place(system: MemorySystem, key: str, thing: str, holder: str, relation: str = "in") -> None:
    emb = DeterministicFakeEmbedding(size=DIM)
    vertices = {n: emb.embed_query(n) for n in (thing, holder)}
    add = [Triple(subject=thing, relation=relation, object=holder)]
    system.spatial.store.apply(
        GraphChange(key=key, step=1, episode_id=key, vertices=vertices, add=add)
    )


def spatial_ablated_and_kept(system: MemorySystem, executor) -> tuple:
    """(a context with spatial memory ablated, one with it kept) over ``system``."""
    from robomemory.config import AgentConfig
    from robomemory.context import AgentContext

    ablated = AgentContext(
        config=AgentConfig().ablate(["spatial"]), memory=system, executor=executor
    )
    return ablated, AgentContext(config=AgentConfig(), memory=system, executor=executor)


def texts(system: MemorySystem) -> set[str]:
    return {t.text() for t in system.spatial.triples()}


def test_each_world_has_its_own_map_and_the_robot_one_set_of_lessons(tmp_path):
    cfg = MemoryConfig(data_dir=tmp_path)
    with MemorySystem.open(cfg, DeterministicFakeEmbedding(size=DIM), "bot") as system:
        semantic = system.semantic
        system.use_world("house_a")
        place(system, "a1", "milk", "fridge")
        system.use_world("house_b")
        assert texts(system) == set()  # house B's kitchen is not house A's
        place(system, "b1", "milk", "cupboard")
        assert system.handles("ep").spatial_graph_id == "spatial_bot__house_b"
        system.use_world("house_a")
        assert texts(system) == {"milk in fridge"}
        assert system.semantic is semantic  # lessons are the robot's, in every world
    with MemorySystem.open(cfg, DeterministicFakeEmbedding(size=DIM), "bot") as system:
        assert texts(system) == set()  # the robot's own single map is a third one
        system.use_world("house_b")
        assert texts(system) == {"milk in cupboard"}  # kept on disk


def test_a_task_starts_knowing_where_this_worlds_map_last_placed_things(tmp_path):
    """What an earlier task in this world saw stays in its map: a later task starts knowing
    where (a thing in a holder in a room is in that room), corrected by what the robot sees
    (a real TextWorld game); the ablation of spatial memory starts knowing nothing."""
    from robomemory.config import AgentConfig
    from robomemory.context import AgentContext
    from robomemory.executors.envs.textworld import TextWorldExecutor, bundled_game
    from robomemory.grounding import update_seen
    from robomemory.nodes.start import recall_places

    cfg = MemoryConfig(data_dir=tmp_path)
    with MemorySystem.open(cfg, DeterministicFakeEmbedding(size=DIM), "bot") as system:
        system.use_world("six_rooms")
        place(system, "k1", "I", "kitchen", relation="at")  # it stood in the kitchen
        place(system, "k2", "carrot", "fridge")
        place(system, "k3", "fridge", "kitchen")
        place(system, "k4", "soap", "bathroom")  # the robot never stood in a "bathroom"
        executor = TextWorldExecutor(bundled_game("cooking_6rooms"))
        try:
            _, observation = executor.reset()
            ablated = AgentContext(
                config=AgentConfig().ablate(["spatial"]), memory=system, executor=executor
            )
            assert recall_places(ablated) == {}
            ctx = AgentContext(config=AgentConfig(), memory=system, executor=executor)
            kept = recall_places(ctx)
            assert kept == {"carrot": "kitchen", "fridge": "kitchen"}
            space = executor.action_space()
            seen = update_seen(kept, observation.place, space.candidates, space.verbs)
            assert seen["carrot"] == "kitchen" and observation.place != "kitchen"
        finally:
            executor.close()


def test_handles_name_the_world_map_only_when_there_is_a_world():
    assert MemoryHandles.for_robot("bot", "e").spatial_graph_id == "spatial_bot"
    assert MemoryHandles.for_robot("bot", "e", "tw_1_room").spatial_graph_id == (
        "spatial_bot__tw_1_room"
    )
    odd = MemoryHandles.for_robot("bot", "e", "tw/1 room").spatial_graph_id
    assert odd.startswith("spatial_bot__tw_1_room~")  # readable, and a map of its own


def test_the_start_of_a_task_gives_navigation_the_ways_this_worlds_map_knows(tmp_path):
    """The spatial map of a world keeps the ways the robot walked there; a later task in that
    world starts with them in its navigation (a real TextWorld game), and the ablation of
    spatial memory starts without them."""
    from robomemory.executors.envs.textworld import TextWorldExecutor, bundled_game
    from robomemory.nodes.start import recall_routes

    cfg = MemoryConfig(data_dir=tmp_path)
    with MemorySystem.open(cfg, DeterministicFakeEmbedding(size=DIM), "bot") as system:
        system.use_world("six_rooms")
        walked = [("corridor", "bathroom"), ("livingroom", "corridor"), ("kitchen", "livingroom")]
        emb = DeterministicFakeEmbedding(size=DIM)
        for n, (there, here) in enumerate(walked):
            vertices = {r: emb.embed_query(r) for r in (there, here)}
            add = [Triple(subject=there, relation="east_of", object=here)]
            change = GraphChange(key=f"k{n}", step=n, episode_id="e", vertices=vertices, add=add)
            system.spatial.store.apply(change)
        executor = TextWorldExecutor(bundled_game("cooking_6rooms"))
        try:
            executor.reset()
            ablated, ctx = spatial_ablated_and_kept(system, executor)
            assert recall_routes(ablated) == 0
            assert "navigate_to(kitchen)" not in map(str, executor.action_space().candidates)
            assert recall_routes(ctx) == 3
            assert "navigate_to(kitchen)" in map(str, executor.action_space().candidates)
        finally:
            executor.close()


def test_the_start_of_a_task_gives_a_teleport_the_rooms_this_worlds_map_knows(tmp_path):
    """ScienceWorld teleports only to rooms seen this task; the rooms the map knows the robot
    stood in are a teleport away from the start (a real ScienceWorld task), and the ablation
    of spatial memory starts without them."""
    from robomemory.executors.envs.scienceworld import ScienceWorldExecutor
    from robomemory.nodes.start import recall_rooms

    cfg = MemoryConfig(data_dir=tmp_path)
    with MemorySystem.open(cfg, DeterministicFakeEmbedding(size=DIM), "bot") as system:
        system.use_world("sw")
        place(system, "k1", "I", "foundry", relation="at")
        place(system, "k2", "I", "moon base", relation="at")  # no room of this world
        assert system.spatial.places() == ["foundry", "moon base"]
        executor = ScienceWorldExecutor("find-plant", variation=1, simplifications="easy")
        try:
            executor.reset()
            ablated, ctx = spatial_ablated_and_kept(system, executor)
            assert recall_rooms(ablated) == 0
            assert "navigate_to(foundry)" not in map(str, executor.action_space().candidates)
            assert recall_rooms(ctx) == 1
            assert "navigate_to(foundry)" in map(str, executor.action_space().candidates)
        finally:
            executor.close()
