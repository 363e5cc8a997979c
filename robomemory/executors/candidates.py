"""Grounded action candidates: the concrete actions a world affords now, ordered for a prompt.

A small model chooses well only among choices it can see, and a long list costs prompt time;
so candidates are deduplicated, ordered with actions that change the world first and the
purely informational ones last, and capped per verb and in total.
"""

from __future__ import annotations

from collections.abc import Iterable

from robomemory.core import TASK_COMPLETE, Action

# Verbs that only read the world: offered after the ones that change it.
INFORMATIONAL = frozenset({"examine", "look", "inventory", "read", "look_at", "wait"})
MAX_PER_VERB = 12
MAX_CANDIDATES = 40


def rank_candidates(
    actions: Iterable[Action],
    max_per_verb: int = MAX_PER_VERB,
    limit: int = MAX_CANDIDATES,
) -> list[Action]:
    """Deduplicated candidates grouped by verb: world-changing verbs first (in the world's
    order), informational verbs after, ``task_complete`` last. When they do not all fit in
    ``limit``, each verb keeps an equal share (at least 2), so no verb drowns the others."""
    groups: dict[str, list[Action]] = {}
    seen: set[str] = set()
    for action in actions:
        if str(action) not in seen:
            seen.add(str(action))
            groups.setdefault(action.verb, []).append(action)
    finish = groups.pop(TASK_COMPLETE, [])[:1]
    room = max(0, limit - len(finish))
    share = max_per_verb
    while share > 2 and sum(min(len(g), share) for g in groups.values()) > room:
        share -= 1  # the largest equal share that fits
    acting = [a for verb, g in groups.items() if verb not in INFORMATIONAL for a in g[:share]]
    reading = [a for verb, g in groups.items() if verb in INFORMATIONAL for a in g[:share]]
    return (acting + reading)[:room] + finish
