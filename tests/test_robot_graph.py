"""The RoboMemory graph drives RobotExecutor through a scripted pick-and-place task.

Real: the graph, the memory stores (networkx, Qdrant local mode), the π0 client against the
openpi-protocol dummy policy server, roslibpy against the local rosbridge-protocol server.
FAKES: the model's answers (ScriptedChatModel), the arm (FakeArm) and Nav2 behind rosbridge.
"""

from __future__ import annotations

import json

import pytest
from robot_servers import policy_server, rosbridge_server

from robomemory.config import AgentConfig, MemoryConfig, ModelConfig
from robomemory.executors.arm import FakeArm
from robomemory.executors.robot import RobotExecutor
from robomemory.executors.skills import SkillConfig
from robomemory.graphs.agent import build_agent, sqlite_checkpointer
from robomemory.models import make_embedder
from robomemory.structured import StructuredLLM
from robomemory.testing import PlanScript, ScriptedChatModel

WAYPOINTS = "waypoints:\n  kitchen_counter: {x: 1.0, y: 0.0}\n  dining_table: {x: 1.5, y: 2.0}\n"
PLAN = [
    {"action": "navigate_to", "args": ["kitchen_counter"]},
    {"action": "pick_up", "args": ["banana"]},
    {"action": "navigate_to", "args": ["dining_table"]},
    {"action": "put_down_to", "args": ["banana", "basket"]},
    {"action": "task_complete", "args": []},
]


def answers(schema, messages):
    """The FAKE model: one plan for the whole task; every other call gets a plausible answer."""
    name = schema.__name__
    if name == "Plan":  # the first step one of the robot's candidates, the rest as planned
        return PlanScript(lambda m: [(p["action"], p["args"]) for p in PLAN]).answer(
            schema, messages
        )
    table = {
        "StepSummary": {"summary": "The robot acted; the banana is visible."},
        "MemoryQueries": {"queries": ["where is the banana", "where is the basket"]},
        "TemporalSummary": {"summary": "The robot went to the counter and took the banana."},
        "ExtractedTriples": {
            "relations": [{"subject": "banana", "relation": "on", "object": "kitchen_counter"}]
        },
        "ResolverDecision": {"delete": []},
        "CriticVerdict": {"approve": True, "reason": "the step follows the plan"},
        "SemanticInsights": {"helped": [], "hurt": [], "task": ["navigate before picking up"]},
        "EpisodeRecord": {"summary": "Took the banana from the counter to the basket."},
        "MemoryDecision": {"event": "ADD"},
        "ChunkSummary": {"summary": "earlier steps"},
    }
    if name not in table:
        raise KeyError(f"no scripted answer for {name}")
    return table[name]


@pytest.fixture
def robot(tmp_path):
    (tmp_path / "w.yaml").write_text(WAYPOINTS)
    with policy_server() as (_, pport), rosbridge_server(tmp_path / "ops.jsonl") as (_, rport):
        arm = FakeArm()
        ex = RobotExecutor.from_urls(
            f"ws://127.0.0.1:{pport}",
            f"ws://127.0.0.1:{rport}",
            tmp_path / "w.yaml",
            arm=arm,
            task="put the banana in the basket on the dining table",
            skill_config=SkillConfig(control_hz=2000, actions_per_chunk=10, max_steps=20),
            # where the task says each is: a thing of no known place is offered at every
            # point, and the table would take the banana at the first one
            objects=["banana@kitchen_counter", "basket@dining_table"],
        )
        yield ex, arm, tmp_path
        ex.close()


def test_graph_completes_pick_and_place_on_the_robot(robot):
    ex, arm, tmp = robot
    model_cfg = ModelConfig(provider="fake", embedder="fake")
    config = AgentConfig(
        model=model_cfg, memory=MemoryConfig(data_dir=tmp / "mem"), max_steps=10, max_plan_len=5
    )
    fake = ScriptedChatModel(responder=answers)
    agent = build_agent(
        config,
        ex,
        llm=StructuredLLM(fake, vision=True),
        embedder=make_embedder(model_cfg),
        checkpointer=sqlite_checkpointer(tmp / "ckpt.sqlite"),
    )
    try:
        result = agent.run()
    finally:
        agent.context.memory.close()
    assert result.success and result.end_reason == "task_complete"
    assert [(t["action"], t["outcome"]) for t in result.trajectory] == [
        ("navigate_to(kitchen_counter)", "succeeded"),
        ("pick_up(banana)", "succeeded"),
        ("navigate_to(dining_table)", "succeeded"),
        ("put_down_to(banana, basket)", "succeeded"),
        ("task_complete()", "succeeded"),
    ]
    assert len(arm.applied) == 40  # two skills of 20 control steps each
    ops = [json.loads(x) for x in (tmp / "ops.jsonl").read_text().splitlines()]
    goals = [o["args"]["pose"]["pose"]["position"] for o in ops if o["op"] == "send_action_goal"]
    assert [(g["x"], g["y"]) for g in goals] == [(1.0, 0.0), (1.5, 2.0)]
    assert ex.location == "dining_table"
    assert agent.state(result.thread_id)["observation"]["images"][0].startswith("data:image/jpeg")
