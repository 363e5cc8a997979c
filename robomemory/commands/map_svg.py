"""The spatial map of a run, drawn as inline SVG for the run page (no script, no dependency).

:func:`map_history` reads from a trace every edge the robot's map held during the run, with the
step whose update added it and the step whose update removed it (the trace's ``map_history``;
an older trace's per-step ``map`` changes are replayed instead, without the map held before the
run). :func:`map_svg` draws the map as it was after a step: the places as boxes on a grid laid
out by the compass facts the robot walked ("kitchen east_of livingroom" puts the kitchen one
cell right of the living room) and joined by them; inside each box what the map places there
(a thing in a thing in the room counts), and the robot where it stands with what it holds.
Edges the step's update added are green, those it removed red and struck out. The grid is laid
out once from the whole history (:func:`grid`), so every step's drawing puts a place where the
final map does. Deterministic: the same trace draws the same picture.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from robomemory.memory.spatial_algorithm import COMPASS
from robomemory.prompts.spatial import PLACEMENT_RELATIONS as PLACING

ROBOT = "I"  # the robot's own vertex (spatial_algorithm.normalize_name)
OFFSETS = {"north": (0, -1), "south": (0, 1), "east": (1, 0), "west": (-1, 0)}
WAYS = {way: OFFSETS[way] for way in COMPASS}
CELL_W, BOX_W, GAP_Y, LINE_H, HEAD_H, PAD = 230, 170, 46, 14, 20, 12
MAX_LINES, MAX_CHARS = 12, 30
Cell = tuple[int, int]


@dataclass(frozen=True)
class Edge:
    """One map edge and when the run's map held it (steps of the run; see the module doc)."""

    subject: str
    relation: str
    object: str
    since: int | None = None  # the step whose update added it; None: held before the run
    until: int | None = None  # the step whose update removed it; None: held at the end

    @property
    def text(self) -> str:
        return f"{self.subject} {self.relation} {self.object}"

    def held_after(self, step: int) -> bool:
        """Whether the map held this edge after ``step``'s update."""
        return (self.since is None or self.since <= step) and (
            self.until is None or self.until > step
        )


def parse_triple(text: str) -> tuple[str, str, str] | None:
    """(subject, relation, object) of "subject relation object" as an older trace wrote it: the
    first word that is a placing relation, "hold" or ends in "_of" splits it (names may have
    spaces, relations in this map rarely do); else the second word."""
    words = str(text).split()
    if len(words) < 3:
        return None
    splits = (w in (*PLACING, "hold") or w.endswith("_of") for w in words[1:-1])
    at = 1 + next((i for i, split in enumerate(splits) if split), 0)
    return " ".join(words[:at]), words[at], " ".join(words[at + 1 :])


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _edge(e: Any) -> Edge | None:
    """A ``map_history`` entry as an Edge; None when it is not one."""
    if not isinstance(e, dict) or not all(e.get(k) for k in ("subject", "relation", "object")):
        return None
    triple = (str(e["subject"]), str(e["relation"]), str(e["object"]))
    return Edge(*triple, _int(e.get("since")), _int(e.get("until")))


def map_history(trace: dict) -> list[Edge]:
    """Every edge the run's map held, in the order the map learnt them."""
    if isinstance(trace.get("map_history"), list):
        return [edge for e in trace["map_history"] if (edge := _edge(e)) is not None]
    changes = [(0, trace.get("initial_map"))] + [
        (_int(item.get("step")) or 0, item.get("map")) for item in trace.get("trajectory") or []
    ]
    out: list[Edge] = []
    held: dict[str, int] = {}  # text -> index in out while held
    for step, change in changes:
        if not isinstance(change, dict):
            continue
        for text in change.get("removed") or []:
            if text in held:
                i = held.pop(text)
                out[i] = Edge(out[i].subject, out[i].relation, out[i].object, out[i].since, step)
            elif parts := parse_triple(text):  # held before the run: the trace began without it
                out.append(Edge(*parts, None, step))
        for text in change.get("added") or []:
            if text not in held and (parts := parse_triple(text)):
                held[text] = len(out)
                out.append(Edge(*parts, step, None))
    return out


def _way(e: Edge) -> Cell | None:
    """The grid offset from the edge's object to its subject for a compass fact, else None."""
    return WAYS.get(e.relation.removesuffix("_of")) if e.relation.endswith("_of") else None


def places(edges: Iterable[Edge]) -> list[str]:
    """The places of the map: where the robot stood and the ends of the ways it walked."""
    out: dict[str, None] = {}
    for e in edges:
        if e.subject == ROBOT and e.relation == "at":
            out[e.object] = None
        elif _way(e) and e.subject != e.object:
            out |= {e.subject: None, e.object: None}
    return list(out)


def _free(want: Cell, taken: set[Cell]) -> Cell:
    """``want`` or the nearest free cell around it (rings outwards, in a fixed order)."""
    for r in range(64):
        ring = [
            (want[0] + dx, want[1] + dy)
            for dy in range(-r, r + 1)
            for dx in range(-r, r + 1)
            if max(abs(dx), abs(dy)) == r
        ]
        ring.sort(key=lambda c: (abs(c[0] - want[0]) + abs(c[1] - want[1]), c[1], c[0]))
        if free := next((c for c in ring if c not in taken), None):
            return free
    return (max(x for x, _ in taken) + 1, 0)


