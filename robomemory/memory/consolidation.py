"""Task-end consolidation (paper section 3.2 + seeds 002_…, 001_…): utilities first, then
the two creators concurrently:

- semantic: the long-term creator (a model call) writes action- and task-level insights from
  the trajectory, temporal and spatial memory and the outcome; the steps the world rewarded
  (its score rose) are helped-lessons beside the creator's, and an attempt that did not succeed
  keeps the cycles that wasted its steps (``memory/cycles.py``) as task lessons in the world's
  words, and a step that lost points or the task, or that the world rewarded most, is kept
  with the world's verdict (:func:`verdicts`, level "verdict", recalled in slots of its own
  by its own task); each goes through the
  Mem0 update;
  task lessons are asked only of a task that recalled none (:func:`recalled_task_lessons`);
- episodic: the creator summarizes the attempt with its outcome; added as a new event (no
  updater: every attempt is kept, the paper's episodic memory records every trajectory);
- utility: every item retrieved during the task gets the MemRL Q update with r from the outcome,
  before any Mem0 write (so an item deleted below keeps its Q history row, crash or not).

Nothing is learned from an episode in which the planner fell back (``plan_reason`` "fallback:
...": the model gave no usable plan): no lesson, no episode record, no Q update; its report
says why (``not_learned``). Its steps were the executor's fallback actions, not the agent's
decisions, and a robot must not learn from them.

Idempotent per episode: a finished episode is recorded in the history database and a second
call returns its report untouched; an interrupted one resumes from its journal (the creator's
items are journaled, so the model is not asked again and nothing is duplicated).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from robomemory.episode import StepRecord
from robomemory.memory.cycles import cycle_lessons
from robomemory.memory.lessons import lesson_text
from robomemory.memory.longterm import LongTermMemory, NewItem
from robomemory.memory.system import MemorySystem
from robomemory.memory.utility import task_reward
from robomemory.prompts import longterm as prompts
from robomemory.structured import NodeLLM

log = logging.getLogger(__name__)

MAX_STEPS_SHOWN = 20
MAX_HELPED = 3  # action lessons: steps that helped
MAX_HURT = 2  # and steps that hurt
MAX_REWARDED = 4  # steps the world rewarded, kept as helped lessons whatever the creator says
MAX_TASK_ITEMS = 2
# How the planner's plan_reason starts when the model gave no usable plan (nodes/planner.py).
FALLBACK_REASON = "fallback:"


def fallback_steps(trajectory: Sequence[StepRecord]) -> list[int]:
    """The steps taken on a plan the planner fell back to (the model gave none it could use)."""
    return [
        int(s.get("step") or 0)
        for s in trajectory
        if str(s.get("plan_reason") or "").startswith(FALLBACK_REASON)
    ]


def not_learned(trajectory: Sequence[StepRecord]) -> str | None:
    """Why nothing is learned from this episode (some decisions were fallbacks), or None."""
    steps = fallback_steps(trajectory)
    if not steps:
        return None
    shown = ", ".join(map(str, steps[:10])) + (", ..." if len(steps) > 10 else "")
    return (
        f"{len(steps)} of {len(trajectory)} steps were the planner's fallback, not the model's "
        f"plan (step {shown}): nothing is written to long-term memory"
    )


def score_gains(trajectory: Sequence[StepRecord]) -> list[float]:
    """How much the world's score rose at each step (0 where it did not, or gives no score)."""
    gains = []
    before = 0.0
    for step in trajectory:
        score = step.get("score")
        gains.append(max(score - before, 0.0) if score is not None else 0.0)
        before = score if score is not None else before
    return gains


def rewarded_steps(trajectory: Sequence[StepRecord], limit: int = MAX_REWARDED) -> list[StepRecord]:
    """The steps after which the world's score rose, the newest ``limit`` (oldest first): the
    world's own evidence of what helped, which the creator model may miss (it can keep a
    preparing step and leave out the step that won). One step per action: its newest rewarded
    one."""
    seen: set[str] = set()
    out: list[StepRecord] = []
    for step, gain in reversed(list(zip(trajectory, score_gains(trajectory), strict=True))):
        if gain > 0 and step["action"] not in seen and len(out) < limit:
            seen.add(step["action"])
            out.append(step)
    return out[::-1]


