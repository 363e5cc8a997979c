"""Metrics on recorded traces with hand-checked numbers; report files appear."""

from __future__ import annotations

import json

import pytest

from robomemory.eval import metrics as m
from robomemory.eval.metrics import EpisodeRecord, NodeEvent
from robomemory.eval.report import load_records, write_json_atomic, write_report


def rec(task, success, gc, attempt=1, agent="robomemory", ablation="none", steps=4, **kw):
    return EpisodeRecord(
        suite="t",
        task_id=task,
        agent=agent,
        ablation=ablation,
        attempt=attempt,
        success=success,
        gc=gc,
        steps=steps,
        **kw,
    )


@pytest.fixture
def trace() -> list[EpisodeRecord]:
    # 3 tasks x 3 epochs. Epoch 1: A ok; epoch 2: A fail, B ok; epoch 3: A ok, B ok, C fail.
    outcomes = {1: (True, False, False), 2: (False, True, False), 3: (True, True, False)}
    gcs = {1: (1.0, 0.5, 0.0), 2: (0.5, 1.0, 0.25), 3: (1.0, 1.0, 0.5)}
    return [
        rec(t, outcomes[e][i], gcs[e][i], attempt=e) for e in (1, 2, 3) for i, t in enumerate("ABC")
    ]


def test_sr_gc_and_lifelong(trace):
    first = [r for r in trace if r.attempt == 1]
    assert m.success_rate(first) == pytest.approx(1 / 3)
    assert m.goal_condition_rate(first) == pytest.approx(0.5)
    rows = {r["attempt"]: r for r in m.lifelong(trace)}
    assert rows[2]["sr"] == pytest.approx(1 / 3) and rows[2]["sr_gain"] == pytest.approx(0)
    assert rows[3]["sr"] == pytest.approx(2 / 3) and rows[3]["sr_gain"] == pytest.approx(1 / 3)
    assert rows[2]["gc"] == pytest.approx(1.75 / 3)
    assert rows[3]["gc_gain"] == pytest.approx(2.5 / 3 - 0.5)


def test_memrl_csr_and_forgetting(trace):
    rows = {r["epoch"]: r for r in m.memrl_curves(trace)}
    assert [rows[e]["csr"] for e in (1, 2, 3)] == pytest.approx([1 / 3, 2 / 3, 2 / 3])
    # Epoch 2 forgets A (ok in 1, failed in 2); epoch 3 forgets nothing.
    assert [rows[e]["forgetting"] for e in (1, 2, 3)] == pytest.approx([0, 1 / 3, 0])


def test_gc_of_clips_scienceworld_failure():
    assert m.gc_of(-100, 100) == 0.0
    assert m.gc_of(42, 100) == pytest.approx(0.42)
    assert m.gc_of(3, 2) == 1.0 and m.gc_of(None, 5) == 0.0


def test_two_step_loops_are_counted_in_cycles():
    assert m.two_step_cycles(["a", "b", "a", "b", "a", "b", "c"]) == 3
    assert m.two_step_cycles(["a", "b", "a", "b"]) == 2
    assert m.two_step_cycles(["a", "b", "a", "c", "a"]) == 1  # a-b-a, then a-c-a
    assert m.two_step_cycles(["a", "a", "a", "b", "c"]) == 0  # repeats are no two-step loop
    assert m.two_step_cycles([]) == 0
    walked = [{"action": x} for x in ["go(n)", "take(k)", "drop(k)", "take(k)", "drop(k)"]]
    looped = rec("A", False, 0.0, trajectory=walked)
    rows = m.summary_table([looped, rec("B", True, 1.0)])
    assert rows[0]["loops"] == 2


def test_usage_latency_and_kg():
    usage = {
        "planner": {"calls": 2, "prompt_tokens": 100, "completion_tokens": 10, "wall_s": 3.0},
        "perceive": {"calls": 4, "prompt_tokens": 50, "completion_tokens": 20, "wall_s": 1.0},
    }
    timings = [
        ("temporal", 0, 0.2),
        ("spatial", 0, 0.5),
        ("semantic", 0, 0.1),
        ("planner", 0, 9.0),
        ("temporal", 1, 0.4),
        ("compress", 1, 0.2),  # the temporal memory's compression, made beside perception
        ("spatial", 1, 0.3),
    ]
    events = [NodeEvent(node=n, step=s, wall_s=w) for n, s, w in timings]
    stats = [
        {"step": 0, "vertices": 3, "edges": 2, "sent_edges": 0, "new_edges": 2, "ops_applied": 2},
        {"step": 1, "vertices": 5, "edges": 4, "sent_edges": 2, "new_edges": 3, "ops_applied": 1},
        {"step": 1, "skipped": True},
    ]
    r = rec("A", True, 1.0, steps=2, usage=usage, events=events, spatial_stats=stats, wall_s=8.0)
    s = m.summarize([r])
    assert s["calls"] == 6 and s["prompt_tokens"] == 150 and s["completion_tokens"] == 30
    assert s["wall_s_per_step"] == pytest.approx(4.0)
    assert m.node_seconds_per_step([r]) == pytest.approx({"perceive": 0.5, "planner": 1.5})
    react = rec("A", False, 0.0, agent="react", steps=4, usage={"policy": {"wall_s": 2.0}})
    rows = {(x["agent"], x["node"]): x["s_per_step"] for x in m.node_seconds_by_agent([r, react])}
    assert rows == pytest.approx(
        {("robomemory", "perceive"): 0.5, ("robomemory", "planner"): 1.5, ("react", "policy"): 0.5}
    )
    lat = m.memory_latency([r])
    assert lat["steps"] == 2
    assert lat["parallel_s"] == pytest.approx((0.5 + 0.6) / 2)
    assert lat["sequential_s"] == pytest.approx((0.8 + 0.9) / 2)
    assert lat["temporal_s"] == pytest.approx((0.2 + 0.6) / 2)
    kg = m.kg_summary([r])
    assert kg == {
        "updates": 2,
        "final_vertices": 5,
        "final_edges": 4,
        "edges_touched": 3.5,
        "ops_applied": 1.5,
    }


def test_location_prf():
    truth = {"apple": "fridge", "knife": "counter", "salt": "shelf"}
    pred = {"apple": "fridge", "knife": "table"}
    out = m.location_prf(pred, truth)
    assert out["precision"] == 0.5 and out["recall"] == pytest.approx(1 / 3)
    assert out["f1"] == pytest.approx(0.4)
    assert m.location_prf({}, truth)["f1"] == 0.0


def test_report_files_appear(tmp_path, trace):
    for r in trace:
        write_json_atomic(tmp_path / "episodes" / f"{r.key}.json", r.model_dump(mode="json"))
    (tmp_path / "spatial_accuracy.json").write_text(
        json.dumps(
            {
                "games": [{"game": "g", "steps": 2, "precision": 1, "recall": 0.5, "f1": 0.67}],
                "by_step": [{"step": 1, "precision": 1, "recall": 0.5, "f1": 0.67}],
            }
        )
    )
    assert len(load_records(tmp_path)) == 9
    files = write_report(tmp_path)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["memrl"][1]["forgetting"] == pytest.approx(1 / 3)
    md = (tmp_path / "summary.md").read_text()
    assert "| robomemory | none | 3 |" in md and "Spatial accuracy" in md
    pytest.importorskip("matplotlib")
    for name in ("sr_gc.png", "attempts.png", "memrl.png", "spatial_accuracy.png"):
        assert files[name].stat().st_size > 1000
    assert not list(tmp_path.glob("episodes/.*.tmp"))
