"""The Python entry point: build a RoboMemory agent, run an episode, resume a crashed one."""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from robomemory.config import AgentConfig, check_thread_id, robot_thread
from robomemory.context import AgentContext
from robomemory.core import Action, Executor, Replayable, checked_task
from robomemory.episode import EpisodeIdError, EpisodeResult, EventHandler
from robomemory.factory import build_checkpointer, build_context, sqlite_checkpointer
from robomemory.graphs.builder import build_graph
from robomemory.locks import lock_path, release_robot
from robomemory.memory.damage import DamagedStoreError
from robomemory.memory.system import MemorySystem
from robomemory.nodes.start import recall_routes
from robomemory.structured import StructuredLLM

__all__ = [
    "EpisodeIdError",
    "EpisodeResult",
    "RoboMemoryAgent",
    "build_agent",
    "sqlite_checkpointer",
]

StartHandler = Callable[[str], None]


class RoboMemoryAgent:
    """A compiled RoboMemory graph bound to its live clients."""

    def __init__(self, graph: CompiledStateGraph, context: AgentContext):
        self.graph = graph
        self.context = context

    def has_checkpoint(self, thread_id: str) -> bool:
        """Whether ``thread_id`` has a checkpoint to resume."""
        return bool(self.graph.get_state(self._config(thread_id)).values)

    def close(self) -> None:
        """Close the memory system and give back this process's hold on the robot's lock."""
        self.context.memory.close()
        cfg = self.context.config
        release_robot(lock_path(cfg.memory.data_dir, cfg.robot_id))

    def __enter__(self) -> RoboMemoryAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _config(self, thread_id: str) -> dict:
        """The LangGraph config of ``thread_id``: its checkpoint thread is this robot's own."""
        limit = self.context.config.max_steps * 12 + 50
        thread = robot_thread(self.context.config.robot_id, thread_id)
        return {"configurable": {"thread_id": thread}, "recursion_limit": limit}

    def _check_not_lost(self, thread_id: str) -> None:
        """Refuse a thread this robot ran whose checkpoints are gone (a damaged or replaced
        checkpoint database): starting it afresh would replay a finished episode."""
        robot = self.context.config.robot_id
        ran = self.context.memory.episodes.checkpointed(robot, thread_id)
        if ran:
            raise DamagedStoreError(
                f"the checkpoints ({_checkpoint_place(self.graph.checkpointer)}) have no "
                f"checkpoint of thread {thread_id!r}, which robot {robot} ran (episode "
                f"{ran[-1]}): they were damaged or replaced; restore them from a backup, or "
                "run under a new thread id"
            )

    def _claim_episode(self, thread_id: str, episode_id: str | None, fresh: bool) -> str:
        """An episode id no other run used: a caller's that was used is refused; the default
        (the thread id) gets the first free suffix (``T-2``, ``T-3``, ...)."""
        robot = self.context.config.robot_id
        log = self.context.memory.episodes
        wanted = episode_id or thread_id
        for n in range(1, 10_000):
            candidate = wanted if n == 1 else f"{wanted}-{n}"
            claimed, owner, owner_thread = log.claim(candidate, robot, thread_id)
            # the same thread's claim stands when its run never checkpointed (nothing started)
            if claimed or (fresh and (owner, owner_thread) == (robot, thread_id)):
                return candidate
            if episode_id is not None:
                raise EpisodeIdError(
                    f"episode id {episode_id!r} is already used (robot {owner}, thread "
                    f"{owner_thread}): an episode id names one run; choose a new one"
                )
        raise EpisodeIdError(f"no free episode id for thread {thread_id!r}")

    def run(
        self,
        *,
        thread_id: str | None = None,
        episode_id: str | None = None,
        task: str | None = None,
        on_event: EventHandler | None = None,
        on_start: StartHandler | None = None,
        resume: bool = False,
    ) -> EpisodeResult:
        """Play one episode to its end. With ``resume`` continue the thread's checkpoint.

        ``on_event(node, update)`` follows each node's state update; ``on_start(node)`` is
        called when a node begins (LangGraph's ``tasks`` stream), e.g. for a live label."""
        thread_id = check_thread_id(thread_id or uuid.uuid4().hex[:12])
        config = self._config(thread_id)
        if resume:
            self._restore_world(config)
            inputs = None
        else:
            fresh = not self.graph.get_state(config).values
            if fresh:
                self._check_not_lost(thread_id)
            claimed = self._claim_episode(thread_id, episode_id, fresh)
            inputs = {"handles": {"episode_id": claimed}}
            if task:
                inputs["task"] = checked_task(task, self.context.config.max_task_chars)
        if self.context.llm is not None:
            self.context.llm.drain_calls()  # calls before this run are no step's of it
        started = time.perf_counter()
        # durability="sync": a step's checkpoint is stored before the next step starts. With
        # LangGraph's default ("async") the graph can run ahead of a lagging checkpoint writer,
        # and a kill -9 then loses steps (and world actions) that already happened.
        modes = ["updates", "tasks"] if on_start is not None else ["updates"]
        marked = False
        for mode, chunk in self.graph.stream(
            inputs, config, context=self.context, stream_mode=modes, durability="sync"
        ):
            if mode == "tasks":
                if "input" in chunk and on_start is not None:  # a start, not a result
                    on_start(chunk["name"])
                continue
            if inputs is not None and not marked:  # the run has checkpoints by its first step
                start = chunk.get("start") if isinstance(chunk, dict) else None
                handles = (start or {}).get("handles") or inputs["handles"]  # the start's claim
                self.context.memory.episodes.mark_checkpointed(handles["episode_id"])
                marked = True
            for node, update in chunk.items():
                if on_event is not None and isinstance(update, dict):
                    on_event(node, update)
        return self.result(thread_id, wall_s=time.perf_counter() - started)

    def _restore_world(self, config: dict) -> None:
        """Bring the live world back to the checkpoint (a crash may have lost it)."""
        snapshot = self.graph.get_state(config)
        if not snapshot.values:
            raise ValueError(f"no checkpoint for thread {config['configurable']['thread_id']!r}")
        executor = self.context.executor
        if not isinstance(executor, Replayable):
            return
        executor.reset()
        recall_routes(self.context)  # as the start did: a replayed navigate_to may need them
        if "handles" not in snapshot.values:  # killed before the first step: nothing to replay
            return
        episode_id = snapshot.values["handles"]["episode_id"]
        steps = self.context.memory.episodes.steps(episode_id)
        # Only the steps the checkpoint has seen: a step logged by an executor run that the
        # crash cut off before its checkpoint is run again by the resumed graph.
        done_steps = int(snapshot.values.get("step") or 0)
        executor.replay([Action(verb=t["verb"], args=list(t["args"])) for t in steps[:done_steps]])

    def state(self, thread_id: str) -> dict:
        return dict(self.graph.get_state(self._config(thread_id)).values)

    def result(self, thread_id: str, wall_s: float = 0.0) -> EpisodeResult:
        values = self.state(thread_id)
        episode_id = (values.get("handles") or {}).get("episode_id", thread_id)
        log = self.context.memory.episodes
        return EpisodeResult(
            thread_id=thread_id,
            episode_id=episode_id,
            task=values.get("task", ""),
            success=bool(values.get("success")),
            score=values.get("score"),
            max_score=values.get("max_score"),
            steps=int(values.get("step") or 0),
            end_reason=values.get("end_reason", ""),
            wall_s=wall_s,
            usage=values.get("usage") or {},
            trajectory=log.steps(episode_id)[: int(values.get("step") or 0)],
            spatial_stats=log.spatial_stats(episode_id),
            consolidation=values.get("consolidation") or {},
        )


