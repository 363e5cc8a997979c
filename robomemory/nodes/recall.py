"""recall: join of the memory branches; assembles working memory through the condenser.

Working memory is ordered from stable to changing, so the model server's prompt cache reuses
its head from one step to the next: the task, the long-term lessons and past episodes (what
was recalled in the task, only appended to), notes of what was read, what was done (temporal
memory: each step's action, outcome and summary, grows by appending, compressed every N
steps), then what is rewritten at any step: where things are, progress (score, done) and,
last, the current observation. The newest step's whole result ends the planner's and the
critic's prompts ("Last result"), where a small model attends most.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from robomemory.context import AgentContext
from robomemory.core import task_view
from robomemory.memory.condenser import Condenser, Event
from robomemory.memory.temporal import entry_step
from robomemory.nodes.common import NodeRun
from robomemory.state import AgentState, observation_of, world_model

STABLE_SECTIONS = (("semantic", "Lessons"), ("episodic", "Past episodes"))
TEMPORAL_SECTION = ("temporal", "What I have done")
CHANGING_SECTION = ("spatial", "Where things are")


def temporal_events(state: AgentState) -> list[Event]:
    """What was done: one activity event per step the temporal buffer describes (the
    condenser may summarize the oldest), the compressed past as memory."""
    key, title = TEMPORAL_SECTION
    if not ((state.get("recalled") or {}).get(key) or "").strip():
        return [Event(kind="noise", text=f"{title}:")]
    events = [Event(kind="note", text=f"{title}:")]
    for entry in state.get("temporal") or []:
        step = entry_step(entry)
        kind = "memory" if step is None else "result"
        events.append(Event(kind=kind, text=f"- {entry}", step=step))
    return events


def progress_line(state: AgentState) -> str:
    """Score so far and the actions that changed the world (what is done)."""
    parts = []
    score, max_score = state.get("score"), state.get("max_score")
    if score is not None and max_score:
        parts.append(f"Score: {score:g} of {max_score:g}")
    done = world_model(state).done
    if done:
        parts.append(f"Done: {', '.join(done)}")
    return "\n".join(parts)


def memory_events(state: AgentState) -> list[Event]:
    """Task, recalled memory, recent activity and the current observation as condenser events."""
    events = [Event(kind="task", text=f"Task: {task_view(state['task'])}")]
    recalled = state.get("recalled") or {}
    trajectory = list(state.get("trajectory") or [])

    def section(key: str, title: str) -> Event:
        text = (recalled.get(key) or "").strip()
        return Event(kind="memory" if text else "noise", text=f"{title}:\n{text}")

    events += [section(k, t) for k, t in STABLE_SECTIONS]
    notes = world_model(state).notes
    if notes:
        shown = [" ".join(n.split()) for n in notes]  # a note keeps its lines for grounding
        events.append(Event(kind="note", text="Notes (read):\n" + "\n".join(shown)))
    events += temporal_events(state)
    events.append(section(*CHANGING_SECTION))
    progress = progress_line(state)
    if progress:
        events.append(Event(kind="note", text=progress))
    obs = observation_of(state)
    last = " ".join(str(trajectory[-1]["message"]).split()) if trajectory else ""
    if " ".join(obs.text.split()) != last:  # else the last result already shows it
        events.append(Event(kind="observation", text=f"Observation:\n{obs.text.strip()[:1200]}"))
    return events


def recall(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    run = NodeRun("recall", runtime)
    condenser = Condenser(run.ctx.config.memory.condenser)
    view = condenser.condense(memory_events(state), list(state.get("condensed") or []), run.llm)
    return run.finish({"working_memory": view.text, "condensed": view.summaries})
