"""MemorySystem: one robot's four memory modules, opened from ``cfg.data_dir``.

Layout under ``data_dir``: ``longterm/<kind>_<robot>/`` (a Qdrant Edge shard per kind and
robot; a Qdrant server instead when ``longterm.qdrant_url`` is set; the fleet's shared
PostgreSQL when ``longterm.memory_url`` or ``$ROBOMEMORY_MEMORY_URL`` is),
``history.sqlite3`` (change history and consolidation journal), ``episodes.sqlite3`` (the
episode log: step records kept out of checkpoints) and the spatial graph store's files.
Opening the same robot twice in one process reuses its shards; a second process gets one
clear error. The modules share one embedding cache, so a step's queries are embedded once for
all branches.
"""

from __future__ import annotations

import logging
from pathlib import Path

from langchain_core.embeddings import Embeddings

from robomemory.config import MemoryConfig
from robomemory.memory.base import MemoryHandles
from robomemory.memory.embedding_cache import CachedEmbeddings
from robomemory.memory.episode_log import EpisodeLog
from robomemory.memory.history import MemoryHistory
from robomemory.memory.longterm import LongTermMemory
from robomemory.memory.spatial import SpatialMemory, open_graph_store
from robomemory.memory.stores.graph_store import GraphStore
from robomemory.memory.stores.vector_store import VectorStore
from robomemory.memory.stores.vectors import open_shared_store, open_vector_store, shared_url
from robomemory.memory.temporal import TemporalMemory

log = logging.getLogger(__name__)


class MemorySystem:
    """Temporal, spatial, semantic and episodic memory of one robot (modules switched off in
    the configuration are None; temporal is always present, its buffer lives in state)."""

    def __init__(
        self,
        cfg: MemoryConfig,
        robot_id: str,
        temporal: TemporalMemory,
        spatial: SpatialMemory | None,
        semantic: LongTermMemory | None,
        episodic: LongTermMemory | None,
        history: MemoryHistory,
        stores: list[VectorStore] | None = None,
        graph_store: GraphStore | None = None,
        episodes: EpisodeLog | None = None,
        embedder: Embeddings | None = None,
    ):
        self.cfg = cfg
        self.embedder = embedder  # the memories' own (cached); None when none was given
        self.robot_id = robot_id
        self.temporal = temporal
        self.spatial = spatial
        self.semantic = semantic
        self.episodic = episodic
        self.history = history
        self.episodes = episodes or EpisodeLog(Path(cfg.data_dir) / "episodes.sqlite3")
        self._stores = list(stores or [])
        self._graph_store = graph_store
        self.world: str | None = None
        self._closed = False

    @classmethod
    def open(
        cls, cfg: MemoryConfig, embedder: Embeddings, robot_id: str, world: str | None = None
    ) -> MemorySystem:
        """Open (creating if needed) the memories of ``robot_id`` under ``cfg.data_dir``, with
        the spatial map of ``world`` (see :meth:`use_world`)."""
        data_dir = Path(cfg.data_dir)
        data_dir.mkdir(parents=True, exist_ok=True)
        handles = MemoryHandles.for_robot(robot_id, "", world)
        history = MemoryHistory(data_dir / "history.sqlite3")
        embedder = CachedEmbeddings(embedder)
        lt = cfg.longterm
        fleet = shared_url(lt)
        stores: list[VectorStore] = []
        modules: dict[str, LongTermMemory] = {}
        wanted = [("semantic", lt.semantic_enabled, handles.semantic_collection)]
        wanted += [("episodic", lt.episodic_enabled, handles.episodic_collection)]
        wanted = [w for w in wanted if w[1]]
        try:
            probe = embedder.embed_query("dimension probe") if wanted else []
            for kind, _, collection in wanted:
                if fleet:
                    store = open_shared_store(fleet, kind, robot_id, collection, len(probe))
                else:
                    store = open_vector_store(data_dir, collection, len(probe), lt.qdrant_url)
                stores.append(store)
                modules[kind] = LongTermMemory(kind, cfg, stores[-1], embedder, history)
                modules[kind].verify(probe)  # a damaged store is refused, never used with less
        except BaseException:  # e.g. the robot runs in another process: release what we hold
            for store in stores:
                store.close()
            history.close()
            raise
        semantic, episodic = modules.get("semantic"), modules.get("episodic")
        spatial = graph_store = None
        if cfg.spatial.enabled:
            try:  # in use by another process, or corrupt with no good copy: leak nothing
                graph_store = open_graph_store(cfg.spatial, data_dir, handles.spatial_graph_id)
            except BaseException:
                for store in stores:
                    store.close()
                history.close()
                raise
            spatial = SpatialMemory(cfg.spatial, graph_store, embedder)
        system = cls(
            cfg,
            robot_id,
            TemporalMemory(cfg.temporal),
            spatial,
            semantic,
            episodic,
            history,
            stores=stores,
            graph_store=graph_store,
            embedder=embedder,
        )
        system.world = world
        return system

    def use_world(self, world: str | None) -> None:
        """Keep the spatial map of ``world`` (a site, a game) from now on: a robot that works
        in several places has a map of each, while its temporal, semantic and episodic
        memories stay one. None: the robot's single map. Call it between episodes."""
        if world == self.world:
            return
        if self.spatial is not None:
            graph_id = MemoryHandles.for_robot(self.robot_id, "", world).spatial_graph_id
            store = open_graph_store(self.cfg.spatial, Path(self.cfg.data_dir), graph_id)
            if self._graph_store is not None:
                self._graph_store.close()
            self._graph_store = store
            self.spatial = SpatialMemory(self.cfg.spatial, store, self.spatial.embedder)
        self.world = world

    def handles(self, episode_id: str) -> MemoryHandles:
        """Serializable handles of this robot's memories for one episode."""
        return MemoryHandles.for_robot(self.robot_id, episode_id, self.world)

    def longterm(self) -> list[LongTermMemory]:
        """The long-term modules that are switched on."""
        return [m for m in (self.semantic, self.episodic) if m is not None]

    def close(self) -> None:
        """Release the vector stores, the history database and the graph store (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for store in self._stores:
            store.close()
        self.history.close()
        self.episodes.close()
        if self._graph_store is not None:
            self._graph_store.close()

    def __enter__(self) -> MemorySystem:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