def _checkpoint_place(saver: object) -> str:
    """Where a checkpointer keeps its checkpoints, for a message: a SQLite file, or its kind."""
    conn = getattr(saver, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        rows = conn.execute("PRAGMA database_list").fetchall()
        if rows and rows[0][2]:
            return str(rows[0][2])
    return type(saver).__name__


def build_agent(
    config: AgentConfig,
    executor: Executor,
    *,
    llm: StructuredLLM | BaseChatModel | None = None,
    embedder: Embeddings | None = None,
    memory: MemorySystem | None = None,
    checkpointer: BaseCheckpointSaver | str | Path | None = None,
) -> RoboMemoryAgent:
    """Build a RoboMemory agent; missing clients are made from ``config`` by robomemory.factory.

    ``executor`` is required (the world or robot to act in). ``llm`` is a StructuredLLM or a
    LangChain chat model (wrapped with ``config.model``'s limits). ``checkpointer`` is a saver,
    a ``postgresql://`` URL (fleet: one database for all robots), a SQLite path, or ``None`` for
    SQLite under the memory data directory. Raises RobotBusyError when another process is
    running ``config.robot_id`` on the same data directory.
    """
    context = build_context(config, executor, llm=llm, embedder=embedder, memory=memory)
    saver = build_checkpointer(checkpointer, config.memory.data_dir)
    graph = build_graph(critic_enabled=config.critic_enabled).compile(checkpointer=saver)
    return RoboMemoryAgent(graph, context)
