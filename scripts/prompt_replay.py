"""Every planner and critic prompt of scripted runs on real TextWorld games, one JSON line each.

A refactor that must not change what the model is asked is checked by running this at two
commits and comparing the files (the model is FAKE: a planner that follows the walkthrough
while the walkthrough's action is offered, else the list's third action; a critic that
approves). Usage: ``python scripts/prompt_replay.py OUT.jsonl [--games-dir DIR]``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory.config import AgentConfig
from robomemory.eval.suites import tw_cooking_game
from robomemory.executors.envs.textworld import (
    TextWorldExecutor,
    bundled_game,
    walkthrough_actions,
)
from robomemory.graphs.agent import build_agent
from robomemory.testing import PlanScript, message_text, scripted_llm


def offered(text: str) -> list[str]:
    """The actions a planner prompt lists as possible now."""
    listed = text.split("Actions possible now:\n", 1)
    if len(listed) < 2:
        return []
    lines = listed[1].split("\n\n", 1)[0].splitlines()
    return [line.split(". ", 1)[1].split(": ", 1)[0] for line in lines]


def replay(game: Path, out: list[tuple], steps: int = 25) -> None:
    """Two attempts at ``game`` with one memory, their prompts appended to ``out``."""
    data = Path(tempfile.mkdtemp())
    for attempt in (1, 2):
        walk = [str(a) for a in walkthrough_actions(game)]
        made = {"n": 0}

        def plan(messages, walk=walk, made=made, attempt=attempt):
            text = message_text(messages)
            out.append(("plan", game.name, attempt, text))
            can = offered(text)
            want = walk[made["n"]] if made["n"] < len(walk) else None
            made["n"] += 1
            pick = want if want in can or not can else can[min(2, len(can) - 1)]
            verb, _, rest = (pick or "look()").partition("(")
            return [(verb, [a.strip() for a in rest.rstrip(")").split(",") if a.strip()])]

        def critic(messages, attempt=attempt):
            out.append(("critic", game.name, attempt, message_text(messages)))
            return {"approve": True, "reason": "fine"}

        llm = scripted_llm(
            {
                "Plan": PlanScript(plan, "x"),
                "CriticVerdict": critic,
                "StepSummary": lambda m: {"summary": "I acted."},
                "MemoryQueries": lambda m: {"queries": ["kitchen"]},
            }
        )
        cfg = AgentConfig(max_steps=steps, robot_id="replay")
        cfg.memory.data_dir = data
        embedder = DeterministicFakeEmbedding(size=32)
        agent = build_agent(cfg, TextWorldExecutor(game), llm=llm, embedder=embedder)
        try:
            result = agent.run(thread_id=f"{game.stem}-{attempt}")
        finally:
            agent.context.memory.close()
        actions = [t["action"] for t in result.trajectory]
        out.append(("result", game.name, attempt, f"{result.success} {result.steps} {actions}"))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("--games-dir", type=Path, default=Path(tempfile.gettempdir()) / "rm-games")
    args = p.parse_args()
    games = [bundled_game("cooking_1room"), bundled_game("cooking_6rooms")]
    games += [tw_cooking_game("medium", s, args.games_dir) for s in (1, 2)]
    games += [tw_cooking_game("hard", s, args.games_dir) for s in (11, 12)]
    out: list[tuple] = []
    for game in games:
        replay(game, out)
    args.out.write_text("\n".join(json.dumps(o) for o in out) + "\n")
    print(f"{sum(o[0] != 'result' for o in out)} prompts from {len(games)} games -> {args.out}")


if __name__ == "__main__":
    main()
