"""Data types shared by the memory modules, the graph nodes and the inspection tools."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field


class MemoryHandles(BaseModel):
    """Serializable pointers to a robot's memories; they live in checkpointed state."""

    robot_id: str
    episode_id: str
    spatial_graph_id: str
    semantic_collection: str
    episodic_collection: str

    @classmethod
    def for_robot(cls, robot_id: str, episode_id: str, world: str | None = None) -> MemoryHandles:
        """Handles of ``robot_id``'s memories; the spatial map is the one of ``world`` (a
        site, a game) when given, else the robot's single map."""
        safe = _safe(robot_id)
        robot = robot_key(robot_id)
        graph = f"spatial_{robot}__{world_key(world)}" if world else f"spatial_{robot}"
        return cls(
            robot_id=robot_id,
            episode_id=episode_id,
            spatial_graph_id=graph,
            semantic_collection=f"semantic_{safe}",
            episodic_collection=f"episodic_{safe}",
        )


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


def robot_key(robot_id: str) -> str:
    """The robot's part of its map's name, one to one, so that ``spatial_ROBOT__WORLD`` splits
    at its first ``__``: an id without ``__`` that does not end in ``_`` is its own key (every
    map named so far keeps its file); any other (``x__w``, ``x_``) gets a digest of the whole
    id after a ``~`` that no robot id has, so robot ``x__w`` never shares the map of robot
    ``x`` in world ``w``."""
    if "__" not in robot_id and not robot_id.endswith("_"):
        return robot_id
    digest = hashlib.sha256(robot_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{robot_id.replace('_', '-')[:87]}~{digest}"


WORLD_KEY_CHARS = 80  # with a robot id of 100, the map's file name stays under 255 bytes


def world_key(world: str) -> str:
    """A file-safe key naming one world, one to one: a name of ASCII letters, digits, '-' and
    '_' is its own key; any other (``kitchen.a``, ``tw/1 room``, a long one) gets a digest of
    the whole name, so two worlds never share a map and no name is too long for a file."""
    plain = all(c.isascii() and (c.isalnum() or c in "-_") for c in world)
    if plain and len(world) <= WORLD_KEY_CHARS:
        return world
    digest = hashlib.sha256(world.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    readable = "".join(c if c.isascii() and c.isalnum() else "_" for c in world)
    return f"{readable[: WORLD_KEY_CHARS - 13]}~{digest}"


class Triple(BaseModel):
    """A spatial relation with its validity window (steps are global per robot)."""

    id: int | None = None
    subject: str
    relation: str
    object: str
    valid_from_step: int = 0
    invalidated_at_step: int | None = None
    episode_id: str | None = None

    @property
    def valid(self) -> bool:
        return self.invalidated_at_step is None

    def text(self) -> str:
        return f"{self.subject} {self.relation} {self.object}"


class SpatialUpdateStats(BaseModel):
    """What one Algorithm-2 update touched (paper Fig. 7)."""

    step: int
    vertices: int = 0
    edges: int = 0
    sent_vertices: int = 0
    sent_edges: int = Field(default=0, description="Edges in the resolver's prompt.")
    local_edges: int = Field(default=0, description="|E(G_local)|: old edges + fresh new ones.")
    new_edges: int = 0
    ops_applied: int = 0
    ops_rejected: int = 0
    skipped: bool = Field(default=False, description="True when (episode, step) was already done.")


class RetrievedItem(BaseModel):
    """A long-term memory item returned by MemRL two-phase retrieval."""

    id: str
    kind: Literal["semantic", "episodic"]
    text: str
    level: str | None = Field(default=None, description="semantic: 'action', 'verdict' or 'task'")
    similarity: float = 0.0
    q: float = 0.0
    score: float = 0.0
    visits: int = 0
    origin: dict[str, Any] = Field(
        default_factory=dict, description="where it came from, as its store says (origin_of)"
    )


# An item's provenance as its metadata records it: the robots that wrote it (a fleet's shared
# store only) and the episode and task it was written from (every store).
ORIGIN_KEYS = ("created_by", "updated_by", "robots", "episode_id", "task")


def origin_of(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The provenance fields ``meta`` holds (ORIGIN_KEYS); absent or empty ones left out."""
    return {k: meta[k] for k in ORIGIN_KEYS if meta.get(k) not in (None, "", [])}


class SceneGrounding(BaseModel):
    """What perception knows for certain this step, to ground the relation extractor: the
    names the observation shows (the extractor may relate only these), where the robot is
    (localization) and what it holds (gripper state). The last two become the robot's own
    facts directly ("I at kitchen", "I hold milk"), never a model's guess."""

    names: list[str] = Field(default_factory=list)
    place: str | None = None
    holding: list[str] = Field(default_factory=list)
    holding_known: bool = Field(
        default=False, description="``holding`` is reported every step: empty is empty hands"
    )
    text: str = Field(
        default="",
        description="the world's own words this step; the extractor reads them rather than "
        "the step summary, whose paraphrase drops where things are",
    )
    arrived_by: tuple[str, str] | None = Field(
        default=None,
        description="(place left, direction walked) when the last step moved the robot: the "
        "way between the two places becomes a fact as certain as the robot's place",
    )
    short_here: bool = Field(
        default=False,
        description="the world answered in a line and the robot stayed where it was "
        "('You take the knife from the counter.')",
    )
    fixtures: list[str] = Field(
        default_factory=list,
        description="those of ``names`` that never move: each is in ``place``, a fact as "
        "certain as the robot's place, so the extractor is not asked where it is",
    )
    stayed: bool = Field(
        default=False,
        description="the robot was here the step before too (not a task's first step): what "
        "the world says here may be about a thing alone, not where it is ('You read the "
        "recipe: milk ...')",
    )