def losing_steps(trajectory: Sequence[StepRecord], lost: bool) -> list[str]:
    """The actions that lost points or the task, newest first: a step after which the world's
    score fell (a wrong commitment), and the last step of a task the world ended as lost (an
    irreversible act done wrong). Their lessons say so before the creator's, so the next
    attempt is not offered them (a lesson that an action hurt withholds it)."""
    out: list[str] = []
    before = 0.0
    for step in trajectory:
        score = step.get("score")
        if score is not None and score < before and step["action"] not in out:
            out.append(str(step["action"]))
        before = score if score is not None else before
    if lost and trajectory and str(trajectory[-1]["action"]) not in out:
        out.append(str(trajectory[-1]["action"]))
    return out[::-1]


def best_step(trajectory: Sequence[StepRecord]) -> StepRecord | None:
    """The step the world rewarded most, when its score rose more there than at any other
    step (the right focus: +50 where each walk earned +8); None when the rises tie (a
    recipe's steps, a point each) or none rose. A step after which the robot stood elsewhere
    is a walk, no pick (the first walk of a search scored 25, and its verdict drew the next
    attempt to that room): the spatial map keeps where it led."""
    gains = score_gains(trajectory)
    for i, step in enumerate(trajectory[:-1]):
        if step.get("place") != trajectory[i + 1].get("place"):
            gains[i] = 0.0
    top = max(gains, default=0.0)
    if top <= 0 or gains.count(top) != 1:
        return None
    return trajectory[gains.index(top)]


def verdicts(trajectory: Sequence[StepRecord], lost: bool) -> dict[str, str]:
    """What the world's verdict on each losing step was (:func:`losing_steps`), and on the
    step it rewarded most (:func:`best_step`, with where it was: "score 25 -> 75 at outside"),
    before what it said: "score 25 -> -100, the task lost: You focus on the orange."
    (ScienceWorld's words for a wrong focus are only "You focus on the orange."; the score and
    the end are its verdict, and a lesson without them reads as a step that went well)."""
    out: dict[str, str] = {}
    before = 0.0
    best = best_step(trajectory)
    for i, step in enumerate(trajectory):
        score = step.get("score")
        ended = lost and i == len(trajectory) - 1
        fell = score is not None and score < before
        if fell or ended or step is best:
            said = [f"score {before:g} -> {score:g}"] if fell or step is best else []
            if step is best and step.get("place"):  # where: the next attempt goes there
                said[-1] += f" at {step['place']}"
            said += ["the task lost"] if ended else []
            message = " ".join(str(step.get("message", "")).split())
            out[str(step["action"])] = f"{', '.join(said)}: {message}".rstrip(": ")
        before = score if score is not None else before
    return out


def render_trajectory(trajectory: Sequence[StepRecord], limit: int = MAX_STEPS_SHOWN) -> str:
    """The steps as short lines: 'i. action -> outcome: message' (the newest ``limit``), a
    step that raised the world's score marked '[score +1]' (the creator's clue to what
    helped: without it a small creator names the first steps, not the winning one)."""
    lines = []
    gains = score_gains(trajectory)
    for i, step in enumerate(trajectory):
        if i < len(trajectory) - limit:
            continue
        message = " ".join(str(step["message"]).split())[:120]
        line = f"{step['step']}. {step['action']} -> {step['outcome']}: {message}".rstrip(": ")
        lines.append(f"{line} [score +{gains[i]:g}]" if gains[i] > 0 else line)
    return "\n".join(lines)


