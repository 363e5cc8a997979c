"""The graph LangGraph Studio serves (`langgraph dev`): compiled without a checkpointer,
since the dev server brings its own persistence. Live clients come from the environment
(see robomemory.graphs.context)."""

from robomemory.graphs.builder import build_graph

graph = build_graph().compile()
