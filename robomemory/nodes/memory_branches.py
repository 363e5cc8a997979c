"""The four memory branches, run in parallel by LangGraph fan-out: update with s_t, retrieve q_t.

Short-term memories (temporal, spatial) update every step; long-term memories (semantic,
episodic) only retrieve here and update at consolidate.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Literal

from langgraph.runtime import Runtime

from robomemory.context import AgentContext
from robomemory.core import clip, task_view
from robomemory.episode import TrajectoryStep
from robomemory.memory.base import RetrievedItem, SceneGrounding
from robomemory.memory.spatial import render_triples
from robomemory.memory.spatial_algorithm import make_triple
from robomemory.memory.temporal import step_line
from robomemory.nodes.common import NodeRun
from robomemory.nodes.perceive import verbatim_summary
from robomemory.state import AgentState, observation_of


def temporal(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    run = NodeRun("temporal", runtime)
    module = run.ctx.memory.temporal
    if not run.ctx.config.memory.temporal.enabled:
        return run.finish({"recalled": {"temporal": ""}})
    trajectory = state.get("trajectory") or []
    entry = temporal_entry(state["summary"], trajectory[-1] if trajectory else None)
    buffer = list(state.get("temporal") or [])
    early = compressed_for(state.get("compressed"), buffer)
    wait = early is None and bool(state.get("table_next"))
    buffer = module.update(buffer, entry, run.llm, compressed=early, wait=wait)
    return run.finish({"temporal": buffer, "recalled": {"temporal": module.render(buffer)}})


def temporal_compress(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    """The temporal memory's compression, beside perceive: a full buffer overflows with the
    step's entry whatever it says, and what is compressed (the whole buffer) is known before
    the step's summary, so its model call is batched with perception's instead of following
    them. The temporal branch uses it when it was made of the buffer it holds."""
    run = NodeRun("temporal_compress", runtime)
    module = run.ctx.memory.temporal
    buffer = list(state.get("temporal") or [])
    if not run.ctx.config.memory.temporal.enabled or not module.due(buffer):
        return run.finish({"compressed": None})
    if state.get("table_next"):  # waits for a step whose planner reads it
        return run.finish({"compressed": None})
    summary = module.compress(buffer, run.llm)
    return run.finish({"compressed": {"of": buffer_key(buffer), "summary": summary}})


def buffer_key(buffer: list[str]) -> str:
    """A short digest of a temporal buffer (which buffer a compression was made of)."""
    return hashlib.sha1("\x1f".join(buffer).encode()).hexdigest()[:16]


def compressed_for(compressed: Mapping[str, str] | None, buffer: list[str]) -> str | None:
    """The summary temporal_compress made of ``buffer``; None if it made none of this one."""
    if compressed and compressed.get("of") == buffer_key(buffer):
        return compressed["summary"]
    return None


def temporal_entry(summary: str, last: TrajectoryStep | None) -> str:
    """A temporal-memory entry: the step's summary after the action it describes and its
    outcome (``step 3: open(door) -> succeeded: ...``), so working memory lists what was done
    once, in order, with the exact action."""
    if last is None or not summary.strip():
        return summary
    return f"{step_line(last)}: {summary.strip()}"


def spatial_relations(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    """Algorithm 2's relation retriever, beside perceive: with grounded perception it reads the
    world's own words, not s_t, so it need not wait for the step summarizer, and its model call
    is batched with perceive's two. Without grounding (or spatial memory) it leaves G_new to
    the spatial branch, which extracts it from s_t."""
    run = NodeRun("spatial_relations", runtime)
    module = run.ctx.memory.spatial
    grounding = scene_grounding(state)
    episode_id, step = state["handles"]["episode_id"], _global_step(state)
    if (
        module is None
        or not run.ctx.config.memory.spatial.enabled
        or grounding is None
        or not grounding.text.strip()
        or module.has_update(episode_id, step)
    ):
        return run.finish({"relations": None})
    new = module.extract("", run.llm, grounding)
    return run.finish({"relations": [[t.subject, t.relation, t.object] for t in new]})


def scene_grounding(state: AgentState) -> SceneGrounding | None:
    """What perception reports for certain this step, or None when it reports no names."""
    obs = observation_of(state)
    if not (obs.names or obs.place):
        return None
    trajectory = state.get("trajectory") or []
    stayed = not trajectory or trajectory[-1].get("place") == obs.place
    return SceneGrounding(
        names=obs.names,
        fixtures=[n for n in obs.fixtures if n in obs.names],
        place=obs.place,
        holding=obs.holding,
        holding_known=obs.holding_known,
        text=obs.text,
        arrived_by=_arrived_by(state, obs.place),
        short_here=stayed and verbatim_summary(obs.text, obs.place) is not None,
        stayed=bool(trajectory) and stayed,
    )


def spatial(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    run = NodeRun("spatial", runtime)
    module = run.ctx.memory.spatial
    if module is None or not run.ctx.config.memory.spatial.enabled:
        return run.finish({"recalled": {"spatial": ""}})
    queries = state.get("queries") or [task_view(state["task"])]
    found = state.get("relations")
    new = None if found is None else [t for p in found if (t := make_triple(*p)) is not None]
    stats = module.update(
        state["summary"],
        queries,
        step=_global_step(state),
        episode_id=state["handles"]["episode_id"],
        llm=run.llm,
        grounding=scene_grounding(state),
        new=new,
    )
    text = render_triples(module.retrieve(queries))
    run.ctx.memory.episodes.record_spatial(
        state["handles"]["episode_id"], _global_step(state), stats.model_dump()
    )
    return run.finish({"recalled": {"spatial": text}})


def _arrived_by(state: AgentState, place: str | None) -> tuple[str, str] | None:
    """(place left, the way walked) when the newest step was a one-argument move that
    succeeded and changed the robot's place, e.g. ``go(east)`` from the livingroom."""
    trajectory = state.get("trajectory") or []
    if not trajectory or not place:
        return None
    last = trajectory[-1]
    left, args = last.get("place"), last.get("args") or []
    if str(last["outcome"]) != "succeeded" or not left or left == place or len(args) != 1:
        return None
    return left, str(args[0])


