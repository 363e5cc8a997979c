"""A run's trace and its page: per-step plan, critic verdict and rejections, perceived summary,
recalled sizes and spatial-map changes, recorded from the real graph on a real TextWorld game
with real stores; the model's answers are scripted (a FAKE model). The live label follows the
node that runs now (LangGraph's tasks stream)."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser

import pytest
from rich.console import Console

from robomemory.cli import main as cli_main
from robomemory.commands.progress import RunProgress
from robomemory.commands.run_page import render_page
from robomemory.commands.trace import TraceRecorder, trace_payload, write_trace
from robomemory.executors.envs.textworld import TextWorldExecutor, bundled_game
from robomemory.graphs.agent import sqlite_checkpointer
from robomemory.memory.longterm import NewItem
from robomemory.structured import StructuredLLM
from robomemory.testing import PlanScript, ScriptedChatModel, scripted_llm

FIRST = [("examine", ["cookbook"]), ("pick_up", ["milk"]), ("pick_up", ["yellow apple"])]
SECOND = [("pick_up", ["milk"]), ("pick_up", ["yellow apple"])]
REASON = (
    "The milk can wait: the recipe has not been read closely yet, so taking it now is premature "
    "and the agent should plan again from what the cookbook lists."
)


def _llm():
    verdicts = iter([{"approve": False, "reason": REASON}])

    def critic(_m):
        return next(verdicts, {"approve": True, "reason": "the recipe is known now"})

    plans = iter([FIRST, SECOND])
    return scripted_llm(
        {
            "Plan": PlanScript(lambda m: next(plans, SECOND)),
            "CriticVerdict": critic,
            "StepSummary": lambda m: {"summary": "A kitchen with a\n fridge and a cookbook."},
            "MemoryQueries": lambda m: {"queries": ["cookbook"]},
            "ExtractedRelations": lambda m: {
                "relations": [{"subject": "cookbook", "relation": "on", "object": "table"}]
            },
        }
    )


@pytest.fixture
def played(agent_config, make_agent, tmp_path):
    """Three steps: approve-free first action, a critic reject and replan, an approved one.
    The planner is asked every step (the effects table deciding none), as the script says."""
    agent_config.max_steps = 3
    agent_config.table_decides = False
    agent = make_agent(agent_config, TextWorldExecutor(bundled_game("cooking_1room")), _llm())
    recorder = TraceRecorder(agent.context.memory.spatial)
    events: list[tuple[str, str]] = []
    progress = RunProgress(Console(file=open("/dev/null", "w")), 3)  # noqa: SIM115
    labels: dict[str, str] = {}

    def on_start(node: str) -> None:
        events.append(("start", node))
        progress.on_start(node)
        labels[node] = progress.label

    def on_event(node: str, update: dict) -> None:
        events.append(("update", node))
        progress.on_event(node, update)
        recorder.on_event(node, update)

    result = agent.run(thread_id="t1", on_event=on_event, on_start=on_start)
    trace = trace_payload(result, recorder)
    return trace, events, labels


def test_every_node_is_announced_before_its_update(played):
    _, events, labels = played
    for i, (kind, node) in enumerate(events):
        if kind == "update":
            assert ("start", node) in events[:i], node
    # after the critic's reject the planner is announced as running (not "execute")
    reject = events.index(("update", "critic"))
    assert events[reject + 1] == ("start", "planner")
    assert labels["planner"].startswith("planner") and labels["consolidate"].startswith(
        "consolidate"
    )
    assert "memory:" in labels["spatial"]
    assert events[-2:] == [("start", "consolidate"), ("update", "consolidate")]


def test_trace_has_plan_critic_summary_recall_and_map_per_step(played):
    trace, _, _ = played
    one, two, three = trace["trajectory"]
    plan = ["examine(cookbook)", "pick_up(milk)", "pick_up(yellow apple)"]
    assert one["action"] == "examine(cookbook)" and one["plan"] == plan
    assert one["verdict"] is None
    assert len(one["candidates"]) > 5 and "pick_up(milk)" in one["candidates"]
    assert one["summary"] == "A kitchen with a\n fridge and a cookbook."
    assert set(one["recalled"]) == {"temporal", "spatial", "semantic", "episodic"}
    assert all(isinstance(n, int) for n in one["recalled"].values())
    assert "I at kitchen" in trace["initial_map"]["added"]  # the robot's own fact
    # step 2: the critic rejected pick_up(milk); the new plan's first action ran unchecked
    assert two["rejected"] == [{"plan": plan, "reason": REASON}]
    assert two["action"] == "pick_up(milk)" and two["verdict"] is None
    assert three["action"] == "pick_up(yellow apple)"
    assert three["verdict"] == {"approve": True, "reason": "the recipe is known now"}
    assert "rejected" not in three
    assert all("map" in s for s in (one, two))  # the map after each observed action
    # what each memory recalled, from the episode log, cut to 2,000 characters
    assert set(one["recall_text"]) == set(one["recalled"])
    assert all(len(t) == min(one["recalled"][k], 2000) for k, t in one["recall_text"].items())
    assert "I at kitchen" in one["recall_text"]["spatial"].splitlines()
    history = trace["map_history"]  # the map held during the run, with its steps
    assert {"subject": "I", "relation": "at", "object": "kitchen"}.items() <= history[0].items()
    assert {h["since"] for h in history} <= {None, 0, 1, 2, 3}
    assert trace["trace_version"] == 4 and trace["model_calls"] > 0
    # the model calls that led to each step, with their prompts and answers
    nodes = [c["node"] for c in one["calls"]]
    assert "planner" in nodes and "critic" not in nodes  # the first step: no critic
    plan_call = one["calls"][nodes.index("planner")]
    assert plan_call["schema"].startswith("Plan") and "examine(cookbook)" in plan_call["answer"]
    assert trace["task"] in plan_call["user"] and plan_call["system"]
    assert "critic" in [c["node"] for c in two["calls"]]  # the rejection, then the replan
    assert REASON in "".join(c["answer"] for c in two["calls"])


class Sections(HTMLParser):
    """Collects the step sections of a page: attributes, and the text inside each."""

    def __init__(self):
        super().__init__()
        self.steps: list[dict] = []
        self.depth = 0
        self.classes: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section" and "step" in (a.get("class") or "").split():
            self.steps.append({"attrs": a, "text": "", "classes": []})
            self.depth = 1
        elif self.depth:
            self.depth += tag not in ("br",)
            if self.steps:
                self.steps[-1]["classes"] += (a.get("class") or "").split()

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth and self.steps:
            self.steps[-1]["text"] += data


def _sections(page: str) -> list[dict]:
    parser = Sections()
    parser.feed(page)
    return parser.steps


def test_page_shows_each_step_with_its_decision_and_memory(played):
    trace, _, _ = played
    page = render_page(trace)
    steps = _sections(page)
    assert [s["attrs"]["data-step"] for s in steps] == ["1", "2", "3"]
    one, two, three = steps
    assert "examine(cookbook)" in one["text"] and "critic did not check" in one["text"]
    assert {"plan", "now", "recalled"} <= set(one["classes"])
    assert "rejected" in two["attrs"]["class"] and REASON in two["text"]
    assert "critic approved" in three["text"] and "the recipe is known now" in three["text"]
    assert "I at kitchen" in page and "<svg" in page and "<script" not in page
    assert '<details class="recall" data-memory="spatial">' in page  # recalled text, folded
    assert '<details class="call" data-node="planner">' in page  # each call, folded
    assert "prompt tokens" in one["text"] and trace["task"] in one["text"]
    end = page[page.index("Spatial map at the end") :]
    assert '<svg class="map"' in end and 'data-place="kitchen"' in end and "robot is here" in end


def test_the_page_shows_every_model_calls_prompt_answer_and_tokens(played):
    """Each model call of the run, in its own step's section: its prompt (system, then user),
    its answer and its tokens, as the trace recorded them."""
    trace, _, _ = played
    page = render_page(trace)
    sections = re.findall(r'<section class="step[^"]*".*?</section>', page, re.S)
    calls = 0
    for step, section in zip(trace["trajectory"], sections, strict=True):
        assert section.count('<details class="call"') == len(step["calls"])
        for c in step["calls"]:
            calls += 1
            prompt = "\n\n".join(c[k] for k in ("system", "user") if c.get(k))
            assert prompt and html.escape(prompt) in section, c["node"]
            assert html.escape(c["answer"]) in section, c["node"]
            if not c["reused"]:
                cost = f"{c['prompt_tokens']} prompt tokens ({c['cached_tokens']} cached), "
                assert cost + f"{c['completion_tokens']} written" in section, c
    assert calls >= 4  # the planner, the critic's rejection, the replan, the approval
    assert any(c["prompt_tokens"] > 0 for s in trace["trajectory"] for c in s["calls"])


def test_an_old_trace_renders_without_the_new_keys():
    old = {
        "thread_id": "old",
        "task": "cook",
        "steps": 1,
        "trajectory": [
            {
                "step": 1,
                "action": "look()",
                "verb": "look",
                "args": [],
                "outcome": "succeeded",
                "message": "A kitchen.",
                "score": 0,
            }
        ],
    }
    (step,) = _sections(render_page(old))
    assert "look()" in step["text"] and "plan" not in step["classes"]
    assert "critic" not in step["text"]
    new = dict(old["trajectory"][0], candidates=["look()", "open(fridge)"], verdict=None)
    (step,) = _sections(render_page(old | {"trajectory": [new]}))
    assert "2 candidate actions offered" in step["text"] and "open(fridge)" in step["text"]


def test_show_renders_a_trace_file_and_a_checkpoint_thread(
    agent_config, make_agent, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("COLUMNS", "200")
    data = tmp_path / "home"
    agent_config.max_steps = 2
    agent_config.memory.data_dir = data / "memory"
    agent = make_agent(agent_config, TextWorldExecutor(bundled_game("cooking_1room")), _llm())
    agent.graph.checkpointer = sqlite_checkpointer(data / "memory" / "checkpoints.sqlite")
    result = agent.run(thread_id="th")
    path = write_trace(tmp_path / "t.json", trace_payload(result))
    page = tmp_path / "page.html"
    assert cli_main(["show", str(path), "--html", str(page)]) == 0
    assert "examine(cookbook)" in capsys.readouterr().out
    assert len(_sections(page.read_text())) == 2
    agent.context.memory.close()  # the spatial store is read by `show` from disk
    args = ["show", "th", "--home", str(data), "--robot", "test-bot", "--html", str(page)]
    assert cli_main(args) == 0
    steps = _sections(page.read_text())
    assert len(steps) == 2 and "I at kitchen" in page.read_text()
    assert 'data-place="kitchen"' in page.read_text()  # the map drawn from the robot's store
    assert cli_main(["show", "nope", "--home", str(data)]) == 2
    assert "no thread 'nope'" in capsys.readouterr().err
    assert json.loads(path.read_text())["trajectory"][0]["step"] == 1


def test_a_stored_lesson_recalled_in_a_run_is_shown_by_its_text_q_and_origin(
    agent_config, make_agent
):
    """A lesson an earlier episode wrote into the robot's real store, rewarded once: the run
    of its task recalls it, the trace keeps it by text, Q and origin, the page shows them."""
    task, lesson = "cook the meal from the cookbook", "Read the cookbook before taking anything."
    agent_config.max_steps = 1
    agent_config.table_decides = False
    agent = make_agent(agent_config, TextWorldExecutor(bundled_game("cooking_1room")), _llm())
    semantic = agent.context.memory.semantic
    add = StructuredLLM(ScriptedChatModel(responder=lambda s, m: {"event": "ADD"})).for_node("t")
    pid = semantic.update(NewItem(lesson, "task"), idx=0, task=task, episode_id="ep-0", llm=add)
    semantic.update_utility([pid["item_id"]], 1.0, "ep-0b")  # Q 0 -> 0.3
    trace = trace_payload(agent.run(thread_id="t-lesson", task=task))
    (one,) = trace["trajectory"]
    (item,) = [i for i in one["recalled_items"]["semantic"] if i["text"] == lesson]
    assert item["q"] == pytest.approx(0.3) and item["level"] == "task"
    # the robot's own store records the episode and task, and no robot: none is invented
    assert item["origin"] == {"episode_id": "ep-0", "task": task}
    assert one["recalled_items"]["episodic"] == []
    page = render_page(trace)
    (step,) = _sections(page)
    assert lesson in step["text"] and "Q 0.30" in step["text"]
    assert f"episode ep-0 · task “{task}”" in step["text"] and item["id"] not in step["text"]
