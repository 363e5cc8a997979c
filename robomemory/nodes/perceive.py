"""perceive: the step summarizer S and the query generator Q, run concurrently."""

from __future__ import annotations

from langchain_core.runnables import RunnableLambda, RunnableParallel
from langgraph.runtime import Runtime

from robomemory.context import AgentContext
from robomemory.nodes.common import NodeRun, last_action_text
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
    verbatim_summary,
    whole_words,
)
from robomemory.state import AgentState, observation_of


def perceive(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    run = NodeRun("perceive", runtime)
    obs = observation_of(state)
    task = state["task"]
    user = perceive_user(last_action_text(state, obs.text), obs.text, obs.place, obs.names)
    n = run.ctx.config.n_queries

    verbatim = verbatim_summary(obs.text, obs.place)
    trajectory = state.get("trajectory") or []
    moved = bool(trajectory) and trajectory[-1].get("place") != obs.place
    previous = state.get("queries") or []
    kept = kept_queries(previous, verbatim is not None, moved, task, first=not trajectory)

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