def grid(edges: list[Edge]) -> dict[str, Cell]:
    """A grid cell per place: each way walked is one cell in its direction; a cell taken goes to
    the nearest free one; places no way joins start a new column group to the right."""
    links = [(e.subject, e.object, w) for e in edges if (w := _way(e)) and e.subject != e.object]
    cells: dict[str, Cell] = {}
    for start in places(edges):
        if start in cells:
            continue
        right = max((x for x, _ in cells.values()), default=-1) + 1
        cells[start] = _free((right, 0), set(cells.values()))
        grown = True
        while grown:
            grown = False
            for s, o, (dx, dy) in links:
                if (o in cells) != (s in cells):
                    base, sign, new = (cells[o], 1, s) if o in cells else (cells[s], -1, o)
                    want = (base[0] + sign * dx, base[1] + sign * dy)
                    cells[new] = _free(want, set(cells.values()))
                    grown = True
    if not cells:
        return {}
    x0, y0 = min(x for x, _ in cells.values()), min(y for _, y in cells.values())
    return {n: (x - x0, y - y0) for n, (x, y) in cells.items()}


def _place_of(name: str, holders: dict[str, list[str]], known: set[str]) -> str | None:
    """The place a thing is in, following placing edges up to three holders deep."""
    frontier, seen = [name], {name}
    for _ in range(3):
        frontier = [h for n in frontier for h in holders.get(n, []) if h not in seen]
        if found := next((h for h in frontier if h in known), None):
            return found
        seen |= set(frontier)
    return None


Line = tuple[str, str, str]  # (text, kind: held / added / removed, full text)


def _boxes(shown: list[tuple[Edge, str]], known: set[str]) -> dict[str, list[Line]]:
    """The lines of each place's box (``""``: what no known place holds); ``shown``: (edge,
    kind) for the edges drawn, ``known``: the places drawn."""
    holders: dict[str, list[str]] = {}
    for e, _ in shown:
        if e.relation in PLACING and e.subject != ROBOT:
            holders.setdefault(e.subject, []).append(e.object)
    boxes: dict[str, list[Line]] = {p: [] for p in known}
    at = [
        (kind == "removed", e.object)
        for e, kind in shown
        if (e.subject, e.relation) == (ROBOT, "at")
    ]
    robot_at = [place for _, place in sorted(at, key=lambda a: a[0])]  # where it is, then was
    for e, kind in shown:
        if _way(e) or (e.subject == ROBOT and e.relation == "at"):
            continue
        if e.subject == ROBOT:
            box = robot_at[0] if robot_at else ""
            verb = "holds" if e.relation == "hold" else e.relation
            text = f"robot {verb} {e.object}"
        else:
            box = (
                e.subject
                if e.subject in known
                else _place_of(e.subject, holders, known) or (e.object if e.object in known else "")
            )
            if e.object == box:
                text = e.subject if e.relation == "in" else f"{e.subject} ({e.relation})"
            else:
                text = e.text
        boxes.setdefault(box, []).append((text, kind, e.text))
    for e, kind in reversed(shown):  # the robot first: where it is, then what it holds
        if e.subject == ROBOT and e.relation == "at":
            line = ("● robot is here" if kind != "removed" else "robot left", kind, e.text)
            boxes.setdefault(e.object, []).insert(0, line)
    for lines in boxes.values():
        lines.sort(key=lambda line: not line[2].startswith(f"{ROBOT} "))  # names are lower case
    return boxes


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"


COLOURS = {"held": "#333", "added": "#1e7b34", "removed": "#b0281a"}


def _box_svg(name: str, lines: list[Line], x: float, y: float, h: float, here: bool) -> str:
    esc = html.escape
    title = name or "not placed in a known room"
    stroke = 'stroke="#2f6fb0" stroke-width="2.5"' if here else 'stroke="#999"'
    out = [
        f'<g class="place" data-place="{esc(name)}"><title>{esc(title)}</title>'
        f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{h}" rx="6" fill="#fffdf5" {stroke}/>'
        f'<text x="{x + 8}" y="{y + 15}" font-weight="bold">{esc(_cut(title))}</text>'
    ]
    for i, (text, kind, full) in enumerate(lines[:MAX_LINES]):
        strike = ' text-decoration="line-through"' if kind == "removed" else ""
        mark = {"added": "+ ", "removed": "− "}.get(kind, "")
        weight = ' font-weight="bold"' if kind == "added" else ""
        out.append(
            f'<text class="{kind}" x="{x + 10}" y="{y + HEAD_H + 12 + i * LINE_H}" '
            f'fill="{COLOURS[kind]}"{strike}{weight}><title>{esc(full)}</title>'
            f"{esc(mark + _cut(text))}</text>"
        )
    if len(lines) > MAX_LINES:
        rest = "; ".join(full for _, _, full in lines[MAX_LINES:])
        out.append(
            f'<text x="{x + 10}" y="{y + HEAD_H + 12 + MAX_LINES * LINE_H}" fill="#777">'
            f"<title>{esc(rest)}</title>+ {len(lines) - MAX_LINES} more</text>"
        )
    return "".join(out) + "</g>"


