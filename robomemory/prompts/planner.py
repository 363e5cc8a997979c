"""Planner and critic prompts; the action schema is built from the executor's action space."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, create_model

from robomemory.core import TASK_COMPLETE, Action, ActionSpace
from robomemory.grounding.briefing import Briefing

# Model answers are taken as they are: no field the schema does not name (the grammar then
# also forbids them, so the model cannot spend tokens on them).
STRICT = ConfigDict(extra="forbid")

PLANNER_RULES = (
    "You are the planner of a robot. Read the task, your notes, memory and the observation. "
    "Choose the next action from the list of actions possible now, then optionally up to a "
    "few actions to follow. Follow the instructions you have read, step by step. "
    f"Do not redo what is done. Call {TASK_COMPLETE}() only when the task is done."
)

CRITIC_SYSTEM = (
    "You are the critic of a robot. Decide if the proposed next action still makes sense "
    "given the latest observation and memory. Reject it if it is not in the list of actions "
    "possible now, repeats what is done, or does not help the task."
)


def planner_system(space: ActionSpace) -> str:
    """The planner's system prompt: rules and the action API (stable for a world, so cached)."""
    return f"{PLANNER_RULES}\nActions:\n{space.describe()}"


@lru_cache(maxsize=256)
def _verb_step(verb: str, kinds: tuple[tuple[str, ...] | None, ...]) -> type[BaseModel]:
    """One plan-step variant: a fixed verb and arguments drawn from their kinds' names."""
    names: list[str] = []
    free = False
    for valid in kinds:
        if valid is None:
            free = True
        else:
            names += [n for n in valid if n not in names]
    arg_type = str if free or not names else Literal[tuple(names)]  # type: ignore[valid-type]
    n = len(kinds)
    return create_model(
        f"Step_{verb}",
        action=(Literal[verb], ...),  # type: ignore[valid-type]
        # Required for a verb that takes arguments: a default would let the grammar leave
        # them out, and "examine()" cannot run.
        args=(
            list[arg_type],
            Field(min_length=n, max_length=n) if n else Field(default_factory=list, max_length=0),
        ),
    )


def make_step_model(space: ActionSpace) -> Any:
    """The type of one plan step: a union of per-verb variants, each constraining its
    arguments to the names the agent knows for that argument kind. A verb that needs a kind
    with no known name yet (e.g. navigate_to before any room is known) is left out."""
    variants = []
    for verb in space.verbs:
        kinds = tuple(
            None if space.targets.get(kind) is None else tuple(space.targets[kind])
            for kind in verb.arg_kinds
        )
        if any(k == () for k in kinds):
            continue
        variants.append(_verb_step(verb.name, kinds))
    if not variants:
        raise ValueError("the action space offers no usable action")
    return variants[0] if len(variants) == 1 else Union[tuple(variants)]  # noqa: UP007


@lru_cache(maxsize=256)
def _plan_model(first: tuple[str, ...], later: Any, max_len: int, min_len: int) -> type[BaseModel]:
    # No free-text "thought" before the choice: a small model talks itself out of the action
    # the prompt points to, and the thought costs generated tokens.
    if first:
        return create_model(
            "Plan",
            __config__=STRICT,
            next=(Literal[first], Field(description="an action possible now")),  # type: ignore[valid-type]
            # Required when later steps are: a default would let the grammar leave it out.
            then=(
                list[later],
                Field(min_length=min_len - 1, max_length=max_len - 1)
                if min_len > 1
                else Field(default_factory=list, max_length=max_len - 1),
            ),
        )
    return create_model(
        "Plan",
        __config__=STRICT,
        steps=(list[later], Field(min_length=min_len, max_length=max_len)),
    )


