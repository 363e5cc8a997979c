"""The run page from small synthetic traces (no model, no world): what each memory recalled,
folded; the spatial map drawn as SVG at the end and after each step that changed it, laid out by
the compass facts; old traces without the new keys; a thread's map from the robot's store."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from robomemory.commands.map_svg import Edge, grid, map_history, map_svg, parse_triple
from robomemory.commands.run_page import render_page
from robomemory.commands.show import map_changes, map_history_from_store
from robomemory.memory.base import Triple

SPATIAL = "I at kitchen\nfridge in kitchen\nkitchen east_of livingroom"
LESSON = "Helped before: open(fridge) <then> take(milk) & more"


def _edge(s: str, r: str, o: str, since: int | None, until: int | None = None) -> dict:
    return {"subject": s, "relation": r, "object": o, "since": since, "until": until}


def _step(step: int, action: str, **extra) -> dict:
    return {
        "step": step,
        "action": action,
        "verb": action.split("(")[0],
        "args": [],
        "outcome": "succeeded",
        "message": f"You {action}.",
        "score": float(step),
    } | extra


def _trace() -> dict:
    """Two steps: go(east) from the living room into the kitchen, then take(milk)."""
    history = [
        _edge("sofa", "in", "livingroom", None),  # held before the run
        _edge("I", "at", "livingroom", 0, 1),
        _edge("I", "at", "kitchen", 1),
        _edge("kitchen", "east_of", "livingroom", 1),
        _edge("fridge", "in", "kitchen", 1),
        _edge("milk", "in", "fridge", 1, 2),
        _edge("I", "hold", "milk", 2),
    ]
    return {
        "thread_id": "syn",
        "task": "fetch the milk",
        "steps": 2,
        "trace_version": 3,
        "map_history": history,
        "initial_map": {"added": ["I at livingroom"], "removed": []},
        "trajectory": [
            _step(
                1,
                "go(east)",
                plan=["go(east)", "take(milk)"],
                plan_reason="the kitchen lies east; the milk is in its fridge",
                recalled={"spatial": len(SPATIAL), "semantic": 5000, "temporal": 0},
                recall_text={"spatial": SPATIAL, "semantic": LESSON, "temporal": ""},
                map={
                    "added": [
                        "I at kitchen",
                        "kitchen east_of livingroom",
                        "fridge in kitchen",
                        "milk in fridge",
                    ],
                    "removed": ["I at livingroom"],
                },
            ),
            _step(2, "take(milk)", map={"added": ["I hold milk"], "removed": ["milk in fridge"]}),
        ],
    }


class Page(HTMLParser):
    """Step sections' text, <details> blocks (summary text, body text), <svg> maps' places."""

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.details: list[dict] = []
        self.maps: list[list[str]] = []
        self.step_of_map: list[str | None] = []
        self.step: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.stack.append(tag)
        if tag == "section":
            self.step = a.get("data-step")
        if tag == "details":
            self.details.append({"class": a.get("class") or "", "summary": "", "body": ""})
        if tag == "svg" and "map" in (a.get("class") or ""):
            self.maps.append([])
            self.step_of_map.append(self.step if "section" in self.stack else None)
        if tag == "g" and "data-place" in a and self.maps:
            self.maps[-1].append(a["data-place"])

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop() != tag:
            pass
        if tag == "section":
            self.step = None

    def handle_data(self, data):
        if "details" in self.stack and self.details:
            self.details[-1]["summary" if "summary" in self.stack else "body"] += data


def _parse(page: str) -> Page:
    parser = Page()
    parser.feed(page)
    return parser


def test_each_memory_recalled_text_is_folded_under_its_size():
    page = render_page(_trace())
    recall = [d for d in _parse(page).details if "recall" in d["class"]]
    assert [d["summary"].split()[0] for d in recall] == ["spatial", "semantic"]  # temporal: empty
    spatial, semantic = recall
    assert spatial["body"].strip() == SPATIAL and f"{len(SPATIAL)} chars" in spatial["summary"]
    assert LESSON in semantic["body"] and "the first 52 of 5,000 characters" in semantic["body"]
    assert "&lt;then&gt; take(milk) &amp; more" in page  # escaped
    assert "the kitchen lies east; the milk is in its fridge" in page  # the plan's reason
    assert "<script" not in page


def test_the_map_is_drawn_at_the_end_and_after_each_step_that_changed_it():
    page = render_page(_trace())
    parsed = _parse(page)
    assert parsed.step_of_map == ["1", "2", None]  # one per step that changed it, then the end
    first, second, end = parsed.maps
    assert set(end) == {"kitchen", "livingroom"} and set(first) == {"kitchen", "livingroom"}
    step_maps = [d for d in parsed.details if "stepmap" in d["class"]]
    assert "+4 −1" in step_maps[0]["summary"] and "+1 −1" in step_maps[1]["summary"]
    end_svg = page[page.index("Spatial map at the end") :]
    assert "sofa" in end_svg and "robot holds milk" in end_svg and "east_of" in end_svg
    assert 'class="removed"' not in end_svg and "milk in fridge" not in end_svg
    step2 = page[page.index('id="step-2"') : page.index("Spatial map at the end")]
    assert re.search(r'class="added"[^>]*>.*?robot holds milk', step2)
    assert re.search(r'class="removed"[^>]*text-decoration="line-through".*?milk in fridge', step2)


def test_the_grid_follows_the_compass_facts():
    edges = [
        Edge("I", "at", "hall", 0),
        Edge("kitchen", "east_of", "hall", 1),
        Edge("garden", "north_of", "kitchen", 2),
        Edge("cellar", "west_of", "hall", 3),
        Edge("attic", "east_of", "hall", 4),  # kitchen's cell is taken: a free one near it
        Edge("I", "at", "shed", 5),  # no way to it: a new column
    ]
    cells = grid(edges)
    hall, kitchen, garden, cellar = (cells[p] for p in ("hall", "kitchen", "garden", "cellar"))
    assert kitchen == (hall[0] + 1, hall[1]) and garden == (kitchen[0], kitchen[1] - 1)
    assert cellar == (hall[0] - 1, hall[1])
    assert len(set(cells.values())) == len(cells) == 6
    assert cells["shed"][0] > max(x for p, (x, _) in cells.items() if p != "shed")
    assert grid(edges) == cells  # deterministic
    svg = map_svg(edges, cells, 5, changes=False)
    assert svg.startswith("<svg") and svg.count('class="place"') == 6


def test_an_old_trace_draws_its_map_from_the_changes_and_renders_without_new_keys():
    trace = _trace()
    del trace["map_history"], trace["trace_version"]
    del trace["trajectory"][0]["recall_text"]
    edges = map_history(trace)
    assert Edge("I", "at", "livingroom", 0, 1) in edges and Edge("I", "hold", "milk", 2) in edges
    assert Edge("milk", "in", "fridge", 1, 2) in edges
    page = render_page(trace)
    parsed = _parse(page)
    assert not [d for d in parsed.details if "recall" in d["class"]]
    assert "5000 chars" in page and "the map held before the run is not in this trace" in page
    assert set(parsed.maps[-1]) == {"kitchen", "livingroom"} and "sofa" not in page
    bare = {"trajectory": [_step(1, "look()")]}
    assert "look()" in render_page(bare) and '<svg class="map"' not in render_page(bare)


def test_parse_triple_splits_names_with_spaces():
    assert parse_triple("red onion in kitchen") == ("red onion", "in", "kitchen")
    assert parse_triple("kitchen east_of living room") == ("kitchen", "east_of", "living room")
    assert parse_triple("I hold red hot pepper") == ("I", "hold", "red hot pepper")
    assert parse_triple("a b") is None


def test_a_threads_map_turns_the_stores_steps_into_the_episodes():
    """The robot's second task: its store steps count on from the first (10 ...)."""
    t = Triple
    triples = [
        t(subject="sofa", relation="in", object="hall", valid_from_step=2),  # earlier task
        t(subject="old", relation="in", object="hall", valid_from_step=1, invalidated_at_step=5),
        t(subject="I", relation="at", object="hall", valid_from_step=3, invalidated_at_step=11),
        t(subject="I", relation="at", object="kitchen", valid_from_step=11, episode_id="e2"),
        t(subject="cup", relation="in", object="kitchen", valid_from_step=12, episode_id="e2"),
        t(subject="later", relation="in", object="hall", valid_from_step=20),  # a later task
    ]
    stats = [{"step": 10}, {"step": 11}, {"step": 12}]  # updates after steps 0, 1, 2
    history = map_history_from_store(triples, {"episode_id": "e2", "spatial_stats": stats})
    got = {(e["subject"], e["object"]): (e["since"], e["until"]) for e in history}
    assert got == {
        ("sofa", "hall"): (None, None),
        ("I", "hall"): (None, 1),
        ("I", "kitchen"): (1, None),
        ("cup", "kitchen"): (2, None),
    }
    changes = map_changes(history)
    assert changes[1] == {"added": ["I at kitchen"], "removed": ["I at hall"]}
    assert changes[2] == {"added": ["cup in kitchen"], "removed": []}


