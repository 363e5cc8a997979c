"""Drawings of a spatial KG for ``robomemory inspect``: a self-contained HTML page (inline SVG,
no dependency beyond networkx) or a PNG (matplotlib, the ``viz`` extra). Valid edges are solid;
invalidated ones (the graph's history) are dashed grey."""

from __future__ import annotations

import html
import math
from pathlib import Path

import networkx as nx

from robomemory.memory.base import Triple

WIDTH, HEIGHT, MARGIN = 960, 720, 70


def build_graph(triples: list[Triple]) -> nx.MultiDiGraph:
    """A networkx multigraph of the triples (edge attributes: relation, valid, steps)."""
    g = nx.MultiDiGraph()
    for t in triples:
        g.add_edge(
            t.subject,
            t.object,
            relation=t.relation,
            valid=t.valid,
            since=t.valid_from_step,
            until=t.invalidated_at_step,
        )
    return g


def layout(g: nx.MultiDiGraph, seed: int = 7) -> dict[str, tuple[float, float]]:
    """Node positions in pixels (spring layout, fixed seed so drawings are reproducible)."""
    if g.number_of_nodes() == 0:
        return {}
    pos = nx.spring_layout(nx.Graph(g), seed=seed)
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    span_x = (max(xs) - min(xs)) or 1.0
    span_y = (max(ys) - min(ys)) or 1.0

    def scale(x: float, y: float) -> tuple[float, float]:
        px = MARGIN + (x - min(xs)) / span_x * (WIDTH - 2 * MARGIN)
        py = MARGIN + (y - min(ys)) / span_y * (HEIGHT - 2 * MARGIN)
        return round(px, 1), round(py, 1)

    return {n: scale(float(p[0]), float(p[1])) for n, p in pos.items()}


SPREAD = 34  # px between the apexes of parallel edges
Point = tuple[float, float]


def _unit(dx: float, dy: float) -> Point:
    d = math.hypot(dx, dy) or 1.0
    return dx / d, dy / d


def edge_curves(
    g: nx.MultiDiGraph, pos: dict[str, Point]
) -> list[tuple[dict, Point, Point, Point, Point]]:
    """Each edge as a quadratic curve: (data, start, control, end, label point).

    Edges between the same two nodes (either direction) fan out to both sides of the straight
    line, so their arrows and labels never lie on top of each other; a lone edge is straight.
    Start and end stop at the node circles' rims.
    """
    groups: dict[tuple[str, str], list[tuple[str, str, dict]]] = {}
    for u, v, data in g.edges(data=True):
        groups.setdefault(tuple(sorted((u, v))), []).append((u, v, data))
    out = []
    for (a, b), edges in groups.items():
        (ax, ay), (bx, by) = pos[a], pos[b]
        nx_, ny_ = _unit(-(by - ay), bx - ax) if (a != b) else (0.0, -1.0)
        k = len(edges)
        for i, (u, v, data) in enumerate(edges):
            h = (i - (k - 1) / 2) * SPREAD if a != b else SPREAD * (i + 1)
            (x1, y1), (x2, y2) = pos[u], pos[v]
            mx, my = (x1 + x2) / 2, (y1 + y2) / 2
            cx, cy = mx + 2 * h * nx_, my + 2 * h * ny_
            sx, sy = _unit(cx - x1, cy - y1)
            ex, ey = _unit(x2 - cx, y2 - cy)
            start = (round(x1 + sx * 16, 1), round(y1 + sy * 16, 1))
            end = (round(x2 - ex * 18, 1), round(y2 - ey * 18, 1))
            label = (round(mx + h * nx_, 1), round(my + h * ny_, 1))
            out.append((data, start, (round(cx, 1), round(cy, 1)), end, label))
    return out


def edge_label(data: dict) -> str:
    return data["relation"] if data["valid"] else f"{data['relation']} (until {data['until']})"