def make_plan_model(
    space: ActionSpace, max_len: int, candidates: list[Action] | None = None, min_len: int = 1
) -> type[BaseModel]:
    """A pydantic model for a plan of ``min_len`` to ``max_len`` steps over the space.

    With candidates (the actions possible now) the first step ``next`` is one of them, by its
    text, e.g. ``"pick_up(milk)"``; the later steps ``then`` stay over verbs x known names,
    since the world changes. Without candidates every step is over verbs x known names.
    """
    if not 1 <= min_len <= max_len:
        raise ValueError(f"plan length bounds must satisfy 1 <= {min_len} <= {max_len}")
    first = tuple(str(a) for a in candidates or [])
    return _plan_model(first, make_step_model(space), max_len, min_len)


def to_action(step: BaseModel) -> Action:
    """Turn a parsed plan step into an Action."""
    return Action(verb=str(step.action), args=[str(a) for a in step.args])


def plan_actions(plan: BaseModel, candidates: list[Action] | None = None) -> list[Action]:
    """The actions of a parsed plan, in order (``next`` then ``then``, or ``steps``)."""
    if "next" in type(plan).model_fields:
        by_text = {str(a): a for a in candidates or []}
        return [by_text[plan.next], *(to_action(s) for s in plan.then)]
    return [to_action(s) for s in plan.steps]


def planner_user(
    context: str, briefing: Briefing, space: ActionSpace, critique: str | None = None
) -> str:
    """The planner's user message, stable parts first: working memory (task first), the
    actions possible now (described from ``space``), then the briefing's lines: the last
    result again, what helped before and is possible now, what is not offered because it
    would loop, what is left to do, that the hands are full, what is not seen yet and where
    to look, what is needed from elsewhere and the way there, what the task only describes
    and where it may be (a small model weighs the end most)."""
    b = briefing
    parts = briefing_head(context, b, space, names=True)
    if b.looped:
        parts.append(looped_line(b.looped))
    if b.left:
        parts.append(left_line(b.left))
    if b.full:
        parts.append(full_line(b.full))
    if b.missing:
        parts.append(unseen_line(b.missing, b.search))
    if b.away and b.fetch:
        parts.append(fetch_line(b.away, b.fetch))
    if b.described and (b.unvisited or b.here or b.search):
        parts.append(finding_line(b.described, b.unvisited, b.here, b.search, b.elsewhere))
    if critique:
        parts.append(f"The critic rejected the last plan: {critique}")
    parts.append("Choose the next action.")
    return "\n\n".join(parts)


def briefing_head(context: str, b: Briefing, space: ActionSpace, names: bool = False) -> list[str]:
    """What planner and critic prompts open with: working memory, the actions possible now
    (with ``names``, the known names when there are none), the last result, what helped."""
    parts = [context]
    if b.candidates:
        parts.append(f"Actions possible now:\n{numbered(b.candidates, space, b.placed)}")
    elif names:
        parts.append(f"Known names: {', '.join(space.all_targets()) or 'none yet'}")
    if b.last_result:
        parts.append(f"Last result: {b.last_result}")
    if b.helped:
        parts.append(helped_line(b.helped))
    return parts


def left_line(left: Sequence[str]) -> str:
    """What the notes and the task instruct that is not done, as written, for the end of the
    planner's prompt: read last, an instruction is followed (the manual's next step, the last one)
    where the model would otherwise go on with the pattern of its last actions."""
    return f"Left to do: {', '.join(left)}"


def full_line(held: Sequence[str]) -> str:
    """The hands are full: the world offers no take (a small model, shown none, read every
    thing in the room instead of putting one down)."""
    return f"Hands full ({', '.join(held)}): put one down to take another."


def unseen_line(missing: Sequence[str], search: Sequence[str]) -> str:
    """What the instructions need that the world has not shown, and where to look: without
    it a small model works on the things in view (picks them up, cuts them) instead."""
    line = f"Not seen yet: {', '.join(missing)}."
    return f"{line} Look for it first: {', '.join(search[:3])}" if search else line


