"""The compiled graph has Algorithm 1's nodes and edges."""

from robomemory.context import RunContext
from robomemory.graphs.builder import BRANCHES, build_graph
from robomemory.state import AgentState


def _edges(graph) -> set[tuple[str, str]]:
    return {(e.source, e.target) for e in graph.get_graph().edges}


def test_nodes_and_edges():
    g = build_graph().compile()
    nodes = set(g.get_graph().nodes)
    assert {
        "start",
        "perceive",
        "spatial_relations",
        "temporal_compress",
        *BRANCHES,
        "recall",
        "ground",
        "planner",
        "critic",
        "executor",
        "consolidate",
    } <= nodes
    edges = _edges(g)
    assert ("__start__", "start") in edges
    assert {("start", "perceive"), ("start", "spatial_relations")} <= edges
    assert ("start", "temporal_compress") in edges
    for branch in BRANCHES:
        assert ("perceive", branch) in edges, branch
        assert (branch, "recall") in edges, branch
    assert [t for s, t in edges if s == "spatial_relations"] == ["spatial"]
    assert [t for s, t in edges if s == "temporal_compress"] == ["temporal"]
    # one briefing a step: recall -> ground -> planner or critic
    assert [t for s, t in edges if s == "recall"] == ["ground"]
    assert {("ground", "planner"), ("ground", "critic")} <= edges
    assert {("critic", "executor"), ("critic", "planner")} <= edges
    assert ("planner", "executor") in edges
    assert {
        ("executor", "perceive"),
        ("executor", "spatial_relations"),
        ("executor", "temporal_compress"),
        ("executor", "consolidate"),
    } <= edges
    assert ("consolidate", "__end__") in edges


def test_planner_output_goes_straight_to_executor():
    """The first step of every new plan bypasses the critic."""
    edges = _edges(build_graph().compile())
    assert [t for s, t in edges if s == "planner"] == ["executor"]


def test_without_critic_there_is_no_critic_node():
    g = build_graph(critic_enabled=False).compile()
    assert "critic" not in g.get_graph().nodes
    assert ("ground", "executor") in _edges(g)


def test_every_field_of_the_state_is_described_in_its_schema():
    """LangGraph Studio shows a thread's state by the graph's JSON schema: each field of
    AgentState carries its docstring there."""
    fields = build_graph(context_schema=RunContext).compile().get_input_jsonschema()["properties"]
    assert set(fields) == set(AgentState.__annotations__)
    bare = [name for name, f in fields.items() if len(f.get("description", "")) < 15]
    assert not bare, bare


def test_the_graph_publishes_its_input_and_output_schemas():
    """Studio's input form is the graph's input JSON schema (typing_extensions.TypedDict)."""
    graph = build_graph(context_schema=RunContext).compile()
    for schema in (graph.get_input_jsonschema(), graph.get_output_jsonschema()):
        assert {"task", "step", "observation", "trajectory"} <= set(schema["properties"])
