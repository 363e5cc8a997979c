"""MemRL: two-phase value-aware retrieval and the Monte-Carlo Q update, after
"MemRL: Self-Evolving Agents via Runtime Reinforcement Learning on Episodic Memory".

Every long-term item carries an intent embedding z (the task it was learned from, a named
vector of its Qdrant point), a utility Q and a visit count in its payload.

- Phase A (similarity recall): candidates with cosine ≥ δ, top-k1 by similarity.
- Phase B (value-aware selection): score = (1−λ)·ẑ(sim) + λ·ẑ(Q), z-scores taken within the
  candidate pool; top-k2 by score. λ = 0 is plain similarity ranking.
- Update at task end, for every item retrieved during the task: Q ← Q + α(r − Q), visits + 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from robomemory.config import UtilityConfig

Q_LOG_LEN = 64  # episodes remembered per item so a replayed Q update is applied once


@dataclass
class Candidate:
    """A long-term item seen by retrieval: its similarity to the request and its payload."""

    id: str
    text: str
    meta: dict = field(default_factory=dict)
    sim: float = 0.0
    score: float = 0.0

    def q(self, q_init: float = 0.0) -> float:
        return float(self.meta.get("q", q_init))


def zscore(values: Sequence[float]) -> np.ndarray:
    """Standardize within the pool; a constant pool maps to zeros."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return arr
    std = arr.std()
    if std < 1e-12:
        return np.zeros_like(arr)
    return (arr - arr.mean()) / std


def phase_a(candidates: list[Candidate], delta: float, k1: int) -> list[Candidate]:
    """Similarity recall: sim ≥ δ, the k1 most similar."""
    kept = [c for c in candidates if c.sim >= delta]
    return sorted(kept, key=lambda c: c.sim, reverse=True)[:k1]


def phase_b(pool: list[Candidate], lam: float, k2: int, q_init: float = 0.0) -> list[Candidate]:
    """Value-aware selection within the pool: z-scored (1−λ)·sim + λ·Q, top-k2."""
    if not pool:
        return []
    sims = zscore([c.sim for c in pool])
    qs = zscore([c.q(q_init) for c in pool])
    for c, s, q in zip(pool, sims, qs, strict=True):
        c.score = float((1.0 - lam) * s + lam * q)
    # ties (e.g. a constant pool) fall back to similarity order
    return sorted(pool, key=lambda c: (c.score, c.sim), reverse=True)[:k2]


def two_phase(candidates: list[Candidate], cfg: UtilityConfig) -> list[Candidate]:
    """MemRL retrieval over one candidate set (phase A then phase B)."""
    return phase_b(phase_a(candidates, cfg.delta, cfg.k1), cfg.lam, cfg.k2, cfg.q_init)


def q_update(q: float, reward: float, alpha: float) -> float:
    """Q ← Q + α(r − Q)."""
    return q + alpha * (reward - q)


def task_reward(
    success: bool, score: float | None, max_score: float | None, cfg: UtilityConfig
) -> float:
    """r from the task outcome: success gives ``reward_success``; a failure earns the
    goal-condition share of the gap when the world reports a partial score."""
    if success:
        return cfg.reward_success
    if score is not None and max_score and max_score > 0:
        frac = min(max(score / max_score, 0.0), 1.0)
        return cfg.reward_failure + frac * (cfg.reward_success - cfg.reward_failure)
    return cfg.reward_failure


def apply_q(meta: dict, reward: float, cfg: UtilityConfig, episode_id: str) -> dict | None:
    """The payload after one Q update, or None when ``episode_id`` already updated it.
    ``q_trace`` keeps [episode, Q before, Q after] of recent updates in the item itself, so the
    history row of an update that was written just before a crash can be recorded on resume."""
    log = list(meta.get("q_log") or [])
    if episode_id in log:
        return None
    q_old = float(meta.get("q", cfg.q_init))
    q_new = q_update(q_old, reward, cfg.alpha)
    trace = list(meta.get("q_trace") or [])
    return {
        **meta,
        "q": q_new,
        "visits": int(meta.get("visits", 0)) + 1,
        "q_log": (log + [episode_id])[-Q_LOG_LEN:],
        "q_trace": (trace + [[episode_id, q_old, q_new]])[-Q_LOG_LEN:],
    }


def traced_q(meta: dict, episode_id: str) -> tuple[float, float] | None:
    """(Q before, Q after) of the update ``episode_id`` made to this item, if it made one."""
    for entry in meta.get("q_trace") or []:
        if entry[0] == episode_id:
            return float(entry[1]), float(entry[2])
    return None
