"""`robomemory bench kg-growth`: spatial KG size vs resolver load per step (paper Fig. 7).

Replays a TextWorld game's walkthrough (a bundled game or any game file, e.g. a large
``tw-make custom`` world) after a tour of every room. At every step Algorithm 2 runs for real
(graph store, embeddings, induced subgraph, merge, pruning); only the two model answers come
from :class:`~robomemory.eval.bench.kg_oracle.FactsOracle`, a FAKE model reading the game's facts.
Reports per step the KG's size, |E(G_local)| and the edges sent to the resolver, and at the end
the sent edges' max/median and whether the KG's "where is X" matches the game for every object
the robot has seen.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings

from robomemory.config import ModelConfig, SpatialConfig
from robomemory.core import TASK_COMPLETE, Action
from robomemory.eval.bench.kg_oracle import FactsOracle, location_accuracy
from robomemory.executors.envs.textworld import (
    TextWorldExecutor,
    resolve_game,
    walkthrough_actions,
)
from robomemory.memory.spatial import SpatialMemory, normalize_name, open_graph_store
from robomemory.models import make_embedder
from robomemory.structured import StructuredLLM
from robomemory.testing import ScriptedChatModel

DEFAULT_GAME = "cooking_6rooms_open"
_DIRECTION_OF = {"north_of": "north", "south_of": "south", "east_of": "east", "west_of": "west"}


@dataclass
class StepRow:
    step: int
    action: str
    vertices: int
    edges: int
    history: int
    sent_vertices: int
    sent_edges: int
    local_edges: int
    new_edges: int
    resolver_called: bool
    invalidated: int

    ratio: float = 0.0  # sent edges / edges of G ∪ G_new


@dataclass
class KGGrowthReport:
    game: str
    top_n: int
    k_hops: int
    hub_degree: int | None = None
    rows: list[StepRow] = field(default_factory=list)
    objects: int = 0
    correct: int = 0
    checked: int = 0
    wrong: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, float | int]:
        """Resolver load over the run (all updates, and those that asked the resolver),
        the final KG and the where-is accuracy."""
        sent = [r.sent_edges for r in self.rows]
        asked = [r.sent_edges for r in self.rows if r.resolver_called]
        return {
            "steps": len(self.rows),
            "final_edges": self.rows[-1].edges if self.rows else 0,
            "max_edges": max((r.edges for r in self.rows), default=0),
            "sent_edges_max": max(sent, default=0),
            "sent_edges_median": statistics.median(sent) if sent else 0,
            "sent_edges_median_when_asked": statistics.median(asked) if asked else 0,
            "resolver_calls": len(asked),
            "local_edges_max": max((r.local_edges for r in self.rows), default=0),
            "where_is_correct": self.correct,
            "where_is_checked": self.checked,
        }

    def as_dict(self) -> dict:
        return asdict(self) | {"summary": self.summary()}


def make_bench_embedder(kind: str) -> Embeddings:
    """The product's embedder (MiniLM) or a deterministic FAKE hash embedder (``fake``)."""
    if kind == "fake":
        return DeterministicFakeEmbedding(size=64)
    return make_embedder(ModelConfig(embedder="minilm"))


def tour_actions(facts: list, start: str) -> list[Action]:
    """``go`` actions of a depth-first tour of every room from ``start`` and back (the game's
    true map: the benchmark explores so the KG grows over a long trajectory)."""
    exits: dict[str, dict[str, str]] = {}
    doors = {
        (f.arguments[0].name, f.arguments[2].name): f.arguments[1].name
        for f in facts
        if f.name == "link"
    }
    for f in facts:
        if f.name in _DIRECTION_OF:  # north_of(a, b): going north from b reaches a
            a, b = f.arguments[0].name, f.arguments[1].name
            exits.setdefault(b, {})[_DIRECTION_OF[f.name]] = a
    back = {"north": "south", "south": "north", "east": "west", "west": "east"}
    out: list[Action] = []
    seen = {start}

    def visit(room: str) -> None:
        for direction, nxt in sorted(exits.get(room, {}).items()):
            if nxt not in seen:
                seen.add(nxt)
                if (room, nxt) in doors:  # opening an open door is harmless
                    out.append(Action(verb="open", args=[doors[room, nxt]]))
                out.append(Action(verb="go", args=[direction]))
                visit(nxt)
                out.append(Action(verb="go", args=[back[direction]]))

    visit(start)
    return out