def fetch_line(away: Sequence[str], moves: Sequence[str]) -> str:
    """What the instructions need that was seen elsewhere, and the way there: without it a
    small model shuffles what it holds where it is, the way there first in its list."""
    return f"Needed, seen elsewhere: {', '.join(away)}. Go there first: {', '.join(moves[:2])}"


def finding_line(
    described: Sequence[str],
    moves: Sequence[str],
    here: Sequence[str],
    search: Sequence[str] = (),
    elsewhere: Sequence[str] = (),
) -> str:
    """What the task asks to find by description, no name, and the places not visited yet
    (without it a small model looks into every thing of the first room); where moves name no
    place (directions), the search's next acts, nearest first (told "places not visited:
    go(east)", a small model walked into closed doors); every place visited, the things here,
    among which the choice is, and those seen in the other places (the search ends in
    whichever room was left last: a plant was not among the things outside)."""
    line = f"To find: {', '.join(described)}."
    if moves:
        return f"{line} Places not visited: {', '.join(moves[:6])}"
    if search:
        return f"{line} Search next: {', '.join(search[:3])}"
    line = f"{line} Every place visited; here: {', '.join(here[:8])}"
    return f"{line}. Seen elsewhere: {'; '.join(elsewhere)}" if elsewhere else line


def looped_line(looped: Sequence[str]) -> str:
    """Actions set aside because they would bring the world back where it was (short: the
    model is told why they are missing, not to look for them)."""
    return f"Not offered, they undo what you did: {', '.join(looped)}"


def helped_line(helped: Sequence[str]) -> str:
    """Actions recalled lessons say helped, offered now: named next to the choice, a lesson
    is acted on, where among the recalled lessons it is passed over."""
    return f"Helped before, possible now: {', '.join(helped)}"


# What each row of the effects table (grounding.table.ROWS) tells the model of a candidate.
ROW_WORDS = {
    "instructed": "does what is left",
    "achieves": "achieves the goal",
    "helped": "helped before",
    "enables": "needed first",
    "fetches": "toward a needed thing",
    "searches": "searches",
    "enables_some": "may be needed",
    "reads_new": "not read yet",
    "unknown": "effect unknown",
    "irrelevant": "not needed",
    "informs": "changes nothing",
    "loops": "goes back",
    "undoes": "undoes progress",
    "irreversible": "cannot be undone",
    "completes": "goal not met yet",
    "hurt": "hurt before",
    "refused": "refused here",
}


def numbered(
    actions: list[Action], space: ActionSpace | None = None, rows: Sequence[str] = ()
) -> str:
    """A compact numbered list (1-based). With ``space``, the first action of each verb
    carries the verb's description, where the model reads its choices: a description only in
    the system prompt is not acted on. With ``rows`` (the table's, one per action), each
    action carries what its row says of it."""
    described = {v.name: v.description for v in space.verbs if v.description} if space else {}
    said = [ROW_WORDS[r] for r in rows] if len(rows) == len(actions) else [""] * len(actions)
    lines = []
    for i, (action, row) in enumerate(zip(actions, said, strict=True), 1):
        text = described.pop(action.verb, "")
        line = f"{i}. {action} [{row}]" if row else f"{i}. {action}"
        lines.append(f"{line}: {text}" if text else line)
    return "\n".join(lines)


class CriticVerdict(BaseModel):
    """The critic's decision on the next planned action."""

    approve: bool
    reason: str = Field(description="one short sentence", max_length=160)


def critic_user(
    context: str, action: str, plan: list[str], briefing: Briefing, space: ActionSpace
) -> str:
    """Working memory first (shared prefix with the planner's prompt), then the choice."""
    b = briefing
    parts = briefing_head(context, b, space)
    if b.left:
        parts.append(left_line(b.left))
    parts.append(f"Plan: {' -> '.join(plan)}\nProposed next action: {action}")
    return "\n\n".join(parts)
