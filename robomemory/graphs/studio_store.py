"""The store `langgraph dev` serves (langgraph.json ``store.path``): the served robot's
long-term memory through LangGraph's Store API, read from the operator's context that
``graphs/studio.py`` installs. Nothing is built here, so loading it twice builds nothing."""

from robomemory.context import served
from robomemory.memory.langgraph_store import LongTermStore
from robomemory.memory.system import MemorySystem


def served_memories() -> list[MemorySystem]:
    """The served robot's memory system, or none before the graph is loaded."""
    context = served()
    return [] if context is None or context.memory is None else [context.memory]


store = LongTermStore(served_memories)
