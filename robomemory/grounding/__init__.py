"""Grounding the planner's choices in what the world affords now (pure functions).

The executor publishes the concrete actions valid now (``ActionSpace.candidates``) and what
its verbs need and do (``VerbSpec.needs/adds/removes``, :mod:`robomemory.effects`). Each
candidate is labelled once against the goal by those effects and ordered by one table of
named rows (:mod:`.table`), on facts read from the world model (:mod:`.world`): what the
instructions leave to do (:mod:`.instructions`), what is missing and wanted (:mod:`.needs`),
the search for a thing not seen yet (:mod:`.frontier`), what would loop (:mod:`.loops`) or is
spent (:mod:`.spent`). What a step tells the planner and the critic is one :class:`Briefing`
(:mod:`.briefing`); the model chooses among what the table leaves open. This package imports
only from ``core``, ``effects`` and ``episode``: no world's words live here.
"""

from robomemory.grounding.briefing import Briefing, brief
from robomemory.grounding.frontier import (
    act_moves,
    exploration,
    fetch_moves,
    hops,
    known_things,
    revealed_things,
    untaken_exits,
    update_acts_at,
    update_seen,
)
from robomemory.grounding.instructions import (
    INSTRUCTION_WORDS,
    Instruction,
    instructions,
    left_instructions,
    named_verbs,
    unseen_things,
    with_pick,
)
from robomemory.grounding.loops import (
    extend_path,
    loop_actions,
    path_of,
    refusal,
    visited_places,
)
from robomemory.grounding.meanings import Meanings, meanings
from robomemory.grounding.needs import Scene, Wanted, helped_now, missing_things, wanted_things
from robomemory.grounding.notes import is_note, notes_of, update_done, update_notes
from robomemory.grounding.spent import (
    FAILED,
    refused_in_this_state,
)
from robomemory.grounding.states import result_forms, update_states, verb_results
from robomemory.grounding.world import WorldModel, known_names

__all__ = [
    "act_moves",
    "brief",
    "Briefing",
    "exploration",
    "extend_path",
    "FAILED",
    "fetch_moves",
    "helped_now",
    "hops",
    "Instruction",
    "INSTRUCTION_WORDS",
    "instructions",
    "is_note",
    "known_names",
    "known_things",
    "left_instructions",
    "loop_actions",
    "Meanings",
    "meanings",
    "missing_things",
    "named_verbs",
    "notes_of",
    "path_of",
    "refusal",
    "refused_in_this_state",
    "result_forms",
    "revealed_things",
    "Scene",
    "unseen_things",
    "untaken_exits",
    "update_acts_at",
    "update_done",
    "update_notes",
    "update_seen",
    "update_states",
    "verb_results",
    "visited_places",
    "Wanted",
    "wanted_things",
    "with_pick",
    "WorldModel",
]
