"""`robomemory inspect --robot ID`: print a robot's memories as tables, optionally draw its KG.

Shows the spatial triples (current and invalidated), the semantic and episodic items with their
MemRL Q, visit counts and origin (the robots that wrote them, in a fleet's shared store; the
episode and task they were written from), and the long-term change history. Stores are read
directly: no model or embedder is loaded. A robot's Qdrant Edge shards admit one process at a
time, so inspect a robot whose agent is running through a Qdrant server (``--qdrant-url``) or
after the run. A fleet's shared PostgreSQL memory (``$ROBOMEMORY_MEMORY_URL``) is read at any
time: all its items.
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from rich.table import Table

from robomemory import models
from robomemory.commands.graph_draw import write_html, write_png
from robomemory.commands.home import add_home_argument, home_of
from robomemory.commands.json_out import add_json_flag, human_console, print_json, wants_json
from robomemory.commands.run_page import origin_line
from robomemory.config import MemoryConfig, ModelConfig
from robomemory.errors import print_error
from robomemory.memory.base import ORIGIN_KEYS, MemoryHandles, Triple, origin_of
from robomemory.memory.history import MemoryHistory
from robomemory.memory.spatial import SpatialMemory, open_graph_store
from robomemory.memory.stores.vectors import scan_items, shared_url


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", required=True, help="robot id whose memories to show")
    parser.add_argument("--world", default=None, help="whose spatial map (a site, a game)")
    add_home_argument(
        parser,
        "data folder whose memory/ is read (default: $ROBOMEMORY_HOME, else ~/.robomemory)",
        data_dest="memory_dir",
        data_note="--data is deprecated: it names the memory folder itself; use --home DIR, "
        "the folder holding memory/ (as ROBOMEMORY_HOME)",
    )
    parser.add_argument("--qdrant-url", default=None, help="Qdrant server (else the local shards)")
    parser.add_argument("--history", type=int, default=50, help="newest change rows shown")
    parser.add_argument("--html", type=Path, default=None, help="draw the spatial graph (HTML)")
    parser.add_argument("--png", type=Path, default=None, help="draw the spatial graph (PNG)")
    add_json_flag(parser)


def load_triples(cfg: MemoryConfig, handles: MemoryHandles) -> list[Triple]:
    """Every spatial triple of the robot, invalidated ones included."""
    store = open_graph_store(cfg.spatial, cfg.data_dir, handles.spatial_graph_id, read_only=True)
    try:
        # reading triples computes no embedding; the hash embedder only satisfies the signature
        # (looked up when called: a test that swaps it swaps it here too)
        embedder = models.make_embedder(ModelConfig(embedder="fake"))
        memory = SpatialMemory(cfg.spatial, store, embedder)
        return memory.triples(include_invalid=True)
    finally:
        store.close()


def load_items(
    cfg: MemoryConfig, handles: MemoryHandles, url: str | None
) -> list[tuple[str, str, str, dict]]:
    """(kind, id, text, metadata) of the robot's long-term items, highest Q first."""
    rows = [
        (kind, pid, text, meta)
        for kind, coll in (
            ("semantic", handles.semantic_collection),
            ("episodic", handles.episodic_collection),
        )
        for pid, text, meta in scan_items(Path(cfg.data_dir), coll, url)
    ]
    return sorted(rows, key=lambda r: (r[0], -float(r[3].get("q", 0.0))))


def load_history(cfg: MemoryConfig, handles: MemoryHandles, limit: int) -> list[dict]:
    path = Path(cfg.data_dir) / "history.sqlite3"
    if not path.exists():
        return []
    history = MemoryHistory(path)
    try:
        rows: list[dict] = []
        for coll in (handles.semantic_collection, handles.episodic_collection):
            rows += history.changes(collection=coll, limit=limit)
    finally:
        history.close()
    return sorted(rows, key=lambda r: r["id"])[-limit:]


def known_robots(data_dir: Path) -> list[str]:
    """Robot ids (as stored: unsafe characters become ``_``) with memory on disk."""
    data_dir = Path(data_dir)
    names = {
        p.stem.removeprefix("spatial_")
        for pattern in ("spatial_*.json", "spatial_*.sqlite3")
        for p in (data_dir / "spatial").glob(pattern)
    }
    for folder in (data_dir / "longterm", data_dir / "qdrant" / "collection"):
        for p in folder.glob("*_*"):
            kind, _, robot = p.name.partition("_")
            if kind in ("semantic", "episodic"):
                names.add(robot)
    return sorted(names)


def triples_table(triples: list[Triple]) -> Table:
    table = Table(
        title=f"spatial triples ({sum(t.valid for t in triples)} current, "
        f"{sum(not t.valid for t in triples)} invalidated)"
    )
    for col in ("subject", "relation", "object", "from step", "invalidated at", "episode"):
        table.add_column(col)
    for t in sorted(triples, key=lambda t: (not t.valid, t.subject, t.relation, t.object)):
        style = None if t.valid else "dim"
        table.add_row(
            t.subject,
            t.relation,
            t.object,
            str(t.valid_from_step),
            "" if t.valid else str(t.invalidated_at_step),
            t.episode_id or "",
            style=style,
        )
    return table


