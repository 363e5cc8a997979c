"""recall: join of the memory branches; assembles working memory through the condenser.

Working memory is ordered from stable to changing, so the model server's prompt cache reuses
its head from one step to the next: the task, the long-term lessons and past episodes (what
was recalled in the task, only appended to), notes of what was read, the results of the steps
before the newest (grows by appending, drops a chunk at a time), then what is rewritten at any
step: what was done (temporal memory, compressed every N steps), where things are, progress
(score, done) and, last, the current observation.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from robomemory.context import AgentContext
from robomemory.episode import TrajectoryStep
from robomemory.memory.condenser import Condenser, Event
from robomemory.nodes.common import NodeRun, result_line
from robomemory.state import AgentState, observation_of

STABLE_SECTIONS = (("semantic", "Lessons"), ("episodic", "Past episodes"))
TEMPORAL_SECTION = ("temporal", "What I have done")
CHANGING_SECTION = ("spatial", "Where things are")
OLD_RESULT_CHARS = 100
# Older steps are dropped from working memory a chunk at a time, not one a step: a window
# sliding by one changes the first line of "Steps:" at every step and with it the whole prompt
# after the notes, which the prompt cache then recomputes, where a chunked one only appends.
OLD_STEPS_CHUNK = 4


def shown_old_steps(trajectory: list[TrajectoryStep], chunk: int = OLD_STEPS_CHUNK) -> list:
    """The steps before the newest that working memory lists: those after the last whole
    chunk but one (between ``chunk`` and ``2 * chunk - 1`` of them once the episode is long),
    so the first shown changes once every ``chunk`` steps. Needs at most ``2 * chunk`` steps
    of the state's window."""
    if len(trajectory) < 2:
        return []
    newest = int(trajectory[-1]["step"])
    first = max(0, ((newest - 1) // chunk - 1) * chunk)
    return [item for item in trajectory[:-1] if int(item["step"]) > first]


def progress_line(state: AgentState) -> str:
    """Score so far and the actions that changed the world (what is done)."""
    parts = []
    score, max_score = state.get("score"), state.get("max_score")
    if score is not None and max_score:
        parts.append(f"Score: {score:g} of {max_score:g}")
    done = state.get("done_actions") or []
    if done:
        parts.append(f"Done: {', '.join(done)}")
    return "\n".join(parts)


def memory_events(state: AgentState) -> list[Event]:
    """Task, recalled memory, recent activity and the current observation as condenser events."""
    events = [Event(kind="task", text=f"Task: {state['task']}")]
    recalled = state.get("recalled") or {}
    trajectory = list(state.get("trajectory") or [])

    def section(key: str, title: str) -> Event:
        text = (recalled.get(key) or "").strip()
        return Event(kind="memory" if text else "noise", text=f"{title}:\n{text}")

    events += [section(k, t) for k, t in STABLE_SECTIONS]
    notes = state.get("notes") or []
    if notes:
        events.append(Event(kind="note", text="Notes (read):\n" + "\n".join(notes)))
    # Every step but the newest, shortened (what was read in full is in the notes): a new
    # step only appends a line here. The newest step's whole result ends the planner's and the
    # critic's prompts ("Last result"), where a small model attends most.
    old = shown_old_steps(trajectory)
    if old:
        events.append(Event(kind="note", text="Steps:"))
    for item in old:
        text = result_line(item, OLD_RESULT_CHARS)
        events.append(Event(kind="result", text=text, step=item["step"]))
    events.append(section(*TEMPORAL_SECTION))
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
