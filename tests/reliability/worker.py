"""A child process of the reliability tests: one robot plays a lifelong task pair.

``python -m reliability.worker DATA --episodes a,b [--kill-at K] [--log F] [--snapshot F]
[--checkpoints URL] [--memory-url URL]``
(with ``tests/`` on PYTHONPATH). Each episode resumes from its checkpoint when it has an
unfinished one, is skipped when finished, and starts afresh otherwise, so running the worker
again after a kill -9 completes the pair. The model is the FAKE scripted one
(reliability.scripted); TextWorld, the memory stores and the checkpointer are real.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from langchain_core.embeddings import DeterministicFakeEmbedding

from reliability.harness import KillPoints, snapshot, write_classes
from reliability.scripted import lifelong_llm
from robomemory import build_agent
from robomemory.config import AgentConfig
from robomemory.executors.envs.textworld import TextWorldExecutor, bundled_game

ROBOT = "sweep-bot"
PAIR = {"task-1": "cooking_1room", "task-2": "cooking_1room_cut"}  # episode -> game


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("data", type=Path)
    p.add_argument("--episodes", default=",".join(PAIR))
    p.add_argument("--checkpoints", help="postgresql:// URL (default: SQLite under DATA)")
    p.add_argument("--memory-url", help="long-term memory in this PostgreSQL (default: shards)")
    p.add_argument("--robot", default=ROBOT)
    p.add_argument("--kill-at", type=int)
    p.add_argument("--log", type=Path, help="append one line per write point")
    p.add_argument("--snapshot", type=Path, help="write every store here at the end")
    p.add_argument("--stop-after-step", type=int, help="hang (to be killed) after this step")
    args = p.parse_args()

    KillPoints(args.kill_at, args.log).install(write_classes())
    episodes = [e for e in args.episodes.split(",") if e]
    for episode in episodes:
        thread = f"{args.robot}-{episode}"  # unique across robots sharing one database
        with play(args.data, args.robot, PAIR[episode], args.checkpoints, args.memory_url) as agent:
            snap = agent.graph.get_state(agent._config(thread))
            if snap.values and not snap.tasks:
                continue  # finished before
            on_event = _hang_after(args.stop_after_step) if args.stop_after_step else None
            result = agent.run(thread_id=thread, resume=bool(snap.values), on_event=on_event)
            print(
                f"finished {episode} success={result.success} steps={result.steps} "
                f"end={result.end_reason} actions={[t['action'] for t in result.trajectory]}",
                flush=True,
            )
    if args.snapshot:
        threads = [f"{args.robot}-{e}" for e in episodes]
        first = PAIR[episodes[0]]
        with play(args.data, args.robot, first, args.checkpoints, args.memory_url) as agent:
            args.snapshot.write_text(json.dumps(snapshot(agent.context.memory, threads)))


def play(data: Path, robot: str, game: str, checkpoints: str | None, memory_url: str | None = None):
    """The robot's agent on ``game`` (a context manager: closing it closes its memory)."""
    cfg = AgentConfig(robot_id=robot, max_steps=12)
    cfg.memory.data_dir = data
    cfg.memory.longterm.memory_url = memory_url
    return build_agent(
        cfg,
        TextWorldExecutor(bundled_game(game)),
        llm=lifelong_llm(game),
        embedder=DeterministicFakeEmbedding(size=32),
        checkpointer=checkpoints,
    )


def _hang_after(step: int):
    def on_event(node: str, update: dict) -> None:
        if node == "executor" and update.get("step") == step:
            print(f"at step {step}", flush=True)
            import time

            time.sleep(600)  # the test kills this process here

    return on_event


if __name__ == "__main__":
    main()
