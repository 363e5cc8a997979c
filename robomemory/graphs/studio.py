"""The graph LangGraph Studio serves (`langgraph dev`, see langgraph.json).

At import its live clients are built explicitly from the operator's environment by
robomemory.factory (``ROBOMEMORY_GAME`` is required; see that module) and installed with
:func:`robomemory.context.serve`; the embedded model starts at the first run's first model
call, not at import. A run takes a :class:`RunInput` (the task, optional) and returns a
:class:`RunOutput` (its outcome); the thread's state is the whole AgentState. A run's context
is a :class:`RunContext`: it may only tune the run (steps, plan length, queries, per-run
ablations); anything else is refused. Compiled without a checkpointer: the dev server brings
its own persistence.
"""

import os

from robomemory.context import RunContext, serve
from robomemory.factory import context_from_env
from robomemory.graphs.builder import build_graph
from robomemory.graphs.schemas import RunInput, RunOutput

operator_context = context_from_env(os.environ)
serve(operator_context)
graph = build_graph(
    critic_enabled=operator_context.config.critic_enabled,
    context_schema=RunContext,
    input_schema=RunInput,
    output_schema=RunOutput,
).compile()
