"""A run as one self-contained HTML page (inline CSS and SVG, no scripts, no downloads).

Header: task, outcome, GC, cost. A score chart. Then one card per step: the action, its result
and score; what led to it (perceived summary, plan with the current action marked, the plan's
reason, critic verdict, plans the critic rejected, the model calls made for it: each one's
prompt, answer, tokens and seconds, folded); what each memory recalled for it (its size,
its text folded in ``<details>``, and each long-term item recalled by its text, Q and origin:
the robot that wrote it, the episode and task it came from, as far as its store records them),
the candidate actions, and how the spatial map changed: the edges added and removed, and,
folded, the map after the step drawn with them marked. After the steps, the spatial map at
the end of the run (:mod:`~robomemory.commands.map_svg`). Keys a trace lacks are left out of
its card: an older trace without ``recall_text`` shows sizes only,
one without ``recalled_items`` no item list, one without ``map_history`` draws the map from its
per-step changes.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from robomemory.commands.map_svg import Edge, grid, map_history, map_svg
from robomemory.core import clip

CSS = """
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px}
.task{color:#444;margin-bottom:12px}
.cards{display:flex;gap:10px;flex-wrap:wrap}
.card{border:1px solid #ddd;border-radius:6px;padding:6px 12px;min-width:90px}
.card b{display:block;font-size:18px}
.card span{font-size:12px;color:#666}
table.usage{border-collapse:collapse;font-size:13px}
table.usage td,table.usage th{padding:2px 10px;border-bottom:1px solid #eee;text-align:right}
table.usage td:first-child,table.usage th:first-child{text-align:left}
section.step{border:1px solid #ddd;border-left:5px solid #aaa;border-radius:6px;
  padding:8px 14px;margin:12px 0}
section.step.succeeded{border-left-color:#3a9d4a} section.step.failed{border-left-color:#d9822b}
section.step.rejected{border-left-color:#c0392b}
.step h3{font-size:15px;margin:2px 0 6px} .step h3 code{font-size:15px}
.badge{display:inline-block;font-size:11px;border-radius:9px;padding:1px 8px;margin-left:6px;
  background:#eee;color:#333;vertical-align:middle}
.badge.ok{background:#dff3e2;color:#1e6b2c} .badge.no{background:#fbe0dc;color:#a02818}
.badge.warn{background:#fff0cc;color:#8a5a00}
.msg{white-space:pre-wrap;background:#f7f7f7;border-radius:4px;padding:6px 8px;font-size:13px}
.cols{display:grid;grid-template-columns:3fr 2fr;gap:16px;margin-top:8px;font-size:13px}
.label{font-weight:600;color:#555;margin-top:6px}
ol.plan{margin:2px 0;padding-left:22px} ol.plan li.now{font-weight:700}
.reason{color:#555;font-style:italic}
.bar{display:flex;align-items:center;gap:6px} .bar i{display:inline-block;height:8px;
  background:#7aa6d6;border-radius:2px} .bar span{width:70px;color:#555}
.add{color:#1e6b2c} .del{color:#a02818;text-decoration:line-through}
details{margin-top:4px} summary{cursor:pointer;color:#555}
details.recall{margin-top:1px} details.recall summary{display:list-item}
details.recall pre{margin:2px 0 6px;max-height:320px;overflow:auto}
.recall .bar{display:inline-flex} .cut{font-size:11px;color:#888}
ul.items{margin:1px 0 6px;padding-left:18px} ul.items .q{font-family:monospace;color:#2f6fb0}
ul.items .origin{font-size:11px;color:#777}
svg.map{max-width:100%;height:auto;border:1px solid #eee;border-radius:4px;background:#fff}
.legend{font-size:12px;color:#666}
"""


def esc(value: Any) -> str:
    return html.escape(str(value if value is not None else ""))


def _num(value: Any) -> str:
    return f"{value:g}" if isinstance(value, int | float) else "–"


def score_chart(trajectory: list[dict], max_score: float | None) -> str:
    """An inline SVG line of the score after each step."""
    points = [
        (int(t["step"]), t["score"]) for t in trajectory if isinstance(t.get("score"), int | float)
    ]
    if not points:
        return ""
    w, h, pad = 640, 140, 30
    top = max([p[1] for p in points] + [max_score or 0, 1])
    last = max(p[0] for p in points) or 1

    def xy(step: int, score: float) -> str:
        return (
            f"{pad + step / last * (w - 2 * pad):.1f},{h - pad - score / top * (h - 2 * pad):.1f}"
        )

    line = " ".join(xy(s, v) for s, v in points)
    dots = "".join(
        f'<circle cx="{xy(s, v).split(",")[0]}" cy="{xy(s, v).split(",")[1]}" r="3" '
        f'fill="#2f6fb0"><title>step {s}: score {v:g}</title></circle>'
        for s, v in points
    )
    return (
        f'<svg class="score" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        'xmlns="http://www.w3.org/2000/svg" font-size="11">'
        f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="#bbb"/>'
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="#bbb"/>'
        f'<text x="{pad - 4}" y="{pad + 4}" text-anchor="end">{top:g}</text>'
        f'<text x="{pad - 4}" y="{h - pad + 4}" text-anchor="end">0</text>'
        f'<text x="{w - pad}" y="{h - 8}" text-anchor="end">step {last}</text>'
        f'<polyline points="{line}" fill="none" stroke="#2f6fb0" stroke-width="2"/>{dots}</svg>'
    )


def _header(trace: dict) -> str:
    gc = trace.get("gc")
    score = f"{_num(trace.get('score'))} / {_num(trace.get('max_score'))}"
    outcome = "success" if trace.get("success") else (trace.get("end_reason") or "stopped")
    usage = trace.get("usage") or {}
    tokens = sum(
        int(u.get("prompt_tokens", 0) + u.get("completion_tokens", 0)) for u in usage.values()
    )
    calls = trace.get("model_calls", sum(int(u.get("calls", 0)) for u in usage.values()))
    cards = [
        ("outcome", outcome),
        ("score", score),
        ("GC", "–" if gc is None else f"{gc:.2f}"),
        ("steps", trace.get("steps", len(trace.get("trajectory") or []))),
        ("model calls", calls),
        ("tokens", f"{tokens:,}"),
        ("wall", f"{float(trace.get('wall_s') or 0):.0f} s"),
    ]
    body = "".join(
        f'<div class="card"><b>{esc(v)}</b><span>{esc(k)}</span></div>' for k, v in cards
    )
    return (
        f"<h1>Run {esc(trace.get('thread_id', ''))}</h1>"
        f'<div class="task">{esc(trace.get("task", ""))}</div><div class="cards">{body}</div>'
    )


def _usage(usage: dict[str, dict]) -> str:
    if not usage:
        return ""
    rows = "".join(
        f"<tr><td>{esc(node)}</td><td>{int(u.get('runs', 0))}</td><td>{int(u.get('calls', 0))}"
        f"</td><td>{float(u.get('wall_s', 0)):.1f}</td>"
        f"<td>{float(u.get('wall_s', 0)) / max(int(u.get('runs', 0)), 1):.2f}</td></tr>"
        for node, u in sorted(usage.items(), key=lambda kv: -float(kv[1].get("wall_s", 0)))
    )
    return (
        '<h2>Time by node</h2><table class="usage"><tr><th>node</th><th>runs</th><th>calls</th>'
        f"<th>wall s</th><th>s/run</th></tr>{rows}</table>"
    )


def _plan(item: dict) -> str:
    plan = item.get("plan")
    if not plan:
        return ""
    now = str(item.get("action", ""))
    marked = False
    lis = []
    for a in plan:
        here = not marked and str(a) == now
        marked = marked or here
        lis.append(f"<li{' class=now' if here else ''}>{esc(a)}</li>")
    out = f'<div class="label">plan</div><ol class="plan">{"".join(lis)}</ol>'
    if item.get("plan_reason"):
        out += f'<div class="reason">{esc(item["plan_reason"])}</div>'
    return out


def _critic(item: dict) -> str:
    out = ""
    for r in item.get("rejected") or []:
        plan = " → ".join(esc(a) for a in r.get("plan") or [])
        out += (
            '<div class="critic rejected"><span class="badge no">critic rejected</span> '
            f'<code>{plan}</code><div class="reason">{esc(r.get("reason", ""))}</div></div>'
        )
    if "verdict" not in item:
        return out
    v = item.get("verdict")
    if v is None:
        text = '<span class="badge">critic did not check</span> (a new plan starts unchecked)'
    else:
        ok = bool(v.get("approve"))
        badge = (
            '<span class="badge ok">critic approved</span>'
            if ok
            else ('<span class="badge no">critic rejected</span>')
        )
        text = f'{badge} <span class="reason">{esc(v.get("reason", ""))}</span>'
    return out + f'<div class="critic">{text}</div>'


def origin_line(origin: dict[str, Any]) -> str:
    """An item's provenance in words ("by robot-a · episode e1 · task “find the cup”"): only
    the fields its store recorded (a robot's own store names no robot)."""
    created, updated = origin.get("created_by"), origin.get("updated_by")
    robots = origin.get("robots") if isinstance(origin.get("robots"), list) else []
    others = [str(r) for r in robots if r not in (created, updated)]
    parts = [
        f"by {created}" if created else "",
        f"last changed by {updated}" if updated and updated != created else "",
        f"also written by {', '.join(others)}" if others else "",
        f"episode {origin['episode_id']}" if origin.get("episode_id") else "",
        f"task “{clip(str(origin['task']), 120)}”" if origin.get("task") else "",
    ]
    return " · ".join(p for p in parts if p)


def _items(kind: str, items: Any) -> str:
    """The long-term items a memory recalled this step: each by its text, with its level, the
    Q that ranked it and where it came from (its id only as an attribute)."""
    rows = []
    for it in items if isinstance(items, list) else []:
        if not isinstance(it, dict):
            continue
        q = f'<span class="q">Q {float(it["q"]):.2f}</span> ' if _is_num(it.get("q")) else ""
        level = f'<span class="badge">{esc(it["level"])}</span> ' if it.get("level") else ""
        origin = origin_line(it.get("origin") or {})
        where = f'<div class="origin">{esc(origin)}</div>' if origin else ""
        rows.append(
            f'<li data-item="{esc(it.get("id"))}">{q}{level}{esc(it.get("text"))}{where}</li>'
        )
    return f'<ul class="items" data-memory="{esc(kind)}">{"".join(rows)}</ul>' if rows else ""


def _is_num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _recalled(item: dict) -> str:
    """Each memory's recalled size as a bar, where the trace keeps it its text folded, and the
    long-term items it recalled this step by their text, Q and origin."""
    sizes = item.get("recalled") if isinstance(item.get("recalled"), dict) else {}
    texts = item.get("recall_text") if isinstance(item.get("recall_text"), dict) else {}
    recalled = item.get("recalled_items")
    listed = recalled if isinstance(recalled, dict) else {}
    sizes = {k: int(sizes.get(k, len(texts.get(k) or ""))) for k in {**sizes, **texts}}
    if not sizes:
        return ""
    top = max(max(sizes.values()), 1)
    rows = []
    for k, n in sizes.items():
        bar = (
            f'<span class="bar"><span>{esc(k)}</span> <i style="width:{int(120 * n / top)}px">'
            f"</i> {n} chars</span>"
        )
        text = texts.get(k)
        if not isinstance(text, str) or not text.strip():
            rows.append(f"<div>{bar}</div>{_items(k, listed.get(k))}")
            continue
        cut = f'<div class="cut">the first {len(text):,} of {n:,} characters</div>'
        rows.append(
            f'<details class="recall" data-memory="{esc(k)}"><summary>{bar}</summary>'
            f'<pre class="msg">{esc(text)}</pre>{cut if n > len(text) else ""}</details>'
            f"{_items(k, listed.get(k))}"
        )
    return f'<div class="label">memory recalled</div><div class="recalled">{"".join(rows)}</div>'


def _memory(item: dict, spatial: dict | None) -> str:
    out = _recalled(item)
    change = item.get("map")
    if isinstance(change, dict):
        added = "".join(f'<div class="add">+ {esc(t)}</div>' for t in change.get("added", []))
        removed = "".join(f'<div class="del">− {esc(t)}</div>' for t in change.get("removed", []))
        body = added + removed or "<div>no change</div>"
        out += (
            f'<div class="label">spatial map after this action</div><div class="map">{body}</div>'
        )
    if spatial:
        out += (
            f'<div class="stats">KG {spatial.get("vertices", 0)} nodes, '
            f"{spatial.get('edges', 0)} edges; {spatial.get('new_edges', 0)} new, "
            f"{spatial.get('ops_applied', 0)} ops applied, "
            f"{spatial.get('ops_rejected', 0)} rejected</div>"
        )
    candidates = item.get("candidates")
    if candidates:
        rows = (item.get("placed") or [])[: len(candidates)]  # the table's row, if it ordered
        rows = [*rows, *[""] * (len(candidates) - len(rows))]
        lis = "".join(
            f"<li>{esc(c)}{f' <em>{esc(r)}</em>' if r else ''}</li>"
            for c, r in zip(candidates, rows, strict=True)
        )
        out += (
            f'<details class="candidates"><summary>{len(candidates)} candidate actions offered'
            f"</summary><ul>{lis}</ul></details>"
        )
    return out


def _calls(item: dict) -> str:
    """The step's model calls, folded: each one's node, answer schema, tokens and seconds in
    its summary; its prompt (system, then user) and its answer inside."""
    calls = [c for c in item.get("calls") or [] if isinstance(c, dict)]
    if not calls:
        return ""
    rows = []
    for c in calls:
        cost = (
            "reused, no model call"
            if c.get("reused")
            else f"{c.get('prompt_tokens', 0)} prompt tokens ({c.get('cached_tokens', 0)} "
            f"cached), {c.get('completion_tokens', 0)} written, {_num(c.get('seconds'))} s"
        )
        flag = "" if c.get("parsed", True) else ' <span class="badge no">unparsed</span>'
        prompt = "\n\n".join(str(c[k]) for k in ("system", "user") if c.get(k))
        shown = f'<pre class="msg">{esc(prompt)}</pre>' if prompt else ""
        rows.append(
            f'<details class="call" data-node="{esc(c.get("node"))}"><summary>'
            f"<code>{esc(c.get('node'))}</code> → {esc(c.get('schema'))}: {cost}{flag}"
            f'</summary>{shown}<div class="label">answer</div>'
            f'<pre class="msg">{esc(c.get("answer", ""))}</pre></details>'
        )
    tokens = sum(int(c.get("prompt_tokens", 0)) + int(c.get("completion_tokens", 0)) for c in calls)
    return (
        f'<details class="calls"><summary>{len(calls)} model call{"s" * (len(calls) != 1)}, '
        f"{tokens} tokens</summary>{''.join(rows)}</details>"
    )


def _step_map(edges: list[Edge], cells: dict, step: int) -> str:
    """The map after this step, folded, with what its update changed marked."""
    added = sum(e.since == step for e in edges)
    removed = sum(e.until == step for e in edges)
    svg = map_svg(edges, cells, step) if added or removed else ""
    if not svg:
        return ""
    return (
        f'<details class="stepmap"><summary>the spatial map after this step (+{added} '
        f"−{removed}: green added, red struck out removed)</summary>{svg}</details>"
    )


def _step(item: dict, previous: dict | None, spatial: dict | None, step_map: str = "") -> str:
    outcome = str(item.get("outcome", ""))
    verdict = item.get("verdict")
    rejected = bool(item.get("rejected")) or (
        isinstance(verdict, dict) and not verdict.get("approve")
    )
    classes = " ".join(c for c in ("step", outcome, "rejected" if rejected else "") if c)
    badges = (
        f'<span class="badge {"ok" if outcome == "succeeded" else "warn"}">{esc(outcome)}</span>'
    )
    if previous is not None and previous.get("action") == item.get("action"):
        badges += '<span class="badge warn">same action as the step before</span>'
    score = f'<span class="badge">score {_num(item.get("score"))}</span>'
    summary = (
        f'<div class="label">perceived</div><div class="summary">{esc(item["summary"])}</div>'
        if item.get("summary")
        else ""
    )
    step, action = esc(item.get("step")), esc(item.get("action"))
    return (
        f'<section class="{classes}" id="step-{step}" data-step="{step}" '
        f'data-outcome="{esc(outcome)}">'
        f"<h3>Step {step}: <code>{action}</code>{badges}{score}</h3>"
        f'<div class="msg">{esc(item.get("message", ""))}</div>'
        f'<div class="cols"><div class="why">{summary}{_plan(item)}{_critic(item)}'
        f"{_calls(item)}</div>"
        f'<div class="memory">{_memory(item, spatial)}</div></div>{step_map}</section>'
    )


def _spatial_by_step(trace: dict) -> dict[int, dict]:
    """The spatial update statistics by the step they follow: the episode log keeps one per
    update in step order, the first before step 1; their own ``step`` is the store's, which
    counts on across a robot's tasks."""
    return dict(enumerate(s for s in trace.get("spatial_stats") or [] if isinstance(s, dict)))


def _final_map(trace: dict, edges: list[Edge], cells: dict, last: int) -> str:
    svg = map_svg(edges, cells, last, changes=False)
    if not svg:
        return ""
    held = sum(e.held_after(last) for e in edges)
    note = (
        ""
        if "map_history" in trace
        else " Drawn from the per-step changes: the map held before the run is not in this trace."
    )
    return (
        f'<h2>Spatial map at the end</h2><div class="legend">{held} edges. Places are boxes '
        "laid out by the ways the robot walked (each compass fact one cell that way); a box "
        "lists what the map places there; the blue box is where the robot is."
        f"{note}</div>{svg}"
    )


MAX_STEP_MAPS = 300  # steps drawn with their map; later ones keep the list of changes


def render_page(trace: dict) -> str:
    """The whole page for a trace dict (as written by ``robomemory run``)."""
    trajectory = list(trace.get("trajectory") or [])
    spatial = _spatial_by_step(trace)
    edges = map_history(trace)
    cells = grid(edges)
    cards = []
    for i, item in enumerate(trajectory):
        step = int(item.get("step", 0))
        drawn = _step_map(edges, cells, step) if i < MAX_STEP_MAPS else ""
        cards.append(_step(item, trajectory[i - 1] if i else None, spatial.get(step), drawn))
    steps = "".join(cards)
    initial = trace.get("initial_map") or {}
    first_map = ""
    if initial.get("added"):
        rows = "".join(f'<div class="add">+ {esc(t)}</div>' for t in initial["added"])
        first_map = f'<h2>Spatial map at the start</h2><div class="map initial">{rows}</div>'
    last = max([int(t.get("step", 0)) for t in trajectory] + [0])
    consolidation = trace.get("consolidation") or {}
    tail = _final_map(trace, edges, cells, last)
    if consolidation:
        tail += (
            "<h2>Consolidation</h2><details open><summary>long-term memory written at the end"
            f'</summary><pre class="msg">{esc(json.dumps(consolidation, indent=1))}</pre></details>'
        )
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>Run {esc(trace.get('thread_id', ''))}</title><style>{CSS}</style></head><body>"
        f"{_header(trace)}<h2>Score</h2>{score_chart(trajectory, trace.get('max_score'))}"
        f"{_usage(trace.get('usage') or {})}{first_map}<h2>Steps</h2>"
        f"{steps or '<p>no steps</p>'}{tail}</body></html>"
    )


def write_page(trace: dict, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_page(trace), encoding="utf-8")
    return path
