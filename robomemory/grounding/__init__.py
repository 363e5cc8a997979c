"""Grounding the planner's choices in what the world affords now (pure functions).

The executor publishes the concrete actions valid now (``ActionSpace.candidates``) and what
its verbs mean (``VerbSpec``: reads, moves, reverses, irreversible, reveals). Before they
reach a prompt, actions the episode has shown useless here are set aside (:mod:`.spent`),
and those that would loop (:mod:`.loops`) or repeat an irreversible act; the rest are ranked
against what was read (:mod:`.instructions`, :mod:`.states`, :mod:`.ranking`), with the
search for a thing not seen yet first (:mod:`.frontier`). The model still chooses. This
package imports only from ``core`` and ``episode``: no world's words live here.
"""

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
    left_to_do,
    named_verbs,
    unseen_things,
    verb_phrases,
)
from robomemory.grounding.loops import (
    changing_actions,
    extend_path,
    loop_actions,
    path_of,
    refusal,
    visited_places,
)
from robomemory.grounding.meanings import Meanings, meanings
from robomemory.grounding.notes import is_note, notes_of, update_done, update_notes
from robomemory.grounding.ranking import (
    by_relevance,
    cut_per_verb,
    helped_now,
    irreversible_repeats,
    offered_candidates,
    unasked_irreversible,
    unrequested_irreversible,
    wanted_things,
)
from robomemory.grounding.spent import (
    FAILED,
    LOOK,
    fresh_candidates,
    refused_again,
    spent_actions,
    unchanged_reads,
)
from robomemory.grounding.states import result_forms, update_states, verb_results
from robomemory.grounding.text import named_by

__all__ = [
    "act_moves",
    "FAILED",
    "INSTRUCTION_WORDS",
    "LOOK",
    "Instruction",
    "Meanings",
    "by_relevance",
    "changing_actions",
    "cut_per_verb",
    "exploration",
    "fetch_moves",
    "extend_path",
    "fresh_candidates",
    "helped_now",
    "hops",
    "instructions",
    "irreversible_repeats",
    "is_note",
    "left_instructions",
    "left_to_do",
    "loop_actions",
    "named_verbs",
    "meanings",
    "named_by",
    "notes_of",
    "offered_candidates",
    "path_of",
    "refusal",
    "refused_again",
    "result_forms",
    "known_things",
    "revealed_things",
    "spent_actions",
    "unasked_irreversible",
    "unchanged_reads",
    "unrequested_irreversible",
    "unseen_things",
    "update_done",
    "update_notes",
    "untaken_exits",
    "update_acts_at",
    "update_seen",
    "update_states",
    "verb_phrases",
    "verb_results",
    "visited_places",
    "wanted_things",
]
