"""Assembles Algorithm 1 of the paper as a LangGraph StateGraph."""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START, StateGraph

from robomemory.context import AgentContext
from robomemory.nodes.consolidate import consolidate
from robomemory.nodes.critic import critic
from robomemory.nodes.executor import executor
from robomemory.nodes.ground import ground
from robomemory.nodes.memory_branches import (
    episodic,
    semantic,
    spatial,
    spatial_relations,
    temporal,
    temporal_compress,
)
from robomemory.nodes.perceive import perceive
from robomemory.nodes.planner import planner
from robomemory.nodes.recall import recall
from robomemory.nodes.start import start
from robomemory.state import AgentState, approves

BRANCHES = ("temporal", "spatial", "semantic", "episodic")
# Run at the start of every step: the information preprocessor and, beside it, the spatial
# relation retriever (it reads the world's words, not the summary) and the temporal memory's
# compression (of the buffer before this step's entry); see nodes.memory_branches.
PERCEPTION = ("perceive", "spatial_relations", "temporal_compress")
# The branches that wait for a node of perception besides perceive.
JOINS = {
    "spatial": ["perceive", "spatial_relations"],
    "temporal": ["perceive", "temporal_compress"],
}


def route_after_ground(state: AgentState) -> Literal["critic", "planner"]:
    """A plan with a next step goes to the critic; no plan or an exhausted one to the planner."""
    plan = state.get("plan") or []
    if int(state.get("plan_index") or 0) < len(plan):
        return "critic"
    return "planner"


def route_after_ground_without_critic(state: AgentState) -> Literal["executor", "planner"]:
    """Without a critic, a plan's next step goes straight to the executor."""
    return "executor" if route_after_ground(state) == "critic" else "planner"


def route_after_critic(state: AgentState) -> Literal["executor", "planner"]:
    """An approved step runs; a rejected one sends the agent back to the planner."""
    return "executor" if approves(state.get("verdict")) else "planner"


def route_after_executor(state: AgentState) -> Literal["consolidate"] | list[str]:
    """An episode over goes to consolidation; otherwise the next step starts."""
    return "consolidate" if state.get("done") else list(PERCEPTION)


def build_graph(
    critic_enabled: bool = True,
    context_schema: type = AgentContext,
    *,
    input_schema: type = AgentState,
    output_schema: type = AgentState,
) -> StateGraph:
    """The uncompiled RoboMemory graph (compile it with or without a checkpointer).

    ``context_schema`` is AgentContext for Python callers; a served graph uses RunContext.
    ``input_schema`` / ``output_schema`` are the whole state for Python callers (RoboMemoryAgent
    passes the episode id it claimed); a served graph takes graphs.schemas.RunInput and returns
    RunOutput (its thread's state stays whole)."""
    g = StateGraph(
        AgentState,
        context_schema=context_schema,
        input_schema=input_schema,
        output_schema=output_schema,
    )
    g.add_node("start", start)
    g.add_node("perceive", perceive)
    g.add_node("spatial_relations", spatial_relations)
    g.add_node("temporal_compress", temporal_compress)
    for name, fn in zip(BRANCHES, (temporal, spatial, semantic, episodic), strict=True):
        g.add_node(name, fn)
    g.add_node("recall", recall)
    g.add_node("ground", ground)
    g.add_node("planner", planner)
    if critic_enabled:
        g.add_node("critic", critic)
    g.add_node("executor", executor)
    g.add_node("consolidate", consolidate)

    g.add_edge(START, "start")
    for name in PERCEPTION:
        g.add_edge("start", name)
    for name in BRANCHES:
        g.add_edge(JOINS.get(name, "perceive"), name)
    g.add_edge(list(BRANCHES), "recall")
    g.add_edge("recall", "ground")
    if critic_enabled:
        g.add_conditional_edges("ground", route_after_ground, ["planner", "critic"])
        g.add_conditional_edges("critic", route_after_critic, ["executor", "planner"])
    else:
        g.add_conditional_edges(
            "ground", route_after_ground_without_critic, ["planner", "executor"]
        )
    g.add_edge("planner", "executor")
    g.add_conditional_edges("executor", route_after_executor, [*PERCEPTION, "consolidate"])
    g.add_edge("consolidate", END)
    return g