def items_table(items: list[tuple[str, str, str, dict]]) -> Table:
    table = Table(title=f"long-term items ({len(items)})")
    for col in ("kind", "level", "Q", "visits", "id", "text", "origin"):
        table.add_column(col, overflow="fold")
    for kind, pid, text, meta in items:
        table.add_row(
            kind,
            meta.get("level") or "",
            f"{float(meta.get('q', 0.0)):.3f}",
            str(meta.get("visits", 0)),
            pid[:8],
            text,
            origin_line(origin_of(meta)),
        )
    return table


def history_table(rows: list[dict]) -> Table:
    table = Table(title=f"change history (newest {len(rows)})")
    for col in ("time", "collection", "event", "item", "change", "episode"):
        table.add_column(col, overflow="fold")
    for r in rows:
        if r["event"] == "Q":
            change = f"Q {r['q_old']:.3f} → {r['q_new']:.3f}"
        elif r["event"] == "UPDATE":
            change = f"{r['old_text']} → {r['new_text']}"
        else:
            change = r["new_text"] or r["old_text"] or ""
        when = dt.datetime.fromtimestamp(r["ts"]).strftime("%Y-%m-%d %H:%M:%S")
        table.add_row(
            when, r["collection"], r["event"], r["item_id"][:8], change, r["episode_id"] or ""
        )
    return table


def triple_rows(triples: list[Triple]) -> list[dict]:
    """The spatial triples table's rows, current first."""
    return [
        {
            "subject": t.subject,
            "relation": t.relation,
            "object": t.object,
            "valid": t.valid,
            "from_step": t.valid_from_step,
            "invalidated_at": None if t.valid else t.invalidated_at_step,
            "episode": t.episode_id,
        }
        for t in sorted(triples, key=lambda t: (not t.valid, t.subject, t.relation, t.object))
    ]


def item_rows(items: list[tuple[str, str, str, dict]]) -> list[dict]:
    """The long-term items table's rows (whole ids), with the provenance fields the store
    records (ORIGIN_KEYS; null where it records none)."""
    return [
        {
            "kind": kind,
            "level": meta.get("level"),
            "q": float(meta.get("q", 0.0)),
            "visits": int(meta.get("visits", 0)),
            "id": pid,
            "text": text,
            **_origin_fields(meta),
        }
        for kind, pid, text, meta in items
    ]


def _origin_fields(meta: dict) -> dict:
    """Every provenance field (ORIGIN_KEYS), None where the store records none."""
    origin = origin_of(meta)
    return {k: origin.get(k) for k in ORIGIN_KEYS}


def history_rows(rows: list[dict]) -> list[dict]:
    """The change history table's rows, as the history store keeps them."""
    return [
        {**r, "time": dt.datetime.fromtimestamp(r["ts"]).isoformat(timespec="seconds")}
        for r in rows
    ]


def main(args: argparse.Namespace) -> int:
    cfg = MemoryConfig(data_dir=args.memory_dir or home_of(args) / "memory")
    handles = MemoryHandles.for_robot(args.robot, "", args.world)
    console = human_console(args)
    if args.qdrant_url is None and not Path(cfg.data_dir).is_dir():
        print_error(f"no memories under {cfg.data_dir} (give --home DIR)")
        return 2
    try:
        items = load_items(cfg, handles, args.qdrant_url or shared_url(cfg.longterm))
    except RuntimeError as exc:  # local mode: the storage is held by another process
        print_error(f"cannot read long-term memory: {exc}")
        return 2
    triples = load_triples(cfg, handles)
    history = load_history(cfg, handles, args.history)
    if not (triples or items or history):
        robots = known_robots(cfg.data_dir)
        known = ", ".join(robots) if robots else "none"
        print_error(
            f"no memory for robot {args.robot!r} under {cfg.data_dir} "
            f"(robots with memory there: {known})"
        )
        return 1
    if wants_json(args):
        print_json(
            {
                "robot": args.robot,
                "data": str(cfg.data_dir),
                "triples": triple_rows(triples),
                "items": item_rows(items),
                "history": history_rows(history),
            }
        )
    else:
        console.print(f"robot [bold]{args.robot}[/bold] · data {cfg.data_dir}")
        console.print(triples_table(triples))
        console.print(items_table(items))
        console.print(history_table(history))
    title = f"spatial memory of robot {args.robot}"
    if args.html:
        console.print(f"wrote {write_html(triples, args.html, title)}")
    if args.png:
        console.print(f"wrote {write_png(triples, args.png, title)}")
    return 0
