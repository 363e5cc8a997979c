"""Grounding the planner's choices in what the world affords now (pure functions): each
candidate is labelled by its verb's declared effects and ordered by one table (:mod:`.table`)
on facts of the world model (:mod:`.world`); a :class:`Briefing` tells planner and critic.
Imports only ``core``, ``effects`` and ``episode``: no world's words live here.
"""

from robomemory.grounding.briefing import Briefing, brief
from robomemory.grounding.frontier import (
    exploration,
    hops,
    untaken_exits,
    update_acts_at,
    update_seen,
)
from robomemory.grounding.instructions import (
    Instruction,
    instructions,
    left_instructions,
    unseen_things,
    with_pick,
)
from robomemory.grounding.loops import extend_path, loop_actions, path_of
from robomemory.grounding.meanings import meanings
from robomemory.grounding.needs import Scene, helped_now
from robomemory.grounding.notes import notes_of, update_done, update_notes
from robomemory.grounding.states import result_forms, update_states
from robomemory.grounding.world import WorldModel, known_names

__all__ = [
    "brief",
    "Briefing",
    "exploration",
    "extend_path",
    "helped_now",
    "hops",
    "Instruction",
    "instructions",
    "known_names",
    "left_instructions",
    "loop_actions",
    "meanings",
    "notes_of",
    "path_of",
    "result_forms",
    "Scene",
    "unseen_things",
    "untaken_exits",
    "update_acts_at",
    "update_done",
    "update_notes",
    "update_seen",
    "update_states",
    "WorldModel",
    "with_pick",
]
