"""perceive: the step summarizer S and the query generator Q, run concurrently."""

from __future__ import annotations

from langchain_core.runnables import RunnableLambda, RunnableParallel
from langgraph.runtime import Runtime

from robomemory.context import AgentContext
from robomemory.core import task_view
from robomemory.nodes.common import NodeRun
from robomemory.prompts.perceive import (
    QUERY_CHARS,
    QUERY_SYSTEM,
    SUMMARIZER_SYSTEM,
    SUMMARY_CHARS,
    MemoryQueries,
    StepSummary,
    perceive_user,
    query_user,
    summarizer_user,
)
from robomemory.state import AgentState, last_result_of, observation_of

# A world's answer up to VERBATIM_CHARS (with the room) is its own step summary.
VERBATIM_CHARS = 200


def perceive(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    run = NodeRun("perceive", runtime)
    obs = observation_of(state)
    task = task_view(state["task"])  # a long task condensed, its end (the goal) kept
    user = perceive_user(last_action_text(state, obs.text), obs.text, obs.place, obs.names)
    n = run.ctx.config.n_queries

    verbatim = verbatim_summary(obs.text, obs.place)
    trajectory = state.get("trajectory") or []
    moved = bool(trajectory) and trajectory[-1].get("place") != obs.place
    previous = state.get("queries") or []
    kept = kept_queries(previous, verbatim is not None, moved, task, first=not trajectory)
    # where the table takes the step, no model reads this step's queries or summary now
    decided = bool(state.get("table_next"))
    if not kept and decided:
        kept = previous or [task]
    if verbatim is None and decided:
        verbatim = seen_summary(obs.text, obs.place, obs.names)

    def summarize(_: object) -> str:
        if verbatim is not None:  # a short answer of the world is its own summary
            return verbatim
        fallback = StepSummary(summary=obs.text.strip()[:SUMMARY_CHARS] or "no observation")
        scene = summarizer_user(obs.text, obs.place, obs.names)
        return whole_words(
            run.llm.call(StepSummary, SUMMARIZER_SYSTEM, scene, fallback, obs.images).value.summary
        )

    def generate_queries(_: object) -> list[str]:
        if kept:
            return kept
        fallback = MemoryQueries(queries=[task[:QUERY_CHARS]])
        out = run.llm.call(
            MemoryQueries, QUERY_SYSTEM, query_user(task, user, n), fallback, obs.images
        )
        return [q for q in out.value.queries if q.strip()][:n] or [task]

    both = RunnableParallel(
        summary=RunnableLambda(summarize), queries=RunnableLambda(generate_queries)
    )
    out = both.invoke(None)
    return run.finish({"summary": out["summary"], "queries": out["queries"]})


def kept_queries(
    previous: list[str],
    short_answer: bool,
    moved: bool,
    task: str | None = None,
    first: bool = False,
) -> list[str]:
    """The queries that stand without asking Q, else [] (ask Q).

    A task's ``first`` step asks the memory about the task itself (nothing has happened yet).
    A short answer in the same place ("You take the knife.") tells the memory nothing new to
    look for, and Q is a model call; a long answer (a room, a read document) or a move asks
    for new queries, and so does the step after the task's first, whose query was the task."""
    if first and task:
        return [task]
    if previous == [task]:
        return []
    return list(previous) if previous and short_answer and not moved else []


def last_action_text(state: AgentState, shown: str = "") -> str | None:
    """The last action and the world's answer, as the query generator is shown them; the
    answer is left out when it is the text ``shown`` anyway (the observation), so the prompt
    carries it once."""
    result = last_result_of(state)
    if result is None:
        return None
    head = f"{result.action} -> {result.outcome.value}"
    if " ".join(result.message.split()) in ("", " ".join(shown.split())):
        return head
    return f"{head}: {result.message}".strip()


def verbatim_summary(observation: str, place: str | None = None) -> str | None:
    """The world's answer itself as the step summary, when it is short enough to be one
    ("You open the box."): a model summary of it adds nothing but a chance of a wrong word
    and a model call. None for a longer answer."""
    text = " ".join(observation.split())
    line = f"In {place}: {text}" if place else text
    return line if text and len(line) <= VERBATIM_CHARS else None


def seen_summary(observation: str, place: str | None, names: list[str]) -> str:
    """The step summary without a model: the place and the names the world says are here, or
    the answer's start where it names none, at most SUMMARY_CHARS."""
    text = ", ".join(names) if names else " ".join(observation.split())
    line = f"In {place}: {text}" if place else text
    return whole_words(line[: SUMMARY_CHARS + 1]) or "no observation"


def whole_words(summary: str) -> str:
    """A summary cut at SUMMARY_CHARS (the grammar closes the string there) back to its last
    whole sentence or clause in its second half, else its last whole word; a shorter one as
    it is."""
    text = summary.strip()
    if len(text) < SUMMARY_CHARS or " " not in text:
        return text
    text = text[: text.rindex(" ")]
    for sep, keep in ((". ", 1), (", ", 0)):
        if (at := text.rfind(sep)) > len(text) // 2:
            return text[: at + keep]
    return text.rstrip(" ,;:-")
