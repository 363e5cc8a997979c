"""Grounding the planner's choices in what the world affords now (pure functions).

The executor publishes the concrete actions valid now (``ActionSpace.candidates``) and what
its verbs mean (``VerbSpec``: reads, moves, reverses, irreversible, reveals). Before they
reach a prompt, actions the episode has shown useless here are set aside (:mod:`.spent`),
and those that would loop (:mod:`.loops`) or repeat an irreversible act; the rest are ranked
against what was read (:mod:`.instructions`, :mod:`.states`, :mod:`.ranking`), with the
search for a thing not seen yet first (:mod:`.frontier`), and once the search for what the
task only describes is over its pick (:mod:`.choice`), in the stages of :mod:`.offer`.
What the world showed this task is one typed :class:`WorldModel` (:mod:`.world`); what a step
tells the planner and the critic is one :class:`Briefing` (:mod:`.briefing`). The model still
chooses. This
package imports only from ``core`` and ``episode``: no world's words live here.
"""

from robomemory.grounding.briefing import Briefing, brief
from robomemory.grounding.choice import task_choice
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
    verb_phrases,
    with_pick,
)
from robomemory.grounding.loops import (
    changing_actions,
    extend_path,
    loop_actions,
    path_of,
    refusal,
    undone_before,
    visited_places,
)
from robomemory.grounding.meanings import Meanings, meanings
from robomemory.grounding.notes import is_note, notes_of, update_done, update_notes
from robomemory.grounding.offered import (
    Scene,
    Wanted,
    cut,
    missing_things,
    offer,
    offered_candidates,
    promote,
    set_aside,
    wanted_things,
    withhold,
)
from robomemory.grounding.ranking import (
    by_relevance,
    cut_per_verb,
    helped_now,
    irreversible_conflicts,
    irreversible_others,
    irreversible_repeats,
    irreversible_unasked,
    irreversible_unnamed,
)
from robomemory.grounding.spent import (
    FAILED,
    LOOK,
    fresh_candidates,
    refused_again,
    refused_in_this_state,
    spent_actions,
    unchanged_reads,
)
from robomemory.grounding.states import result_forms, update_states, verb_results
from robomemory.grounding.text import named_by
from robomemory.grounding.world import WorldModel, known_names

__all__ = [
    "act_moves",
    "brief",
    "task_choice",
    "Briefing",
    "by_relevance",
    "changing_actions",
    "cut",
    "cut_per_verb",
    "exploration",
    "extend_path",
    "FAILED",
    "fetch_moves",
    "fresh_candidates",
    "helped_now",
    "hops",
    "Instruction",
    "INSTRUCTION_WORDS",
    "instructions",
    "irreversible_conflicts",
    "irreversible_others",
    "irreversible_repeats",
    "irreversible_unasked",
    "irreversible_unnamed",
    "is_note",
    "known_names",
    "known_things",
    "left_instructions",
    "LOOK",
    "loop_actions",
    "undone_before",
    "Meanings",
    "meanings",
    "missing_things",
    "named_by",
    "named_verbs",
    "notes_of",
    "offer",
    "offered_candidates",
    "path_of",
    "promote",
    "refusal",
    "refused_again",
    "refused_in_this_state",
    "result_forms",
    "revealed_things",
    "Scene",
    "set_aside",
    "spent_actions",
    "unchanged_reads",
    "unseen_things",
    "untaken_exits",
    "update_acts_at",
    "update_done",
    "update_notes",
    "update_seen",
    "update_states",
    "verb_phrases",
    "verb_results",
    "visited_places",
    "Wanted",
    "wanted_things",
    "with_pick",
    "withhold",
    "WorldModel",
]