def action_lessons(
    rewarded: Sequence[StepRecord],
    helped: Sequence[str],
    hurt: Sequence[str],
    said: dict[str, str],
) -> list[NewItem]:
    """The action lessons of a task: the steps the world rewarded, then the creator's
    ``helped`` and ``hurt`` (at most MAX_HELPED / MAX_HURT of each) that the rewarded ones do
    not already say; a rewarded step is never a hurt lesson (the score is the world's word)."""
    lessons = [(s["action"], "helped", str(s["message"])) for s in rewarded]
    known = {s["action"] for s in rewarded}
    lessons += [(a, "helped", said[a]) for a in helped[:MAX_HELPED] if a not in known]
    lessons += [(a, "hurt", said[a]) for a in hurt[:MAX_HURT] if a not in known]
    return [NewItem(lesson_text(a, v, m), "action") for a, v, m in lessons]


def fallback_episode(trajectory: Sequence[StepRecord]) -> str:
    """FALLBACK episodic record when the model cannot summarize: the actions and outcomes
    verbatim (a plain record of what happened, not a summary)."""
    acts = "; ".join(f"{s['action']} {s['outcome']}".strip() for s in trajectory)
    return f"Actions: {acts[-(prompts.EPISODE_CHARS - 10) :] or 'none'}."


def consolidate(
    system: MemorySystem,
    *,
    task: str,
    success: bool,
    score: float | None,
    max_score: float | None,
    temporal_text: str,
    trajectory: Sequence[StepRecord],
    spatial_text: str,
    retrieved_ids: list[str],
    episode_id: str,
    llm: NodeLLM,
    lost: bool = False,
) -> dict:
    """Write long-term memory for a finished task and update utilities; returns a report.
    ``lost``: the world ended the task as lost (its last step lost it)."""
    done = system.history.episode_report(episode_id)
    if done is not None:
        log.info("consolidate: episode %s already consolidated; skipping", episode_id)
        return {**done, "skipped": True}
    started = time.perf_counter()
    reward = task_reward(success, score, max_score, system.cfg.utility)
    if (why := not_learned(trajectory)) is not None:  # before any write, Q values included
        log.warning("consolidate: episode %s: %s", episode_id, why)
        report = {  # the report's shape, every count 0
            "episode_id": episode_id,
            "reward": reward,
            "semantic": (
                {**_summary([], []), "task_lessons_asked": False}
                if system.semantic is not None
                else None
            ),
            "episodic": _summary([], []) if system.episodic is not None else None,
            "q_updates": [],
            "not_learned": why,
            "seconds": round(time.perf_counter() - started, 4),
        }
        system.history.finish_episode(episode_id, report)
        return report
    outcome = prompts.outcome_line(success, score, max_score)
    user = prompts.creator_prompt(
        task, outcome, render_trajectory(trajectory), temporal_text, spatial_text
    )
    # Q first, before any Mem0 write: an item the updater deletes below has its Q row by then,
    # also when a crash fell between its Q write and its row (the resume finds it via q_trace)
    q_updates = []
    if system.cfg.utility.enabled and retrieved_ids:
        q_updates = _utility(system.longterm(), retrieved_ids, reward, episode_id)
    jobs = {}
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="consolidate") as pool:
        if system.semantic is not None:
            jobs["semantic"] = pool.submit(
                _semantic,
                system.semantic,
                user,
                task,
                trajectory,
                episode_id,
                llm,
                lost,
                retrieved_ids,
                success,
            )
        if system.episodic is not None:
            jobs["episodic"] = pool.submit(
                _episodic, system.episodic, user, task, outcome, trajectory, episode_id, llm
            )
        results = {name: job.result() for name, job in jobs.items()}
    report = {
        "episode_id": episode_id,
        "reward": reward,
        "semantic": results.get("semantic"),
        "episodic": results.get("episodic"),
        "q_updates": q_updates,
        "seconds": round(time.perf_counter() - started, 4),
    }
    system.history.finish_episode(episode_id, report)
    return report


def _created(memory: LongTermMemory, episode_id: str, make) -> list[NewItem]:
    """The creator's items for this episode, from the journal or a fresh model call."""
    key = f"{memory.collection}:created"
    stored = memory.history.journal_get(episode_id, key)
    if stored is None:
        stored = [{"text": i.text, "level": i.level} for i in make()]
        memory.history.journal_put(episode_id, key, stored)
    return [NewItem(**row) for row in stored]


