"""`robomemory bench spatial-accuracy`: spatial KG object locations vs the game's ground truth.

The oracle walkthrough of each TextWorld game of a suite is played; after every step the real
``perceive`` node (step summarizer + query generator) and the real ``spatial`` memory branch
(Algorithm 2) run with the configured model, and the KG's current object locations are compared
with the game's ``facts`` (``world_locations``). Precision is over the KG's located objects,
recall over the objects the robot has seen; F1 per step and per game.
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rich.console import Console
from rich.progress import Progress, TextColumn

from robomemory.commands.json_out import add_json_flag, human_console, print_json, wants_json
from robomemory.config import AgentConfig
from robomemory.context import AgentContext
from robomemory.core import TASK_COMPLETE
from robomemory.eval.bench.suite import config_from_args
from robomemory.eval.metrics import location_prf
from robomemory.eval.report import load_records, markdown_table, write_json_atomic, write_report
from robomemory.eval.suites import SUITES, get_suite, textworld_game
from robomemory.inputs import out_folder
from robomemory.memory.base import Triple
from robomemory.memory.spatial import normalize_name
from robomemory.memory.system import MemorySystem
from robomemory.models import make_embedder, make_llm
from robomemory.nodes.memory_branches import spatial
from robomemory.nodes.perceive import perceive

LOCATION_WORDS = ("in", "on", "at", "inside", "under")


def kg_locations(triples: Iterable[Triple]) -> dict[str, str]:
    """object -> holder from the KG's valid edges (``I hold x`` means x is in the inventory)."""
    out: dict[str, str] = {}
    for t in triples:
        if not t.valid:
            continue
        words = t.relation.split()
        if t.subject == "I" and words and words[0] in ("hold", "holds", "carry", "carries"):
            out[t.object] = "inventory"
        elif words and words[-1] in LOCATION_WORDS or t.relation in LOCATION_WORDS:
            out[t.subject] = "inventory" if t.object == "I" else t.object
    return out


def truth_locations(world: dict[str, tuple[str, str]]) -> dict[str, str]:
    return {
        normalize_name(k): (h if h == "inventory" else normalize_name(h))
        for k, (_, h) in world.items()
    }


def evaluate_game(
    path: Path,
    cfg: AgentConfig,
    llm: Any,
    embedder: Any,
    robot_id: str,
    before_step: Callable[[Any], None] | None = None,
    on_step: Callable[[dict], None] | None = None,
) -> list[dict]:
    """Play one game's walkthrough through perceive + spatial; one accuracy row per step.

    ``before_step(executor)`` runs before each perception (tests feed a facts oracle with it);
    ``on_step(row)`` gets each accuracy row as soon as it is measured (progress display).
    """
    # loads textworld (heavy)
    from robomemory.executors.envs.textworld import TextWorldExecutor, walkthrough_actions

    executor = TextWorldExecutor(path)
    memory = MemorySystem.open(cfg.memory, embedder, robot_id)
    runtime = SimpleNamespace(
        context=AgentContext(config=cfg, llm=llm, memory=memory, executor=executor)
    )
    rows: list[dict] = []
    try:
        task, obs = executor.reset()
        state: dict = {
            "task": task,
            "observation": obs.model_dump(),
            "step": 0,
            "handles": {"episode_id": robot_id},
            "last_result": None,
        }
        actions = [a for a in walkthrough_actions(path) if a.verb != TASK_COMPLETE]
        for step in range(len(actions) + 1):
            if before_step is not None:
                before_step(executor)
            state.update(perceive(state, runtime))  # type: ignore[arg-type]
            spatial(state, runtime)  # type: ignore[arg-type]
            seen = {normalize_name(n) for n in executor.known_objects()}
            truth = {
                k: v for k, v in truth_locations(executor.world_locations()).items() if k in seen
            }
            all_truth = truth_locations(executor.world_locations())
            predicted = {
                k: v for k, v in kg_locations(memory.spatial.triples()).items() if k in all_truth
            }
            rows.append({"step": step, **location_prf(predicted, truth)})
            if on_step is not None:
                on_step(rows[-1])
            if step == len(actions):
                break
            result = executor.execute(actions[step])
            state["last_result"] = result.model_dump(mode="json")
            if result.observation.text:
                state["observation"] = result.observation.model_dump()
            state["step"] = step + 1
            if result.observation.done:
                break
    finally:
        memory.close()
        executor.close()
    return rows


