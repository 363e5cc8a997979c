"""perceive: the step summarizer S and the query generator Q, run concurrently (and, while the
task refers to a thing it described, the referent judge beside them)."""

from __future__ import annotations

from langchain_core.runnables import RunnableLambda, RunnableParallel
from langgraph.runtime import Runtime

from robomemory.context import AgentContext
from robomemory.core import Action
from robomemory.grounding import Instruction, pending_references
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
)
from robomemory.prompts.referents import (
    CHOOSE_SYSTEM,
    CONFIRM_SYSTEM,
    NONE,
    Confirmation,
    choose_user,
    confirm_user,
    referent_model,
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
    kept = kept_queries(state.get("queries") or [], verbatim is not None, moved)

    def summarize(_: object) -> str:
        if verbatim is not None:  # a short answer of the world is its own summary
            return verbatim
        fallback = StepSummary(summary=obs.text.strip()[:SUMMARY_CHARS] or "no observation")
        scene = summarizer_user(obs.text, obs.place, obs.names)
        return run.llm.call(
            StepSummary, SUMMARIZER_SYSTEM, scene, fallback, obs.images
        ).value.summary

    def generate_queries(_: object) -> list[str]:
        if kept:
            return kept
        fallback = MemoryQueries(queries=[task[:QUERY_CHARS]])
        out = run.llm.call(
            MemoryQueries, QUERY_SYSTEM, query_user(task, user, n), fallback, obs.images
        )
        return [q for q in out.value.queries if q.strip()][:n] or [task]

    fits = {k: dict(v) for k, v in (state.get("fits") or {}).items()}
    space = run.ctx.executor.action_space()
    references = pending_references(
        state.get("notes") or [], state.get("done_actions") or [], space.verbs, task=task
    )
    unjudged = to_judge(references, space.candidates, fits)

    def judge(_: object) -> dict[str, dict[str, bool]]:
        for described, names in unjudged.items():
            chosen = judged_referent(run, described, names)
            if chosen is not None:  # no answer: judged again next step
                fits.setdefault(described, {}).update({n: n == chosen for n in names})
        return fits

    both = RunnableParallel(
        summary=RunnableLambda(summarize),
        queries=RunnableLambda(generate_queries),
        fits=RunnableLambda(judge),
    )
    out = both.invoke(None)
    return run.finish({"summary": out["summary"], "queries": out["queries"], "fits": out["fits"]})


def judged_referent(run: NodeRun, described: str, names: list[str]) -> str | None:
    """The one of ``names`` the model chooses as ``described`` and confirms, ``NONE`` when it
    chooses none or does not confirm its choice, None when a call gave no answer."""
    choice = run.llm.call(
        referent_model(tuple(names)), CHOOSE_SYSTEM, choose_user(described, names), lambda: None
    ).value
    if choice is None or choice.thing == NONE:
        return None if choice is None else NONE
    check = run.llm.call(
        Confirmation, CONFIRM_SYSTEM, confirm_user(choice.thing, described), lambda: None
    ).value
    if check is None:
        return None
    return choice.thing if check.answer == "yes" else NONE


def to_judge(
    references: list[Instruction],
    candidates: list[Action],
    fits: dict[str, dict[str, bool]],
) -> dict[str, list[str]]:
    """For each description an instruction refers to, the things its verb is offered on that
    are not judged yet (described -> names, in the world's order)."""
    out: dict[str, list[str]] = {}
    for ins in references:
        judged = fits.get(ins.described) or {}
        for a in candidates:
            if a.verb == ins.verb and a.args and a.args[0] not in judged:
                names = out.setdefault(ins.described, [])
                if a.args[0] not in names:
                    names.append(a.args[0])
    return out


def kept_queries(previous: list[str], short_answer: bool, moved: bool) -> list[str]:
    """The last step's queries when they still stand, else [] (ask Q again).

    A short answer in the same place ("You take the knife.") tells the memory nothing new to
    look for, and Q is a model call; a long answer (a room, a read document) or a move asks
    for new queries."""
    return list(previous) if previous and short_answer and not moved else []
