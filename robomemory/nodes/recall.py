"""recall: join of the memory branches; assembles working memory through the condenser."""

from __future__ import annotations

from langgraph.runtime import Runtime

from robomemory.graphs.context import AgentContext
from robomemory.graphs.state import AgentState
from robomemory.memory.condenser import Condenser, Event
from robomemory.nodes.common import NodeRun, observation_of, result_line

SECTIONS = (
    ("temporal", "What I have done"),
    ("spatial", "Where things are"),
    ("semantic", "Lessons"),
    ("episodic", "Past episodes"),
)


def memory_events(state: AgentState) -> list[Event]:
    """Task, recalled memory, recent activity and the current observation as condenser events."""
    events = [Event(kind="task", text=f"Task: {state['task']}")]
    recalled = state.get("recalled") or {}
    for key, title in SECTIONS:
        text = (recalled.get(key) or "").strip()
        events.append(Event(kind="memory" if text else "noise", text=f"{title}:\n{text}"))
    for item in state.get("trajectory") or []:
        events.append(
            Event(
                kind="result",
                text=result_line(item),
                step=item["step"],
            )
        )
    obs = observation_of(state)
    events.append(Event(kind="observation", text=f"Observation:\n{obs.text.strip()[:1200]}"))
    return events


def recall(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    run = NodeRun("recall", runtime)
    condenser = Condenser(run.ctx.config.memory.condenser)
    view = condenser.condense(memory_events(state), list(state.get("condensed") or []), run.llm)
    return run.finish({"working_memory": view.text, "condensed": view.summaries})