def run_kg_growth(
    game: str = DEFAULT_GAME,
    embedder: Embeddings | None = None,
    cfg: SpatialConfig | None = None,
    data_dir: Path | None = None,
    tour: bool = True,
) -> KGGrowthReport:
    """Replay ``game``'s walkthrough (after a tour of every room when ``tour``) through
    spatial memory with the facts oracle; ``game`` is a bundled game's name or a game file
    (its walkthrough ``.json`` beside it)."""
    cfg = cfg or SpatialConfig()
    path = resolve_game(game)
    oracle = FactsOracle()
    llm = StructuredLLM(ScriptedChatModel(responder=oracle), max_retries=0).for_node("spatial")
    report = KGGrowthReport(
        game=game, top_n=cfg.top_n, k_hops=cfg.k_hops, hub_degree=cfg.hub_degree
    )
    seen: set[str] = set()
    with tempfile.TemporaryDirectory() as tmp:
        store = open_graph_store(cfg, Path(data_dir or tmp), f"kg_growth_{path.stem}")
        memory = SpatialMemory(cfg, store, embedder or make_bench_embedder("fake"))
        executor = TextWorldExecutor(path)
        try:
            _, obs = executor.reset()
            actions = [a for a in walkthrough_actions(path) if a.verb != TASK_COMPLETE]
            if tour:
                actions = tour_actions(executor.current_facts(), executor.current_room) + actions
            plan: list[tuple[str, list[str], str]] = [("(start)", [], obs.text)]
            for step, item in enumerate([None, *actions]):
                if item is not None:
                    result = executor.execute(item)
                    plan.append((str(item), list(item.args), result.observation.text))
                label, args, text = plan[-1]
                now = oracle.observe(executor.current_facts())
                seen |= now.entities
                queries = [*args, now.room] if now.room else args
                calls, deleted = len(llm.llm.chat_model.calls), oracle.deleted
                before = report.rows[-1].edges if report.rows else 0
                stats = memory.update(text or label, queries, step=step, episode_id=game, llm=llm)
                report.rows.append(
                    StepRow(
                        step=step,
                        action=label,
                        vertices=stats.vertices,
                        edges=stats.edges,
                        history=len(memory.triples(include_invalid=True)) - stats.edges,
                        sent_vertices=stats.sent_vertices,
                        sent_edges=stats.sent_edges,
                        local_edges=stats.local_edges,
                        new_edges=stats.new_edges,
                        resolver_called=len(llm.llm.chat_model.calls) - calls > 1,
                        invalidated=oracle.deleted - deleted,
                        ratio=round(stats.sent_edges / max(1, before + stats.new_edges), 3),
                    )
                )
            truth = executor.world_locations()
        finally:
            executor.close()
            store.close()
        triples = memory.triples()
    report.objects = len(truth)
    report.correct, report.checked, report.wrong = location_accuracy(
        triples, truth, {normalize_name(s) for s in seen}
    )
    return report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--game", default=DEFAULT_GAME, help="bundled game name or a game file (.z8/.ulx)"
    )
    parser.add_argument("--embedder", choices=["minilm", "fake"], default="minilm")
    parser.add_argument("--top-n", type=int, default=SpatialConfig().top_n)
    parser.add_argument("--k-hops", type=int, default=SpatialConfig().k_hops)
    parser.add_argument(
        "--hub-degree", type=int, default=SpatialConfig().hub_degree, help="0: no hub limit"
    )
    parser.add_argument("--no-tour", action="store_true", help="walkthrough only, no room tour")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def main(args: argparse.Namespace) -> int:
    hub = args.hub_degree or None
    cfg = SpatialConfig(top_n=args.top_n, k_hops=args.k_hops, hub_degree=hub)
    report = run_kg_growth(
        args.game, make_bench_embedder(args.embedder), cfg, tour=not args.no_tour
    )
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        _print_table(report)
    return 0 if report.correct == report.checked else 1


def _print_table(report: KGGrowthReport) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(
        caption="local E = |E(G_local)|; sent = edges in the resolver's prompt; "
        "ratio = sent E / |E(G ∪ G_new)|; res = resolver asked; inv = edges it invalidated",
        title=f"kg-growth: {report.game} (n={report.top_n}, K={report.k_hops}, "
        f"hub>{report.hub_degree})",
    )
    for col in (
        "step",
        "action",
        "|V|",
        "|E|",
        "hist",
        "local E",
        "sent V",
        "sent E",
        "new",
        "ratio",
        "res",
        "inv",
    ):
        table.add_column(col, justify="left" if col == "action" else "right", no_wrap=True)
    for r in report.rows:
        table.add_row(
            str(r.step),
            r.action,
            str(r.vertices),
            str(r.edges),
            str(r.history),
            str(r.local_edges),
            str(r.sent_vertices),
            str(r.sent_edges),
            str(r.new_edges),
            f"{r.ratio:.0%}",
            "y" if r.resolver_called else "-",
            str(r.invalidated),
        )
    console = Console(width=max(110, Console().width))
    console.print(table)
    s = report.summary()
    console.print(
        f"final KG: {report.rows[-1].vertices} vertices, {report.rows[-1].edges} valid edges, "
        f"{report.rows[-1].history} invalidated; edges sent to the resolver per update: "
        f"max {s['sent_edges_max']}, median {s['sent_edges_median']} "
        f"({s['sent_edges_median_when_asked']} over the {s['resolver_calls']} updates that asked "
        f"it); where-is accuracy {report.correct}/{report.checked} seen objects "
        f"({report.objects} in the world)"
    )
    for line in report.wrong:
        console.print(f"  wrong: {line}")