def test_each_model_call_of_a_step_is_folded_with_its_prompt_answer_and_cost():
    asked = {"node": "planner", "schema": "Plan", "system": "You are the planner.",
             "user": "Task: fetch the milk", "answer": '{"steps": ["take(milk)"]}',
             "prompt_tokens": 420, "cached_tokens": 300, "completion_tokens": 15,
             "seconds": 2.5, "parsed": True, "reused": False}  # fmt: skip
    again = asked | {"reused": True, "prompt_tokens": 0, "completion_tokens": 0}
    bad = asked | {"node": "perceive", "answer": "{not json", "parsed": False}
    trace = _trace()
    trace["trajectory"][0]["calls"] = [asked, again, bad]
    page = render_page(trace)
    assert "3 model calls, 870 tokens" in page
    assert page.count('<details class="call" data-node="planner">') == 2
    assert "420 prompt tokens (300 cached), 15 written, 2.5 s" in page
    assert "reused, no model call" in page and "unparsed" in page
    assert "You are the planner.\n\nTask: fetch the milk" in page
    assert "{&quot;steps&quot;: [&quot;take(milk)&quot;]}" in page
    one, two = re.findall(r'<section class="step[^"]*".*?</section>', page, re.S)
    assert "model call" in one and "model call" not in two  # a step without calls shows none


