"""Grounding the planner's choices in what the world affords now (pure functions).

Each candidate the executor offers (``ActionSpace.candidates``) is labelled once against the
goal by its verb's declared effects (:mod:`robomemory.effects`) and ordered by one table of
named rows (:mod:`.table`), on facts read from the world model (:mod:`.world`): instructions
left (:mod:`.instructions`), what is missing and wanted (:mod:`.needs`), the search
(:mod:`.frontier`), loops (:mod:`.loops`) and spent actions (:mod:`.spent`). A step's
:class:`Briefing` (:mod:`.briefing`) tells planner and critic; the model chooses among what the
table leaves open. Imports only ``core``, ``effects`` and ``episode``: no world's words live here.
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