def _summary(created: list[NewItem], decisions: list[dict]) -> dict:
    counts = Counter(d["event"] for d in decisions)
    return {
        "created": len(created),
        **{e: counts.get(e, 0) for e in ("ADD", "UPDATE", "DELETE", "NOOP")},
        "decisions": decisions,
    }


def _semantic(
    memory: LongTermMemory,
    user: str,
    task: str,
    trajectory: list[dict],
    episode_id: str,
    llm: NodeLLM,
    lost: bool = False,
    retrieved_ids: Sequence[str] = (),
    success: bool = True,
) -> dict:
    said = {str(s.get("action")): str(s.get("message", "")) for s in trajectory}  # last answer
    said |= verdicts(trajectory, lost)  # a losing step's lesson leads with the world's verdict
    task_lessons = not recalled_task_lessons(memory, retrieved_ids)
    schema = prompts.insights_model(tuple(said), task_lessons)

    def make() -> list[NewItem]:
        ask = prompts.creator_ask(user, prompts.SEMANTIC_ASK)
        res = llm.call(schema, prompts.CREATOR_SYSTEM, ask, fallback=schema)
        losing = losing_steps(trajectory, lost)[:MAX_HURT]  # the world's verdicts
        items = [NewItem(lesson_text(a, "hurt", said[a]), "verdict") for a in losing]
        best = best_step(trajectory)  # and the step it rewarded most: the next attempt's pick
        best = None if best is None or best["action"] in losing else str(best["action"])
        items += [NewItem(lesson_text(best, "helped", said[best]), "verdict")] if best else []
        hurt = [a for a in res.value.hurt if a not in losing and a != best]
        rewarded = [s for s in rewarded_steps(trajectory) if s["action"] != best]
        helped = [a for a in res.value.helped if a != best]
        items += action_lessons(rewarded, helped, hurt, said)
        items += [NewItem(t, "task") for t in res.value.task[:MAX_TASK_ITEMS]]
        if not success:  # what the steps were spent on, in the world's words
            items += [NewItem(t, "task") for t in cycle_lessons(trajectory)]
        return [i for i in items if i.text.strip()]

    created = _created(memory, episode_id, make)
    decisions = memory.add_items(created, task=task, episode_id=episode_id, llm=llm)
    return {**_summary(created, decisions), "task_lessons_asked": task_lessons}


def recalled_task_lessons(memory: LongTermMemory, retrieved_ids: Sequence[str]) -> bool:
    """Whether the task recalled a task lesson: the creator then writes none, as the Mem0
    updater, comparing a new one with the lessons of that task, answered NOOP to every one."""
    found = memory.store.get(list(retrieved_ids)) if retrieved_ids else {}
    return any(meta.get("level") == "task" for _text, meta in found.values())


def _episodic(
    memory: LongTermMemory,
    user: str,
    task: str,
    outcome: str,
    trajectory: Sequence[StepRecord],
    episode_id: str,
    llm: NodeLLM,
) -> dict:
    def make() -> list[NewItem]:
        res = llm.call(
            prompts.EpisodeRecord,
            prompts.CREATOR_SYSTEM,
            prompts.creator_ask(user, prompts.EPISODIC_ASK),
            fallback=lambda: prompts.EpisodeRecord(summary=fallback_episode(trajectory)),
        )
        summary = res.value.summary.strip() or fallback_episode(trajectory)
        # the outcome is always part of the record, whatever the model wrote
        return [NewItem(f"Task: {task}. Outcome: {outcome}. {summary}")]

    created = _created(memory, episode_id, make)
    decisions = memory.add_items(created, task=task, episode_id=episode_id, llm=llm)
    return _summary(created, decisions)


def _utility(
    memories: list[LongTermMemory], ids: list[str], reward: float, episode_id: str
) -> list[dict]:
    out: list[dict] = []
    for memory in memories:
        out += memory.update_utility(ids, reward, episode_id)
    return out