SHARED = {  # as a fleet's shared store records a lesson: its writers, episode and task
    "id": "3f2a9c1e-0000-4000-8000-000000000001",
    "level": "action",
    "text": "open(fridge) before take(milk)",
    "q": 0.625,
    "origin": {
        "created_by": "robot-a",
        "updated_by": "robot-b",
        "robots": ["robot-a", "robot-b"],
        "episode_id": "ep-3",
        "task": "fetch the milk",
    },
}
LOCAL = {  # a robot's own store names no robot: its episode and task only
    "id": "9b7d0000-0000-4000-8000-000000000002",
    "level": None,
    "text": "I went east and took the milk.",
    "q": 0.0,
    "origin": {"episode_id": "ep-1", "task": "fetch the milk"},
}


def test_each_recalled_item_is_shown_by_its_text_q_and_origin_not_its_id():
    trace = _trace()
    first = trace["trajectory"][0]
    first["recalled"] |= {"episodic": 40}
    first["recalled_items"] = {"semantic": [SHARED], "episodic": [LOCAL]}
    page = render_page(trace)
    semantic = re.search(r'<ul class="items" data-memory="semantic">(.*?)</ul>', page).group(1)
    episodic = re.search(r'<ul class="items" data-memory="episodic">(.*?)</ul>', page).group(1)
    assert SHARED["text"] in semantic and "Q 0.62" in semantic and ">action<" in semantic
    assert "by robot-a · last changed by robot-b · episode ep-3 · task “fetch the milk”" in semantic
    # the local item: its episode and task, no writer invented; its id is no text on the page
    assert LOCAL["text"] in episodic and "Q 0.00" in episodic
    assert "episode ep-1 · task “fetch the milk”" in episodic and "by " not in episodic
    text = re.sub(r"<[^>]*>", "", page)
    assert SHARED["id"] not in text and LOCAL["id"] not in text
    step2 = page[page.index('id="step-2"') :]
    assert 'class="items"' not in step2  # a step without the key (an older trace): no list