def summarize_games(per_game: dict[str, list[dict]]) -> dict:
    """Per-game means and per-step means over games."""
    games = []
    by_step: dict[int, list[dict]] = defaultdict(list)
    for game, rows in per_game.items():
        for r in rows:
            by_step[r["step"]].append(r)
        games.append(
            {
                "game": game,
                "steps": len(rows),
                **{
                    k: statistics.fmean(r[k] for r in rows) if rows else 0.0
                    for k in ("precision", "recall", "f1")
                },
            }
        )
    steps = [
        {
            "step": s,
            **{k: statistics.fmean(r[k] for r in rs) for k in ("precision", "recall", "f1")},
        }
        for s, rs in sorted(by_step.items())
    ]
    overall = {
        k: statistics.fmean(g[k] for g in games) if games else 0.0
        for k in ("precision", "recall", "f1")
    }
    rows = [r for rs in per_game.values() for r in rs]
    return {
        "games": games,
        "by_step": steps,
        "overall": overall,
        "micro": micro_prf(rows),
        "per_game": per_game,
    }


def micro_prf(rows: Iterable[dict]) -> dict[str, float]:
    """Precision, recall and F1 over all (object, holder) pairs of all steps pooled. Unlike the
    mean over steps, a step where nothing is seen yet and nothing is placed does not count
    as a miss (its F1 is 0 in the per-step mean)."""
    rows = list(rows)
    correct = sum(r["correct"] for r in rows)
    predicted = sum(r["predicted"] for r in rows)
    truth = sum(r["truth"] for r in rows)
    p = correct / predicted if predicted else 0.0
    r = correct / truth if truth else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}


def run(
    suite_name: str,
    cfg: AgentConfig,
    out: Path,
    llm: Any = None,
    embedder: Any = None,
    episodes: int | None = None,
) -> dict:
    """Evaluate every TextWorld game of the suite; write OUT/spatial_accuracy.json."""
    from robomemory.executors.envs.textworld import walkthrough_actions  # loads textworld (heavy)

    if llm is None:
        llm = make_llm(cfg.model)
    if embedder is None:
        embedder = make_embedder(cfg.model)
    cfg = cfg.ablate(["longterm"])
    cfg.memory.data_dir = out / "spatial_accuracy_memory"
    suite = get_suite(suite_name)
    tasks = [t for t in suite.tasks if t.world == "textworld"][: episodes or None]
    per_game: dict[str, list[dict]] = {}
    paths = {}
    for spec in tasks:
        paths[spec.id] = textworld_game(spec.params)
    total = sum(len(walkthrough_actions(path)) for path in paths.values())
    columns = (*Progress.get_default_columns(), TextColumn("{task.fields[f1]}"))
    with Progress(*columns, console=Console(stderr=True)) as progress:
        bar = progress.add_task("spatial accuracy", total=total, f1="")
        for game, path in paths.items():

            def show(row: dict, game: str = game) -> None:
                progress.update(bar, advance=1, description=game, f1=f"F1 {row['f1']:.2f}")

            per_game[game] = evaluate_game(
                path, cfg, llm, embedder, robot_id=f"acc-{game}", on_step=show
            )
    summary = summarize_games(per_game)
    write_json_atomic(out / "spatial_accuracy.json", summary)
    return summary


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--suite", default="tiny", choices=sorted(SUITES))
    p.add_argument("--episodes", type=int, default=None, help="first N games")
    p.add_argument(
        "--model",
        choices=("local", "openai", "fake"),
        default="local",
        help="local: the embedded model; openai: an OpenAI-compatible endpoint; fake: no "
        "weights, the first candidate every step (a dry run)",
    )
    p.add_argument("--model-name", default=None)
    p.add_argument("--base-url", default=None)
    p.add_argument("--out", type=Path, default=Path("runs/spatial-accuracy"))
    add_json_flag(p)


def main(args: argparse.Namespace) -> int:
    out_folder(args.out)  # before any model loads
    summary = run(args.suite, config_from_args(args), args.out, episodes=args.episodes)
    console = human_console(args)
    if wants_json(args):
        print_json(summary)
    else:
        games = markdown_table(summary["games"], ["game", "steps", "precision", "recall", "f1"])
        console.print(games)
    micro = summary["micro"]
    console.print(
        f"overall F1 {summary['overall']['f1']:.3f} (mean over steps); pooled pairs: "
        f"P {micro['precision']:.3f} R {micro['recall']:.3f} F1 {micro['f1']:.3f} -> {args.out}"
    )
    if load_records(args.out):  # --out is a suite's report folder: its report gains the table
        write_report(args.out, title=f"Suite {args.suite}")
        console.print(f"report updated: {args.out / 'summary.md'}")
    return 0
