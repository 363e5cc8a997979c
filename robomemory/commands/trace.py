"""The JSON trace of a run: the episode result with, per step, what led to the action.

Each trajectory step gets ``plan`` (action strings), ``plan_reason``, ``verdict``
(``{"approve", "reason"}`` or None when the critic did not look), ``rejected`` (plans the critic
turned down before this action), ``summary`` (perceive), ``recalled`` (kind -> chars),
``recall_text`` (kind -> the recalled text, cut; from the episode log), ``recalled_items``
(kind -> the long-term items recalled: id, level, text, Q and origin; from the episode log) and
``map`` (spatial triples added / removed by the update after this action). Keys the graph
already wrote into a step are kept; the recorder only fills what is missing, so a run resumed
from a checkpoint has full detail for the steps played in this process.

The trace's ``map_history`` lists every edge the robot's map held during the run as
``{"subject", "relation", "object", "since", "until"}``: the step whose update added it (None:
held before the run, or before a resumed run's process started; 0: the update before the first
action) and the step whose update
invalidated it (None: held at the end). The run page draws the map from it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from robomemory.commands.progress import action_text

TRACE_VERSION = 4  # 3: recall_text per step, map_history; 4: recalled_items


def _triple_key(t: Any) -> str:
    return f"{t.subject} {t.relation} {t.object}"


def history_entry(t: Any, since: int | None, until: int | None = None) -> dict[str, Any]:
    """A ``map_history`` entry: the triple, the step that added it and the one that removed it."""
    return {
        "subject": t.subject,
        "relation": t.relation,
        "object": t.object,
        "since": since,
        "until": until,
    }


class TraceRecorder:
    """Collects per-step detail from the graph's node updates (``on_event``)."""

    def __init__(self, spatial: Any = None):
        self.spatial = spatial  # a SpatialMemory, to diff the map after each update
        self.steps: dict[int, dict[str, Any]] = {}
        self.pending: dict[str, Any] = {}
        self.plan: list[str] = []
        self.plan_reason = ""
        self.map_changes: dict[int, dict[str, list[str]]] = {}
        self._valid = self._snapshot()
        # every edge held during the run, by key while it is held (map_history)
        self.history: list[dict[str, Any]] = [history_entry(t, None) for t in self._valid.values()]
        self._open = {key: e for key, e in zip(self._valid, self.history, strict=True)}
        self._executed = 0  # steps executed so far

    def _snapshot(self) -> dict[str, Any]:
        if self.spatial is None:
            return {}
        return {_triple_key(t): t for t in self.spatial.triples()}

    def on_event(self, node: str, update: dict[str, Any]) -> None:
        p = self.pending
        if node == "perceive" and "summary" in update:
            p["summary"] = update["summary"]
        if isinstance(update.get("recalled"), dict):
            p.setdefault("recalled", {}).update(
                {k: len(v or "") for k, v in update["recalled"].items()}
            )
        if node == "spatial" and "recalled" in update:
            # the spatial branch perceives the result of the step executed last
            now = self._snapshot()
            if self.spatial is not None:
                added, removed = sorted(now.keys() - self._valid), sorted(self._valid.keys() - now)
                self.map_changes[self._executed] = {"added": added, "removed": removed}
                self._record_history(now, added, removed)
            self._valid = now
        if node == "planner":
            self.plan = [action_text(a) for a in update.get("plan") or []]
            self.plan_reason = update.get("plan_reason", "")
        elif node == "critic":
            verdict = update.get("verdict") or {}
            if verdict.get("approve"):
                p["verdict"] = {"approve": True, "reason": verdict.get("reason", "")}
            else:
                rejected = {"plan": list(self.plan), "reason": verdict.get("reason", "")}
                p.setdefault("rejected", []).append(rejected)
                p["verdict"] = {"approve": False, "reason": verdict.get("reason", "")}
        elif node == "executor":
            for item in update.get("trajectory") or []:
                detail = {"plan": list(self.plan), "plan_reason": self.plan_reason, **p}
                if detail.get("verdict", {}) and not detail["verdict"]["approve"]:
                    detail["verdict"] = None  # the action ran from a new, unchecked plan
                detail.setdefault("verdict", None)
                self.steps[int(item["step"])] = detail
                self._executed = int(item["step"])
            self.pending = {}

    def _record_history(self, now: dict[str, Any], added: list[str], removed: list[str]) -> None:
        for key in removed:
            self._open.pop(key)["until"] = self._executed
        for key in added:
            self._open[key] = history_entry(now[key], self._executed)
            self.history.append(self._open[key])

    def map_history(self) -> list[dict[str, Any]]:
        """Every edge the map held during the run, with the steps that added and removed it."""
        return [dict(e) for e in self.history]

    def enrich(self, trajectory: list[dict]) -> list[dict]:
        """The trajectory with the recorded detail added where a step lacks it."""
        out = []
        for item in trajectory:
            step = int(item.get("step", 0))
            detail = dict(self.steps.get(step, {}))
            if step in self.map_changes:
                detail["map"] = self.map_changes[step]
            out.append({**detail, **item})
        return out


def trace_payload(result: Any, recorder: TraceRecorder | None = None) -> dict[str, Any]:
    """The JSON-able trace of an EpisodeResult (``robomemory show`` renders it)."""
    payload = result.model_dump() | {
        "trace_version": TRACE_VERSION,
        "gc": result.gc,
        "model_calls": result.model_calls,
    }
    if recorder is not None:
        payload["trajectory"] = recorder.enrich(payload["trajectory"])
        if 0 in recorder.map_changes:
            payload["initial_map"] = recorder.map_changes[0]
        if recorder.spatial is not None:
            payload["map_history"] = recorder.map_history()
    return payload


def write_trace(path: Path, payload: dict[str, Any]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, default=str))
    return path