def _clip(cx: float, cy: float, dx: float, dy: float, w: float, h: float) -> tuple[float, float]:
    """Where the ray from a box's centre (cx, cy) along (dx, dy) leaves the w x h box."""
    t = min(w / 2 / abs(dx) if dx else 1e9, h / 2 / abs(dy) if dy else 1e9)
    return round(cx + dx * t, 1), round(cy + dy * t, 1)


def _box_h(lines: list[Line]) -> int:
    return HEAD_H + 10 + LINE_H * min(len(lines), MAX_LINES + 1)


Rect = tuple[float, float, float]  # x, y (top left), height; every box is BOX_W wide


def _way_svg(group: list[tuple[Edge, str]], a: Rect, b: Rect) -> str:
    """The compass facts between two places as one labelled line from box rim to box rim."""
    ca = (a[0] + BOX_W / 2, a[1] + a[2] / 2)
    cb = (b[0] + BOX_W / 2, b[1] + b[2] / 2)
    dx, dy = cb[0] - ca[0], cb[1] - ca[1]
    x1, y1 = _clip(*ca, dx, dy, BOX_W, a[2])
    x2, y2 = _clip(*cb, -dx, -dy, BOX_W, b[2])
    kinds = {k for _, k in group}
    kind = "added" if "added" in kinds else ("held" if "held" in kinds else "removed")
    style = f'stroke-width="{1.5 if kind == "held" else 3}"'
    style += ' stroke-dasharray="6,4"' if kind == "removed" else ""
    label = " / ".join(dict.fromkeys(e.relation for e, _ in group))
    full = "; ".join(e.text for e, _ in group)
    return (
        f'<g class="way {kind}"><title>{html.escape(full)}</title>'
        f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{COLOURS[kind]}" '
        f'{style}/><text x="{(x1 + x2) / 2:.1f}" y="{(y1 + y2) / 2 - 3:.1f}" '
        f'text-anchor="middle" fill="{COLOURS[kind]}" stroke="white" stroke-width="3" '
        f'paint-order="stroke">{html.escape(label)}</text></g>'
    )


def _rects(boxes: dict[str, list[Line]], cells: dict[str, Cell]) -> dict[str, Rect]:
    """Each place's box: its grid cell's column, its row stacked below the rows above; the
    boxes of a row are as tall as its fullest."""
    rows = sorted({cells[p][1] for p in boxes})
    x0 = min(cells[p][0] for p in boxes)
    row_h = {r: max(_box_h(lines) for p, lines in boxes.items() if cells[p][1] == r) for r in rows}
    row_y, y = {}, PAD
    for r in rows:
        row_y[r], y = y, y + row_h[r] + GAP_Y
    return {
        p: (PAD + (cells[p][0] - x0) * CELL_W, row_y[cells[p][1]], row_h[cells[p][1]])
        for p in boxes
    }


def map_svg(edges: list[Edge], cells: dict[str, Cell], step: int, *, changes: bool = True) -> str:
    """The map after ``step``'s update as an ``<svg>`` element; ``changes``: mark what that
    update added and removed. Empty when the map held nothing then."""
    shown = [(e, "held") for e in edges if e.held_after(step)]
    if changes:
        shown = [(e, "added" if e.since == step else k) for e, k in shown]
        shown += [(e, "removed") for e in edges if e.until == step]
    if not shown:
        return ""
    known = [p for p in places(e for e, _ in shown) if p in cells]
    boxes = _boxes(shown, set(known))
    loose = [line for p in list(boxes) if p not in known for line in boxes.pop(p)]
    here = {
        e.object for e, k in shown if e.subject == ROBOT and e.relation == "at" and k != "removed"
    }
    rects = _rects(boxes, cells) if boxes else {}
    pairs: dict[tuple[str, str], list[tuple[Edge, str]]] = {}
    for e, kind in shown:
        if _way(e) and e.subject in rects and e.object in rects and e.subject != e.object:
            pairs.setdefault(tuple(sorted((e.subject, e.object))), []).append((e, kind))
    parts = [_way_svg(group, rects[a], rects[b]) for (a, b), group in pairs.items()]
    parts += [_box_svg(p, boxes[p], *rects[p], p in here) for p in known]
    width = max((x + BOX_W + PAD for x, _, _ in rects.values()), default=0)
    height = max((y + h + PAD for _, y, h in rects.values()), default=0)
    if loose:
        y = height + GAP_Y - PAD if rects else PAD
        parts.append(_box_svg("", loose, PAD, y, _box_h(loose), False))
        width, height = max(width, BOX_W + 2 * PAD), y + _box_h(loose) + PAD
    return (
        f'<svg class="map" width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} '
        f'{height:.0f}" xmlns="http://www.w3.org/2000/svg" font-family="sans-serif" '
        f'font-size="11">{"".join(parts)}</svg>'
    )
