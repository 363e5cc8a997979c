"""`robomemory inspect`: tables of a robot's spatial triples, long-term items and change
history, read from REAL stores (networkx graph on disk, Qdrant local mode, SQLite); drawings of
the graph as HTML (inline SVG) and PNG. The model's answers are scripted (a fake)."""

from __future__ import annotations

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory.cli import main as cli_main
from robomemory.config import MemoryConfig
from robomemory.memory.base import Triple
from robomemory.memory.longterm import NewItem
from robomemory.memory.stores.graph_store import GraphChange
from robomemory.memory.system import MemorySystem
from robomemory.structured import StructuredLLM
from robomemory.testing import ScriptedChatModel

DIM = 64


@pytest.fixture
def data_dir(tmp_path):
    """A robot with a moved cup (one invalidated edge), two semantic items and a Q update."""
    emb = DeterministicFakeEmbedding(size=DIM)
    system = MemorySystem.open(MemoryConfig(data_dir=tmp_path / "memory"), emb, "robot-7")
    store = system.spatial.store
    vecs = {n: emb.embed_query(n) for n in ("cup", "table", "drawer", "kitchen")}
    first = store.apply(
        GraphChange(
            key="e1:1",
            step=1,
            episode_id="e1",
            vertices=vecs,
            add=[
                Triple(subject="cup", relation="on", object="table"),
                Triple(subject="table", relation="in", object="kitchen"),
            ],
        )
    )
    store.apply(
        GraphChange(
            key="e1:2",
            step=2,
            episode_id="e1",
            vertices=vecs,
            add=[
                Triple(subject="cup", relation="in", object="drawer"),
                Triple(subject="drawer", relation="in", object="kitchen"),
            ],
            invalidate=[first.added[0]],
        )
    )
    llm = StructuredLLM(ScriptedChatModel(responder=lambda s, m: {"event": "ADD"})).for_node("t")
    pid = system.semantic.update(
        NewItem("cups are kept in drawers", "task"),
        idx=0,
        task="find the cup",
        episode_id="e1",
        llm=llm,
    )["item_id"]
    system.semantic.update(
        NewItem("drawers open by pulling", "action"),
        idx=1,
        task="find the cup",
        episode_id="e1",
        llm=llm,
    )
    system.semantic.update_utility([pid], 1.0, "e2")
    system.close()
    return tmp_path


def test_inspect_prints_triples_items_and_history(data_dir, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "220")
    assert cli_main(["inspect", "--robot", "robot-7", "--home", str(data_dir)]) == 0
    out = capsys.readouterr().out
    assert "3 current, 1 invalidated" in out
    lines = out.splitlines()
    moved = next(line for line in lines if "cup" in line and " on " in line)
    assert "table" in moved and "2" in moved  # invalidated at step 2
    assert any("cup" in line and "drawer" in line for line in lines)
    assert "long-term items (2)" in out
    item = next(line for line in lines if "cups are kept in drawers" in line and "ADD" not in line)
    assert "0.300" in item and "task" in item
    assert "Q 0.000 → 0.300" in out
    assert sum("ADD" in line for line in lines) == 2


def test_inspect_draws_html_and_png(data_dir, tmp_path, capsys):
    html, png = tmp_path / "graph.html", tmp_path / "graph.png"
    code = cli_main(
        [
            "inspect",
            "--robot",
            "robot-7",
            "--home",
            str(data_dir),
            "--html",
            str(html),
            "--png",
            str(png),
        ]
    )
    assert code == 0
    page = html.read_text()
    assert "<svg" in page and "drawer" in page and "stroke-dasharray" in page  # invalidated
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_inspect_of_an_unknown_robot_says_so_and_names_the_known_ones(data_dir, capsys):
    assert cli_main(["inspect", "--robot", "nobody", "--home", str(data_dir)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1
    assert "no memory for robot 'nobody'" in err and "robots with memory there: robot-7" in err


def test_labels_of_parallel_edges_do_not_overprint():
    import math
    import re

    from robomemory.commands.graph_draw import to_svg

    triples = [
        Triple(subject="cup", relation=r, object="table", valid_from_step=i, invalidated_at_step=n)
        for i, (r, n) in enumerate((("on", 2), ("next to", 4), ("under", None)))
    ] + [
        Triple(subject="table", relation="holds", object="cup", valid_from_step=4),
        Triple(subject="table", relation="in", object="kitchen", valid_from_step=1),
    ]
    svg = to_svg(triples)
    labels = re.findall(r'class="edge-label" x="([\d.]+)" y="([\d.]+)"', svg)
    points = [(float(x), float(y)) for x, y in labels]
    assert len(points) == 5
    for i, a in enumerate(points):
        for b in points[i + 1 :]:
            assert math.dist(a, b) >= 25, (a, b)  # apart by more than a line of 12 px text
    assert svg.count('<path class="edge"') == 5 and " Q" in svg  # curved, not stacked


def test_inspect_shows_each_items_origin_in_its_table_and_json(data_dir, capsys, monkeypatch):
    """The robot's own store records the episode and task an item was written from, and no
    robot: the table and the JSON rows show those, and no writer is invented."""
    import json

    monkeypatch.setenv("COLUMNS", "260")
    assert cli_main(["inspect", "--robot", "robot-7", "--home", str(data_dir)]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "drawers open by pulling" in line)
    origin = row.split("│")[-2].strip()  # the last column
    assert origin == "episode e1 · task “find the cup”"
    argv = ["inspect", "--robot", "robot-7", "--home", str(data_dir), "--json"]
    assert cli_main(argv) == 0
    items = {r["text"]: r for r in json.loads(capsys.readouterr().out)["items"]}
    assert set(items) == {"cups are kept in drawers", "drawers open by pulling"}
    for r in items.values():
        assert (r["episode_id"], r["task"]) == ("e1", "find the cup")
        assert r["created_by"] is None and r["updated_by"] is None and r["robots"] is None


def test_a_shared_stores_row_shows_the_robots_that_wrote_it():
    """A fleet's row as the PostgreSQL store reads it (its provenance columns in the item's
    metadata): the JSON row and the table's origin name its writers."""
    import io

    from rich.console import Console

    from robomemory.commands.inspect import item_rows, items_table
    from robomemory.memory.stores.vector_pg import _item

    stored = {"level": "action", "q": 0.3, "visits": 1, "episode_id": "e0", "task": "open it"}
    row = ("p1", "pull the handle", stored, 2, "r1", "r2", ["r1", "r2"])
    pid, text, meta = _item(row)
    (got,) = item_rows([("semantic", pid, text, meta)])
    assert (got["created_by"], got["updated_by"], got["robots"]) == ("r1", "r2", ["r1", "r2"])
    assert (got["episode_id"], got["task"], got["q"]) == ("e0", "open it", 0.3)
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(items_table([("semantic", pid, text, meta)]))
    assert "│ by r1 · last changed by r2 · episode e0 · task “open it” │" in console.export_text()