def _global_step(state: AgentState) -> int:
    """Spatial steps are ordered per robot across tasks: the episode's step is enough here
    because the spatial store keys its idempotency on (episode_id, step)."""
    return int(state.get("step") or 0)


# Long-term lines recalled earlier in a task stay in view, at most this many a memory.
IN_VIEW_LINES = 6


def _render_items(items: list[RetrievedItem]) -> list[str]:
    lines = []
    for item in items:
        tag = f"{item.kind}/{item.level}" if item.level else item.kind
        lines.append(f"- [{tag} Q={item.q:.2f}] {item.text}")
    return lines


# A recalled item as a step's record keeps it: its text and task cut, so the log stays small.
ITEM_TEXT_CHARS, ITEM_TASK_CHARS = 600, 200


def recalled_record(item: RetrievedItem) -> dict[str, Any]:
    """What a step's record keeps of a recalled item: id, level, text, Q (the utility that
    ranked it) and origin (the store's provenance fields), for the run page."""
    origin = dict(item.origin)
    if isinstance(origin.get("task"), str):
        origin["task"] = clip(origin["task"], ITEM_TASK_CHARS)
    return {
        "id": item.id,
        "level": item.level,
        "text": clip(item.text, ITEM_TEXT_CHARS),
        "q": round(item.q, 4),
        "origin": origin,
    }


def keep_in_view(shown: list[str], recalled: list[str], limit: int = IN_VIEW_LINES) -> list[str]:
    """What the planner is shown of a long-term memory: every line recalled so far in the task,
    in the order first recalled, the newest ``limit``. Each step's queries recall a slightly
    different top-k; listed as they came, the lines changed at most steps, and with them the
    whole prompt after them had to be processed again (the model server reuses only an
    unchanged head). MemRL credits every item recalled in the task at its end, as shown."""
    return [*shown, *(line for line in dict.fromkeys(recalled) if line not in shown)][-limit:]


def _longterm(
    kind: Literal["semantic", "episodic"], state: AgentState, runtime: Runtime[AgentContext]
) -> dict:
    run = NodeRun(kind, runtime)
    memory = run.ctx.memory
    module = memory.semantic if kind == "semantic" else memory.episodic
    if module is None:
        return run.finish({"recalled": {kind: ""}, "recalled_items": {kind: []}})
    items = module.retrieve(state.get("queries") or [task_view(state["task"])], state["task"])
    run.ctx.memory.episodes.add_retrieved(
        state["handles"]["episode_id"], [i.id for i in items], _global_step(state)
    )
    lines = keep_in_view((state.get("in_view") or {}).get(kind) or [], _render_items(items))
    return run.finish(
        {
            "recalled": {kind: "\n".join(lines)},
            "recalled_items": {kind: [recalled_record(i) for i in items]},
            "in_view": {kind: lines},
        }
    )


def semantic(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    return _longterm("semantic", state, runtime)


def episodic(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    return _longterm("episodic", state, runtime)
