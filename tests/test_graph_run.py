"""The agent graph end to end on real TextWorld games, with a FAKE model scripted per test."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langgraph.checkpoint.sqlite import SqliteSaver

from robomemory.executors.envs.textworld import (
    TextWorldExecutor,
    bundled_game,
    walkthrough_actions,
)
from robomemory.graphs.agent import build_agent
from robomemory.testing import PlanScript, message_text, plan_of, scripted_llm


@pytest.fixture(autouse=True)
def ask_the_planner_every_step(agent_config):
    """These tests script the planner's answers step by step: it is asked at every step, the
    effects table deciding none (``table_decides``), and offered every action possible now
    (uncut, still in the table's order), so each scripted action the world affords is one."""
    agent_config.table_decides = False
    agent_config.max_candidates = None


def walkthrough_planner(game: str) -> PlanScript:
    """Plan answers that follow the game's walkthrough one action per plan."""
    actions = iter(walkthrough_actions(bundled_game(game)))

    def plan(_messages):
        a = next(actions)
        return [(a.verb, a.args)]

    return PlanScript(plan, "follow the recipe")


APPROVE = {
    "CriticVerdict": lambda m: {"approve": True, "reason": "fine"},
    "StepSummary": lambda m: {"summary": "I acted in the kitchen."},
    "MemoryQueries": lambda m: {"queries": ["where is the cookbook"]},
}


def test_scripted_walkthrough_wins_a_real_game(agent_config, make_agent):
    llm = scripted_llm({"Plan": walkthrough_planner("cooking_1room"), **APPROVE})
    agent = make_agent(agent_config, TextWorldExecutor(bundled_game("cooking_1room")), llm)
    result = agent.run(thread_id="win")
    assert result.success and result.end_reason == "won"  # the game ends when the meal is eaten
    assert result.gc == 1.0
    # the walkthrough ends with task_complete(), never needed: the world reported the win first
    assert result.steps == len(walkthrough_actions(bundled_game("cooking_1room"))) - 1
    # every step went through perception and all four memory branches, then consolidation
    for node in ("perceive", "temporal", "spatial", "semantic", "episodic", "recall"):
        assert result.usage[node]["runs"] == result.steps, node
    assert result.usage["consolidate"]["runs"] == 1
    # S and Q only for answers too long to be their own summary (the room at the start): in
    # one room a short answer keeps the step's queries
    calls = llm.chat_model.calls
    assert 1 <= calls.count("MemoryQueries") == calls.count("StepSummary") < result.steps
    # the relation extractor reads the room at the start, not the recipe read where the robot
    # stood (it names the milk alone), nor "You take the milk from the fridge.": it is held
    assert calls.count("StepSummary") == 2 and calls.count("ExtractedRelations") == 1
    state = agent.state("win")
    assert state["temporal"] and state["handles"]["robot_id"] == "test-bot"


def test_critic_skips_first_step_and_always_reject_ends_at_max_steps(agent_config, make_agent):
    proposals: list[str] = []

    def reject(messages):
        text = message_text(messages)
        assert "Last result: step" in text  # the newest result, whole, before the proposal
        proposals.append(text.rsplit("Proposed next action:", 1)[1].strip())
        return {"approve": False, "reason": "I never like it"}

    plan = plan_of(("look", []), ("inventory", []), ("look", []))
    llm = scripted_llm({"Plan": plan, "CriticVerdict": reject})
    agent_config.max_steps = 4
    agent = make_agent(agent_config, TextWorldExecutor(bundled_game("cooking_1room")), llm)
    result = agent.run(thread_id="reject")
    assert result.end_reason == "max_steps" and result.steps == 4
    assert proposals and set(proposals) == {"inventory()"}  # never the first step of a plan
    assert [t["action"] for t in result.trajectory] == ["look()"] * 4
    assert result.usage["planner"]["runs"] == 4


class CrashOnce:
    """Wraps a real executor; raises once on the n-th execute, as a crashing driver would."""

    def __init__(self, inner: TextWorldExecutor, crash_at: int):
        self.inner, self.crash_at, self.calls, self.crashed = inner, crash_at, 0, False

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def execute(self, action, timeout_s=None, cancel=None):
        self.calls += 1
        if self.calls == self.crash_at and not self.crashed:
            self.crashed = True
            raise RuntimeError("executor crashed")
        return self.inner.execute(action, timeout_s, cancel)


def test_crash_then_resume_finishes_without_rerunning_nodes(agent_config, make_agent):
    game = "cooking_6rooms"
    llm = scripted_llm({"Plan": walkthrough_planner(game), **APPROVE})
    executor = CrashOnce(TextWorldExecutor(bundled_game(game)), crash_at=3)
    agent = make_agent(agent_config, executor, llm)
    with pytest.raises(RuntimeError, match="executor crashed"):
        agent.run(thread_id="crash")
    before = agent.state("crash")
    assert before["step"] == 2 and len(before["trajectory"]) == 2
    calls_before = list(llm.chat_model.calls)

    result = agent.run(thread_id="crash", resume=True)
    assert result.success and result.gc == 1.0
    assert result.steps == len(walkthrough_actions(bundled_game(game))) - 1
    steps = [t["step"] for t in result.trajectory]
    assert steps == list(range(1, result.steps + 1))  # nothing executed twice
    # perception ran once per step overall: nothing before the crash ran again
    all_calls = llm.chat_model.calls
    assert all_calls[: len(calls_before)] == calls_before
    assert all_calls.count("MemoryQueries") < result.steps  # short answers keep theirs
    assert all_calls.count("Plan") == result.steps
    # the summarizer is asked only for answers too long to be their own summary
    assert 0 < all_calls.count("StepSummary") < result.steps


def meeting(parties: int, after: dict[str, int]):
    """Scripted answers that wait for each other: a kind's calls past its first ``after[kind]``
    meet at one barrier, which breaks (and fails the run) unless all are in flight."""
    barrier = threading.Barrier(parties, timeout=10)
    seen: dict[str, int] = {}

    def meet(kind, answer):
        def fn(_messages):
            seen[kind] = seen.get(kind, 0) + 1
            if seen[kind] > after.get(kind, 0):
                barrier.wait()
            return answer

        return fn

    return barrier, meet


def test_summarizer_and_query_generator_run_concurrently(agent_config, make_agent):
    """The task's first step asks the memory about the task itself (no query generator); the
    next step's summarizer and query generator are asked at once."""
    barrier, meet = meeting(2, {"StepSummary": 1})
    llm = scripted_llm(
        {
            "StepSummary": meet("StepSummary", {"summary": "I see a kitchen."}),
            "MemoryQueries": meet("MemoryQueries", {"queries": ["where is the cookbook"]}),
            "Plan": plan_of(("look", [])),
        }
    )
    agent_config.max_steps = 2  # the game offers no finishing
    agent = make_agent(agent_config, TextWorldExecutor(bundled_game("cooking_1room")), llm)
    result = agent.run(thread_id="perceive")
    assert result.usage["perceive"]["runs"] == 2 and not barrier.broken
    calls = llm.chat_model.calls
    assert calls.index("Plan") < calls.index("MemoryQueries")  # none before the first plan
    assert calls.count("MemoryQueries") == 1 and calls.count("StepSummary") == 2


def test_the_relation_retriever_runs_beside_the_summarizer_and_feeds_the_map(
    agent_config, make_agent
):
    """With grounded perception the extractor reads the world's words, so it is asked while
    the step summarizer is (the barrier breaks unless three calls are in flight); what it
    places reaches the spatial map, and the spatial branch asks no extractor itself."""
    barrier, meet = meeting(3, {"StepSummary": 1, "ExtractedRelations": 1})
    llm = scripted_llm(
        {
            "StepSummary": meet("StepSummary", {"summary": "I see a kitchen."}),
            "MemoryQueries": meet("MemoryQueries", {"queries": ["where is the milk"]}),
            "ExtractedRelations": meet("ExtractedRelations", {"milk": ["in", "fridge"]}),
            "Plan": plan_of(("look", [])),
        }
    )
    agent_config.max_steps = 2  # the second step's three calls meet; no finishing offered
    agent = make_agent(agent_config, TextWorldExecutor(bundled_game("cooking_1room")), llm)
    result = agent.run(thread_id="relations")
    assert not barrier.broken
    assert result.usage["spatial_relations"]["calls"] == 2 and result.usage["spatial"]["calls"] == 0
    assert "milk in fridge" in {t.text() for t in agent.context.memory.spatial.triples()}


def test_without_spatial_memory_the_relation_retriever_asks_nothing(agent_config, make_agent):
    llm = scripted_llm({"Plan": plan_of(("task_complete", [])), **APPROVE})
    agent_config.max_steps = 1
    agent_config.memory.spatial.enabled = False
    agent = make_agent(agent_config, TextWorldExecutor(bundled_game("cooking_1room")), llm)
    result = agent.run(thread_id="no-spatial")
    assert result.usage["spatial_relations"]["calls"] == 0
    assert "ExtractedRelations" not in llm.chat_model.calls


def test_four_memory_branches_run_concurrently(agent_config, make_agent):
    llm = scripted_llm(
        {
            "Plan": plan_of(("look", [])),
        }
    )
    agent_config.max_steps = 2
    agent = make_agent(agent_config, TextWorldExecutor(bundled_game("cooking_1room")), llm)
    memory = agent.context.memory
    barrier = threading.Barrier(4, timeout=10)
    met: list[str] = []

    def meeting(name, fn):
        def wrapped(*args, **kwargs):
            barrier.wait()  # all four branches must be in flight at once
            met.append(name)
            return fn(*args, **kwargs)

        return wrapped

    memory.temporal.update = meeting("temporal", memory.temporal.update)
    memory.spatial.update = meeting("spatial", memory.spatial.update)
    memory.semantic.retrieve = meeting("semantic", memory.semantic.retrieve)
    memory.episodic.retrieve = meeting("episodic", memory.episodic.retrieve)
    result = agent.run(thread_id="branches")
    assert result.steps == 2 and not barrier.broken
    assert sorted(met) == sorted(["temporal", "spatial", "semantic", "episodic"] * 2)


def test_lifelong_second_task_recalls_and_rewards_long_term_memory(agent_config, make_agent):
    """Task 1 writes semantic + episodic memory; task 2 of the same robot retrieves it through
    the graph, and its success raises the retrieved items' Q (MemRL)."""
    from robomemory.models import make_embedder

    game = "cooking_1room"
    lessons = {
        "SemanticInsights": lambda m: {
            "helped": ["pick_up(milk)"],
            "hurt": [],
            "task": ["To cook a meal, read the cookbook, get the ingredients, prepare the meal."],
        },
        "EpisodeRecord": lambda m: {"summary": "Read the cookbook, took the milk, ate the meal."},
        "MemoryDecision": lambda m: {"event": "ADD"},
    }
    embedder = make_embedder(agent_config.model)  # real MiniLM: similarity must mean something
    results = []
    prompts: list[str] = []
    for episode in ("task-1", "task-2"):
        walk = walkthrough_planner(game)
        record = PlanScript(lambda m, walk=walk: prompts.append(message_text(m)) or walk.actions(m))
        llm = scripted_llm({"Plan": record, **APPROVE, **lessons})
        agent = make_agent(agent_config, TextWorldExecutor(bundled_game(game)), llm, embedder)
        results.append(agent.run(thread_id=episode))
        state = agent.state(episode)
        retrieved = agent.context.memory.episodes.retrieved(episode)
        agent.context.memory.close()
    first, second = results
    assert first.success and first.consolidation["semantic"]["ADD"] >= 1
    assert retrieved, "task 2 retrieved nothing from long-term memory"
    assert "cookbook" in state["recalled"]["semantic"] + state["recalled"]["episodic"]
    assert state["recalled"]["semantic"] == "\n".join(state["in_view"]["semantic"])
    updated = {u["id"]: u for u in second.consolidation["q_updates"]}
    assert set(retrieved) <= set(updated)
    assert all(u["q_new"] > u["q_old"] for u in updated.values())
    # the steps task 1's score rose at are lessons; task 2's prompts end by naming those
    # offered now (here the recalled ones: prepare_meal() and eat(meal)), none in task 1
    lines = [
        p.split("Helped before, possible now: ")[1].split("\n")[0]
        for p in prompts
        if "Helped before" in p
    ]
    assert lines == ["prepare_meal()", "eat(meal)"]
    assert all("Helped before" not in p for p in prompts[: first.steps])


def test_planner_sees_the_whole_recipe_it_just_read(agent_config, make_agent):
    """A multi-line result (the cookbook) reaches the next plan whole, as its last result."""
    prompts: list[str] = []

    def plan(messages):
        prompts.append(message_text(messages))
        return [("examine", ["cookbook"])]

    llm = scripted_llm({"Plan": PlanScript(plan), **APPROVE})
    agent_config.max_steps = 2
    agent = make_agent(agent_config, TextWorldExecutor(bundled_game("cooking_1room")), llm)
    agent.run(thread_id="recipe")
    assert "Last result:" not in prompts[0]  # nothing done yet
    last = prompts[1].rsplit("Last result: ", 1)[1].splitlines()[0]
    assert last.startswith("step 1: examine(cookbook) -> succeeded:")
    assert "Ingredients: milk Directions: prepare meal" in last


def test_the_relation_extractor_reads_the_worlds_words_not_the_summary(agent_config, make_agent):
    """The step summary is a paraphrase (here one that names nothing); the grounded extractor
    is given the game's own text, where 'the fridge contains some milk' is stated."""
    shown: list[str] = []

    def extract(messages):
        shown.append(message_text(messages))
        return {}

    llm = scripted_llm(
        {"Plan": PlanScript(lambda m: [("look", [])]), "ExtractedRelations": extract, **APPROVE}
    )
    agent_config.max_steps = 1
    agent = make_agent(agent_config, TextWorldExecutor(bundled_game("cooking_1room")), llm)
    agent.run(thread_id="extract")
    assert shown and "The fridge contains some milk" in shown[0]
    assert "I acted in the kitchen." not in shown[0]


def test_a_later_plan_step_the_world_no_longer_affords_goes_back_to_the_planner(
    agent_config, make_agent
):
    """Taking the cookbook makes 'take the cookbook' impossible: the critic is not asked, the
    planner is."""
    critic_calls: list[str] = []
    plan = plan_of(("pick_up", ["cookbook"]), ("pick_up", ["cookbook"]))
    llm = scripted_llm(
        {
            "Plan": plan,
            "CriticVerdict": lambda m: (
                critic_calls.append("asked") or {"approve": True, "reason": "ok"}
            ),
        }
    )
    agent_config.max_steps = 2
    agent = make_agent(agent_config, TextWorldExecutor(bundled_game("cooking_1room")), llm)
    result = agent.run(thread_id="stale")
    assert critic_calls == []
    assert result.usage["planner"]["runs"] == 2  # replanned instead of running the stale step
    assert result.trajectory[1]["verdict"] is None  # the new plan's first step: no critic


class SlowSaver(SqliteSaver):
    """A real SqliteSaver whose writes take a while (a loaded disk): it records whether a
    node ran while a checkpoint was still being written."""

    def __init__(self, conn):
        super().__init__(conn)
        self.writing = threading.Event()

    def put(self, *args, **kwargs):
        self.writing.set()
        try:
            time.sleep(0.05)
            return super().put(*args, **kwargs)
        finally:
            self.writing.clear()


def test_no_step_runs_ahead_of_its_checkpoint(agent_config, make_agent, tmp_path):
    """A kill -9 must never lose a step that already acted on the world."""
    saver = SlowSaver(sqlite3.connect(str(tmp_path / "slow.sqlite"), check_same_thread=False))
    ahead: list[int] = []

    class Watched(TextWorldExecutor):
        def execute(self, action, timeout_s=None, cancel=None):
            if saver.writing.is_set():
                ahead.append(len(self.history))
            return super().execute(action, timeout_s, cancel)

    llm = scripted_llm({"Plan": walkthrough_planner("cooking_1room"), **APPROVE})
    agent = build_agent(
        agent_config,
        Watched(bundled_game("cooking_1room")),
        llm=llm,
        embedder=DeterministicFakeEmbedding(size=32),
        checkpointer=saver,
    )
    with agent:
        assert agent.run(thread_id="durable").success
    assert ahead == []  # every action ran after the previous step's checkpoint was stored


def _planner_prompts(agent_config, make_agent, game: str, steps: list) -> list[str]:
    """Play ``steps`` (verb, args) in a bundled game; return every planner prompt."""
    prompts: list[str] = []
    script = iter(steps)

    def plan(messages):
        prompts.append(message_text(messages))
        return [next(script)]

    llm = scripted_llm({"Plan": PlanScript(plan), **APPROVE})
    agent_config.max_steps = len(steps)
    agent = make_agent(agent_config, TextWorldExecutor(bundled_game(game)), llm)
    agent.run(thread_id=game)
    return prompts


def _left(prompt: str) -> str | None:
    return prompt.split("Left to do: ")[1].splitlines()[0] if "Left to do" in prompt else None


def test_the_planner_is_told_what_the_recipe_it_read_leaves_to_do(agent_config, make_agent):
    """Read, the recipe's instructions are listed until done actions do them."""
    steps = [("examine", ["cookbook"]), ("pick_up", ["red onion"]), ("pick_up", ["knife"])]
    steps += [("dice", ["red onion"]), ("prepare_meal", []), ("look", [])]
    prompts = _planner_prompts(agent_config, make_agent, "cooking_1room_cut", steps)
    assert [_left(p) for p in prompts] == [
        "check the cookbook",  # the task's read, offered here; "enjoy your meal" names no
        # known thing yet
        "dice the red onion, prepare meal",
        "dice the red onion, prepare meal",
        "dice the red onion, prepare meal",
        "prepare meal",  # diced
        "enjoy your meal",  # the task's last instruction, once the meal exists
    ]


def test_what_the_world_says_a_thing_is_does_a_recipe_instruction(agent_config, make_agent):
    """The 6-room game's chicken breast lies fried in the fridge: "fry the chicken breast" is
    not left to do (cooked again, the game burns it and is lost)."""
    steps = [("go", ["east"]), ("go", ["east"]), ("go", ["east"]), ("examine", ["cookbook"])]
    steps += [("pick_up", ["chicken breast"]), ("look", [])]
    prompts = _planner_prompts(agent_config, make_agent, "cooking_6rooms", steps)
    assert "fry the chicken breast" in prompts[4].split("Notes (read):")[1]  # the recipe says so
    assert _left(prompts[4]) == _left(prompts[5]) == "prepare meal"


def test_the_temporal_compression_is_made_beside_perception(agent_config, make_agent):
    """A full temporal buffer is compressed by the compress node, in perception's superstep,
    from the entries before the step's own; the temporal branch then asks nothing and puts
    that summary at the front, as the sequential update would."""
    prompts: list[str] = []

    def compress(messages):
        prompts.append(message_text(messages))
        return {"summary": f"compressed {len(prompts)}"}

    llm = scripted_llm(
        {"Plan": walkthrough_planner("cooking_1room"), "TemporalSummary": compress, **APPROVE}
    )
    agent_config.memory.temporal.capacity = 2
    agent = make_agent(agent_config, TextWorldExecutor(bundled_game("cooking_1room")), llm)
    result = agent.run(thread_id="compress")
    assert result.usage["temporal_compress"]["runs"] == result.steps
    assert result.usage["temporal_compress"]["calls"] == len(prompts) >= 1
    assert result.usage["temporal"]["calls"] == 0
    assert "step 1:" in prompts[0] and "step 2:" not in prompts[0]  # before step 2's entry
    state = agent.state("compress")
    assert state["temporal"][0] == f"compressed {len(prompts)}" and len(state["temporal"]) <= 2
