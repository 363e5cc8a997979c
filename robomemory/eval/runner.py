"""The benchmark episode loop: agents x ablations x attempts x tasks, resumable, lifelong.

- Every finished episode is written atomically to ``OUT/episodes/<key>.json``; a re-run skips
  episodes whose file exists (and retries those recorded with an error). A test split's record
  is sealed there (no steps; the whole of it in ``OUT/sealed/``: eval/report.py).
- A RoboMemory episode interrupted mid-way resumes from its LangGraph checkpoint
  (``OUT/checkpoints.sqlite``, thread id = the episode key) instead of starting over.
- Lifelong protocol: attempt 2 replays the same tasks with the same ``robot_id`` and memory
  folder, so long-term memory carries over, and each task's spatial map (one per task: every
  game is its own world) too; temporal memory starts fresh per task.
- A model that cannot answer (``ModelUnavailableError``: nothing listens at its endpoint, it
  knows no such model, it refuses the key, or calls in a row got no answer) stops the whole
  suite: no record is written for the episode it stopped in (a re-run resumes it), where an
  episode error is recorded and the suite goes on.
- TALES' protocol (``Suite.protocol == "tales"``, eval/tales.py): exactly the suite's steps, a
  game that ends without a win restarts (executors/restarting.py), the run's best score counts.
- ``Suite.actions``: ``listed`` (the world's valid actions are the candidates) or ``free`` (the
  executor reads only what a player sees: executors/perceived.py); each record keeps it.
- Agents: ``robomemory``; the baselines ``react`` and ``fullctx`` (eval/baselines.py); and
  ``first``, RoboMemory's graph on the fake model (robomemory.testing.first_candidate): every
  step the first candidate the grounding offers, so robomemory − first is what the model adds.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from robomemory.config import AgentConfig, ModelConfig
from robomemory.core import Executor
from robomemory.episode import EpisodeResult, EventHandler
from robomemory.eval.baselines import BaselineAgent
from robomemory.eval.metrics import EpisodeRecord, NodeEvent, gc_of
from robomemory.eval.report import EPISODES_DIR, refuse_prompt_log, write_episode
from robomemory.eval.suites import Suite, TaskSpec, make_executor, oracle_steps, step_limit
from robomemory.eval.tales import tales_record
from robomemory.executors.restarting import RestartingExecutor
from robomemory.graphs.agent import RoboMemoryAgent, build_agent, sqlite_checkpointer
from robomemory.memory.system import MemorySystem
from robomemory.models import make_embedder, make_llm
from robomemory.structured import StructuredLLM
from robomemory.testing.first_candidate import first_candidate_llm

log = logging.getLogger(__name__)

# first: RoboMemory's graph on the fake model's first candidate (what the rules do alone)
AGENTS = ("robomemory", "react", "fullctx", "first")
MODEL_FREE = ("first",)
MemoryScope = Literal["suite", "task"]
# Failures of one episode that must not stop a whole suite (worlds are external processes).
# ModelUnavailableError is none of them: a model that is down stops the suite.
EPISODE_ERRORS: tuple[type[BaseException], ...] = (
    RuntimeError,
    ValueError,
    OSError,
    TimeoutError,
    KeyError,
)


def ablation_names(label: str) -> list[str]:
    """``"none"`` -> [], ``"critic+spatial"`` -> ["critic", "spatial"]."""
    return [] if label in ("", "none") else label.split("+")


class SuiteRunner:
    """Runs one suite for a set of agents and ablations; see module docstring."""

    def __init__(
        self,
        suite: Suite,
        out: str | Path,
        *,
        config: AgentConfig | None = None,
        llm: StructuredLLM | BaseChatModel | None = None,
        embedder: Embeddings | None = None,
        memory_scope: MemoryScope = "suite",
        executor_factory: Callable[[TaskSpec], Executor] | None = None,
        show_progress: bool = True,
        max_steps: int | None = None,
        robot: str | None = None,
    ):
        self.suite = suite
        self.out = Path(out)
        self.config = config or AgentConfig()
        self.llm = llm
        self.embedder = embedder
        self.memory_scope = memory_scope
        self.executor_factory = executor_factory or (
            lambda spec: make_executor(spec, self.suite.actions)
        )
        self.show_progress = show_progress
        self.max_steps = max_steps
        self.robot = robot  # the robot's name (default: the suite's); a fleet names each
        self._memories: dict[tuple[str, str], MemorySystem] = {}
        self._fake_llm: StructuredLLM | None = None
        self._checkpointer = None

    # --- public -----------------------------------------------------------------------------
    def plan(
        self, agents: Sequence[str], ablations: Sequence[str], attempts: int, episodes: int | None
    ) -> list[tuple[str, str, int, TaskSpec]]:
        """Every (agent, ablation, attempt, task) to run, in lifelong order."""
        tasks = self.suite.tasks[:episodes] if episodes else self.suite.tasks
        todo = []
        for agent in agents:
            if agent not in AGENTS:
                raise ValueError(f"unknown agent {agent!r}; choose from {', '.join(AGENTS)}")
            labels = ["none", *ablations] if agent == "robomemory" else ["none"]
            for label in dict.fromkeys(labels):
                self.config.ablate(ablation_names(label))  # fail fast on a bad name
                for attempt in range(1, attempts + 1):
                    todo += [(agent, label, attempt, t) for t in tasks]
        return todo

    def run(
        self,
        agents: Sequence[str],
        ablations: Sequence[str] = (),
        attempts: int = 2,
        episodes: int | None = None,
        on_record: Callable[[EpisodeRecord], None] | None = None,
    ) -> list[EpisodeRecord]:
        """Run what is not done yet; return the records of the whole plan."""
        todo = self.plan(agents, ablations, attempts, episodes)
        if self.suite.split == "test":
            refuse_prompt_log()  # its prompts would show the sealed steps
        records: list[EpisodeRecord] = []
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
        )
        try:
            with Progress(*columns, disable=not self.show_progress) as progress:
                bar = progress.add_task(self.suite.name, total=len(todo))
                for agent, label, attempt, spec in todo:
                    path = self._path(agent, label, attempt, spec)
                    done = self._load(path)
                    if done is not None and done.error is None:
                        records.append(done)
                        progress.advance(bar)
                        continue
                    progress.update(bar, description=f"{agent}/{label} a{attempt} {spec.id}")
                    record = self._episode(agent, label, attempt, spec)
                    record = write_episode(path, record, sealed=self.suite.split == "test")
                    records.append(record)
                    if on_record is not None:
                        on_record(record)
                    progress.advance(bar)
        finally:
            self.close()
        return records

    def close(self) -> None:
        for memory in self._memories.values():
            memory.close()
        self._memories.clear()
        if self._checkpointer is not None:
            self._checkpointer.conn.close()
            self._checkpointer = None

    # --- one episode --------------------------------------------------------------------------
    def _key(self, agent: str, label: str, attempt: int, spec: TaskSpec) -> str:
        return EpisodeRecord(
            suite=self.suite.name, task_id=spec.id, agent=agent, ablation=label, attempt=attempt
        ).key

    def _path(self, agent: str, label: str, attempt: int, spec: TaskSpec) -> Path:
        return self.out / EPISODES_DIR / f"{self._key(agent, label, attempt, spec)}.json"

    @staticmethod
    def _load(path: Path) -> EpisodeRecord | None:
        if not path.exists():
            return None
        return EpisodeRecord.model_validate_json(path.read_text())

    def _agent_config(self, agent: str, label: str, spec: TaskSpec) -> AgentConfig:
        cfg = self.config.ablate(ablation_names(label))
        if agent in MODEL_FREE:
            cfg.model = ModelConfig(provider="fake", embedder=cfg.model.embedder)
        cfg.max_steps = self.max_steps or self.suite.max_steps
        cfg.memory.data_dir = self.out / "memory" / f"{agent}__{label}"
        name = self.robot or self.suite.name
        cfg.robot_id = name if self.memory_scope == "suite" else f"{name}__{spec.id}"
        return cfg

    def _episode(self, agent: str, label: str, attempt: int, spec: TaskSpec) -> EpisodeRecord:
        key = self._key(agent, label, attempt, spec)
        cfg = self._agent_config(agent, label, spec)
        record = EpisodeRecord(
            suite=self.suite.name,
            task_id=spec.id,
            agent=agent,
            ablation=label,
            attempt=attempt,
            model=cfg.model.label,
            actions=self.suite.actions,
            grounding="table",
        )
        events: list[NodeEvent] = []
        step = [0]

        def on_event(node: str, update: dict) -> None:
            if isinstance(update.get("step"), int):
                step[0] = update["step"]
            for name, usage in (update.get("usage") or {}).items():
                events.append(
                    NodeEvent(
                        node=name,
                        step=step[0],
                        wall_s=float(usage.get("wall_s", 0.0)),
                        calls=int(usage.get("calls", 0)),
                    )
                )

        executor = self.executor_factory(spec)
        tales = self.suite.protocol == "tales"
        if tales:  # TALES: a lost game restarts; the best score over the run counts
            executor = RestartingExecutor(executor)
        try:
            oracle = oracle_steps(spec, executor)
            if not tales:  # TALES: exactly the suite's steps, whatever the oracle
                cfg.max_steps = step_limit(cfg.max_steps, oracle)
            record.oracle_steps, record.max_steps = oracle, cfg.max_steps
            runner = self._build(agent, cfg, executor, spec.id)
            result = self._play(runner, key, on_event)
        except EPISODE_ERRORS as exc:
            log.exception("episode %s failed", key)
            record.error = f"{type(exc).__name__}: {exc}"
            return record
        finally:
            executor.close()
        played = record.model_copy(
            update={
                "task": result.task,
                "success": result.success,
                "score": result.score,
                "max_score": result.max_score,
                "gc": gc_of(result.score, result.max_score),
                "steps": result.steps,
                "end_reason": result.end_reason,
                "wall_s": result.wall_s,
                "usage": result.usage,
                "events": events,
                "spatial_stats": result.spatial_stats,
                "trajectory": [without_prompts(t) for t in result.trajectory],
            }
        )
        if isinstance(executor, RestartingExecutor):
            return tales_record(played, spec.world, executor)
        return played

    def _build(
        self, agent: str, cfg: AgentConfig, executor: Executor, world: str
    ) -> RoboMemoryAgent | BaselineAgent:
        llm = self._first_llm() if agent in MODEL_FREE else self._llm(cfg)
        if agent not in ("robomemory", *MODEL_FREE):
            return BaselineAgent(agent, cfg, executor, llm)  # type: ignore[arg-type]
        if self._checkpointer is None:
            self._checkpointer = sqlite_checkpointer(self.out / "checkpoints.sqlite")
        memory = self._memory(agent, cfg)
        memory.use_world(world)  # each task is its own world: its own map, the same lessons
        return build_agent(cfg, executor, llm=llm, memory=memory, checkpointer=self._checkpointer)

    @staticmethod
    def _play(
        runner: RoboMemoryAgent | BaselineAgent, key: str, on_event: EventHandler
    ) -> EpisodeResult:
        """Play (or resume, or read back) one episode."""
        if isinstance(runner, BaselineAgent):
            return runner.run(thread_id=key, episode_id=key, on_event=on_event)
        state = runner.state(key)
        if state.get("done"):
            return runner.result(key)
        if state:
            log.info("resuming %s from its checkpoint", key)
            return runner.run(thread_id=key, on_event=on_event, resume=True)
        return runner.run(thread_id=key, episode_id=key, on_event=on_event)

    def _llm(self, cfg: AgentConfig) -> StructuredLLM:
        if self.llm is None:
            self.llm = make_llm(cfg.model)
        elif not isinstance(self.llm, StructuredLLM):
            self.llm = StructuredLLM(
                self.llm,
                max_retries=cfg.model.max_retries,
                max_failed_calls=cfg.model.max_failed_calls,
            )
        return self.llm

    def _first_llm(self) -> StructuredLLM:
        if self._fake_llm is None:
            self._fake_llm = first_candidate_llm()
        return self._fake_llm

    def _memory(self, agent: str, cfg: AgentConfig) -> MemorySystem:
        slot = (str(cfg.memory.data_dir), cfg.robot_id)
        if slot not in self._memories:
            if self.embedder is None:
                self.embedder = make_embedder(cfg.model)
            self._memories[slot] = MemorySystem.open(cfg.memory, self.embedder, cfg.robot_id)
        return self._memories[slot]


def without_prompts(step: dict) -> dict:
    """A step as a suite's report keeps it: its model calls' answers, tokens and seconds, not
    their prompts (a suite's prompts are ``$ROBOMEMORY_PROMPT_LOG``'s, on a dev split)."""
    calls = step.get("calls")
    if not calls:
        return step
    kept = [{k: v for k, v in c.items() if k not in ("system", "user")} for c in calls]
    return {**step, "calls": kept}
