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
    for i, (u, v, data) in enumerate(g.edges(data=True)):
        (x1, y1), (x2, y2) = pos[u], pos[v]
        dx, dy = x2 - x1, y2 - y1
        dist = math.hypot(dx, dy) or 1.0
        ex, ey = x2 - dx / dist * 18, y2 - dy / dist * 18  # stop at the node's rim
        style = 'stroke="#333"' if data["valid"] else 'stroke="#aaa" stroke-dasharray="5,4"'
        offset = (i % 3 - 1) * 8  # separate labels of parallel edges
        label = data["relation"] if data["valid"] else f"{data['relation']} (until {data['until']})"
        parts.append(
            f'<line x1="{x1}" y1="{y1}" x2="{ex:.1f}" y2="{ey:.1f}" {style} '
            'marker-end="url(#arrow)"/>'
        )
        parts.append(
            f'<text x="{(x1 + x2) / 2:.1f}" y="{(y1 + y2) / 2 + offset:.1f}" '
            f'fill="{"#036" if data["valid"] else "#999"}">{html.escape(label)}</text>'
        )
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

    g = build_graph(triples)
    pos = layout(g)
    fig, ax = plt.subplots(figsize=(WIDTH / 100, HEIGHT / 100), dpi=100)
    ax.set_title(title)
    ax.invert_yaxis()
    ax.axis("off")
    for u, v, data in g.edges(data=True):
        (x1, y1), (x2, y2) = pos[u], pos[v]
        ax.annotate(
            "",
            xy=(x2, y2),
            xytext=(x1, y1),
            arrowprops={
                "arrowstyle": "->",
                "color": "#333" if data["valid"] else "#aaa",
                "linestyle": "-" if data["valid"] else "--",
                "shrinkB": 12,
            },
        )
        ax.text(
            (x1 + x2) / 2,
            (y1 + y2) / 2,
            data["relation"],
            fontsize=8,
            color="#036" if data["valid"] else "#999",
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
