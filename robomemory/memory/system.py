"""MemorySystem: one robot's four memory modules, opened from ``cfg.data_dir``.

Layout under ``data_dir``: ``qdrant/`` (local-mode Qdrant shared by all robots, one collection
per kind and robot), ``history.sqlite3`` (change history and consolidation journal),
``episodes.sqlite3`` (the episode log: step records kept out of checkpoints) and the
spatial graph store's files. Opening the same data directory twice in one process reuses one
Qdrant client (local mode allows only one per path).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from robomemory.config import MemoryConfig
from robomemory.memory.base import MemoryHandles
from robomemory.memory.episode_log import EpisodeLog
from robomemory.memory.history import MemoryHistory
from robomemory.memory.longterm import LongTermMemory
from robomemory.memory.stores.vector_qdrant import acquire_client, release_client
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
        spatial: Any | None,
        semantic: LongTermMemory | None,
        episodic: LongTermMemory | None,
        history: MemoryHistory,
        client: Any | None = None,
        graph_store: Any | None = None,
        episodes: EpisodeLog | None = None,
    ):
        self.cfg = cfg
        self.robot_id = robot_id
        self.temporal = temporal
        self.spatial = spatial
        self.semantic = semantic
        self.episodic = episodic
        self.history = history
        self.episodes = episodes or EpisodeLog(Path(cfg.data_dir) / "episodes.sqlite3")
        self._client = client
        self._graph_store = graph_store
        self._closed = False

    @classmethod
    def open(cls, cfg: MemoryConfig, embedder: Embeddings, robot_id: str) -> MemorySystem:
        """Open (creating if needed) the memories of ``robot_id`` under ``cfg.data_dir``."""
        data_dir = Path(cfg.data_dir)
        data_dir.mkdir(parents=True, exist_ok=True)
        handles = MemoryHandles.for_robot(robot_id, "")
        history = MemoryHistory(data_dir / "history.sqlite3")
        lt = cfg.longterm
        client = None
        semantic = episodic = None
        if lt.semantic_enabled or lt.episodic_enabled:
            client = acquire_client(path=data_dir / "qdrant", url=lt.qdrant_url)
            if lt.semantic_enabled:
                semantic = LongTermMemory(
                    "semantic", cfg, client, embedder, handles.semantic_collection, history
                )
            if lt.episodic_enabled:
                episodic = LongTermMemory(
                    "episodic", cfg, client, embedder, handles.episodic_collection, history
                )
        spatial = graph_store = None
        if cfg.spatial.enabled:
            from robomemory.memory.spatial import SpatialMemory, open_graph_store

            try:  # in use by another process, or corrupt with no good copy: leak nothing
                graph_store = open_graph_store(cfg.spatial, data_dir, handles.spatial_graph_id)
            except BaseException:
                if client is not None:
                    release_client(client)
                history.close()
                raise
            spatial = SpatialMemory(cfg.spatial, graph_store, embedder)
        return cls(
            cfg,
            robot_id,
            TemporalMemory(cfg.temporal),
            spatial,
            semantic,
            episodic,
            history,
            client=client,
            graph_store=graph_store,
        )

    def handles(self, episode_id: str) -> MemoryHandles:
        """Serializable handles of this robot's memories for one episode."""
        return MemoryHandles.for_robot(self.robot_id, episode_id)

    def longterm(self) -> list[LongTermMemory]:
        """The long-term modules that are switched on."""
        return [m for m in (self.semantic, self.episodic) if m is not None]

    def close(self) -> None:
        """Release the Qdrant client, the history database and the graph store (idempotent)."""
        if self._closed:
            return
        self._closed = True
        if self._client is not None:
            release_client(self._client)
        self.history.close()
        self.episodes.close()
        close = getattr(self._graph_store, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> MemorySystem:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