def to_svg(triples: list[Triple], title: str = "") -> str:
    """The graph as an SVG document string."""
    g = build_graph(triples)
    pos = layout(g)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" '
        'markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#555"/></marker></defs>',
        f'<text x="10" y="20" font-size="14">{html.escape(title)}</text>',
    ]
    labels = []
    for data, (x1, y1), (cx, cy), (x2, y2), (lx, ly) in edge_curves(g, pos):
        style = 'stroke="#333"' if data["valid"] else 'stroke="#aaa" stroke-dasharray="5,4"'
        parts.append(
            f'<path class="edge" d="M{x1},{y1} Q{cx},{cy} {x2},{y2}" fill="none" {style} '
            'marker-end="url(#arrow)"/>'
        )
        labels.append(
            f'<text class="edge-label" x="{lx}" y="{ly + 4}" text-anchor="middle" '
            'stroke="white" stroke-width="3" paint-order="stroke" '
            f'fill="{"#036" if data["valid"] else "#999"}">{html.escape(edge_label(data))}</text>'
        )
    parts += labels  # labels over every edge line
    for node, (x, y) in pos.items():
        parts.append(f'<circle cx="{x}" cy="{y}" r="16" fill="#fde9b5" stroke="#b8860b"/>')
        parts.append(f'<text x="{x}" y="{y + 30}" text-anchor="middle">{html.escape(node)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def write_html(triples: list[Triple], path: Path, title: str) -> Path:
    """A self-contained page: the SVG drawing and the triples as a table."""
    rows = "\n".join(
        f"<tr><td>{html.escape(t.subject)}</td><td>{html.escape(t.relation)}</td>"
        f"<td>{html.escape(t.object)}</td><td>{t.valid_from_step}</td>"
        f"<td>{'' if t.valid else t.invalidated_at_step}</td></tr>"
        for t in triples
    )
    page = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        "<style>body{font-family:sans-serif}td,th{padding:2px 8px;border-bottom:1px solid #ddd}"
        "</style></head><body>"
        f"<h2>{html.escape(title)}</h2>{to_svg(triples)}"
        "<table><tr><th>subject</th><th>relation</th><th>object</th><th>from step</th>"
        f"<th>invalidated at</th></tr>{rows}</table></body></html>"
    )
    path = Path(path)
    path.write_text(page, encoding="utf-8")
    return path


def write_png(triples: list[Triple], path: Path, title: str) -> Path:
    """The drawing as a PNG (needs matplotlib: ``pip install robomemory[viz]``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch
    from matplotlib.path import Path as MplPath

    g = build_graph(triples)
    pos = layout(g)
    fig, ax = plt.subplots(figsize=(WIDTH / 100, HEIGHT / 100), dpi=100)
    ax.set_title(title)
    ax.set_xlim(0, WIDTH)
    ax.set_ylim(HEIGHT, 0)  # y down, as in the SVG
    ax.axis("off")
    for data, start, control, end, (lx, ly) in edge_curves(g, pos):
        curve = MplPath([start, control, end], [MplPath.MOVETO, MplPath.CURVE3, MplPath.CURVE3])
        ax.add_patch(
            FancyArrowPatch(
                path=curve,
                arrowstyle="->",
                mutation_scale=12,
                color="#333" if data["valid"] else "#aaa",
                linestyle="-" if data["valid"] else "--",
            )
        )
        ax.text(
            lx,
            ly,
            edge_label(data),
            fontsize=8,
            ha="center",
            va="center",
            color="#036" if data["valid"] else "#999",
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 1, "alpha": 0.8},
            zorder=4,
        )
    for node, (x, y) in pos.items():
        ax.scatter([x], [y], s=300, c="#fde9b5", edgecolors="#b8860b", zorder=3)
        ax.text(x, y + 22, node, ha="center", fontsize=9)
    if not pos:
        ax.text(0.5, 0.5, "(empty graph)", ha="center", transform=ax.transAxes)
    path = Path(path)
    fig.savefig(path)
    plt.close(fig)
    return path
