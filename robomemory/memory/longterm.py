"""Semantic and episodic long-term memory (paper section 3.2): Qdrant items, the Mem0 update
(seed 002_…) and MemRL two-phase retrieval and utility (seed 001_…, see utility.py).

Semantic items have a ``level`` ("action" or "task"); episodic items record one task attempt.
Similarity to a request is the larger of cos(query, item text) and cos(task, item intent).
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass, replace
from typing import Literal

from langchain_core.embeddings import Embeddings
from qdrant_client import QdrantClient

from robomemory.config import MemoryConfig
from robomemory.memory.base import RetrievedItem
from robomemory.memory.history import MemoryHistory
from robomemory.memory.stores.vector_qdrant import CONTENT, INTENT, QdrantItemStore, point_id
from robomemory.memory.utility import Candidate, apply_q, two_phase
from robomemory.prompts import longterm as prompts
from robomemory.structured import NodeLLM

log = logging.getLogger(__name__)

Kind = Literal["semantic", "episodic"]


@dataclass
class NewItem:
    """An item written by the long-term creator, before the Mem0 update."""

    text: str
    level: str | None = None  # semantic: "action" | "task"; episodic: None


def content_hash(text: str) -> str:
    """sha256 of the whitespace- and case-normalized text (Mem0's dedupe key)."""
    norm = " ".join(text.lower().split())
    return hashlib.sha256(norm.encode()).hexdigest()


class LongTermMemory:
    """One long-term module (semantic or episodic) of one robot, in one Qdrant collection."""

    def __init__(
        self,
        kind: Kind,
        cfg: MemoryConfig,
        client: QdrantClient,
        embedder: Embeddings,
        collection: str,
        history: MemoryHistory,
    ):
        if kind not in ("semantic", "episodic"):
            raise ValueError(f"long-term memory kind must be semantic or episodic, not {kind!r}")
        self.kind = kind
        self.cfg = cfg
        self.collection = collection
        self.history = history
        self.embedder = embedder
        self.store = QdrantItemStore(client, collection, embedder)

    # ---- retrieval (MemRL) -------------------------------------------------------------
    def levels(self) -> list[tuple[str | None, int]]:
        """(level, how many to return): semantic N_s action + N_t task; episodic N."""
        lt = self.cfg.longterm
        if self.kind == "semantic":
            return [("action", lt.semantic_action_n), ("task", lt.semantic_task_n)]
        return [(None, lt.episodic_n)]

    def retrieve(self, queries: list[str], task: str) -> list[RetrievedItem]:
        """Items for this step's queries: two-phase MemRL retrieval (plain top-N when the
        utility module is off), per level, best first."""
        queries = [q for q in queries if q and q.strip()] or [task]
        if self.store.count() == 0:
            return []
        vectors = self.embedder.embed_documents([*queries, task])
        query_vecs, task_vec = vectors[:-1], vectors[-1]
        out: list[RetrievedItem] = []
        for level, n in self.levels():
            if n > 0:
                out += self._retrieve_level(level, n, query_vecs, task_vec)
        return out

    def _retrieve_level(
        self, level: str | None, n: int, query_vecs: list[list[float]], task_vec: list[float]
    ) -> list[RetrievedItem]:
        ucfg = self.cfg.utility
        where = {"level": level} if level else None
        best: dict[str, Candidate] = {}
        if not ucfg.enabled:  # plain similarity top-N per query
            for vec in query_vecs:
                for c in self._candidates(vec, task_vec, n, None, where):
                    _keep_best(best, c, key=lambda x: x.sim)
            chosen = sorted(best.values(), key=lambda c: c.sim, reverse=True)[:n]
            for c in chosen:
                c.score = c.sim
        else:
            by_intent = self._search(task_vec, INTENT, ucfg.k1, ucfg.delta, where)
            for vec in query_vecs:
                pool = _merge(self._search(vec, CONTENT, ucfg.k1, ucfg.delta, where), by_intent)
                for c in two_phase(pool, ucfg):
                    _keep_best(best, c, key=lambda x: x.score)
            chosen = sorted(best.values(), key=lambda c: (c.score, c.sim), reverse=True)[:n]
        return [self._item(c) for c in chosen]

    def _candidates(self, vec, task_vec, k, threshold, where) -> list[Candidate]:
        return _merge(
            self._search(vec, CONTENT, k, threshold, where),
            self._search(task_vec, INTENT, k, threshold, where),
        )

    def _search(self, vec, using, k, threshold, where) -> list[Candidate]:
        return [
            Candidate(id=pid, text=text, meta=meta, sim=score)
            for pid, text, meta, score in self.store.search(vec, using, k, threshold, where)
        ]

    def _item(self, c: Candidate) -> RetrievedItem:
        return RetrievedItem(
            id=c.id,
            kind=self.kind,
            text=c.text,
            level=c.meta.get("level"),
            similarity=round(c.sim, 6),
            q=c.q(self.cfg.utility.q_init),
            score=round(c.score, 6),
            visits=int(c.meta.get("visits", 0)),
        )

    # ---- Mem0 update -------------------------------------------------------------------
    def add_items(
        self, items: list[NewItem], *, task: str, episode_id: str, llm: NodeLLM
    ) -> list[dict]:
        """Run the Mem0 update for each new item, in order; each result is journaled per
        (episode, item index), so a resumed consolidation skips what was already applied."""
        results = []
        for idx, item in enumerate(items):
            key = f"{self.collection}:item:{idx}"
            done = self.history.journal_get(episode_id, key)
            if done is None:
                done = self.update(item, idx=idx, task=task, episode_id=episode_id, llm=llm)
                self.history.journal_put(episode_id, key, done)
            results.append(done)
        return results

    def update(self, item: NewItem, *, idx: int, task: str, episode_id: str, llm: NodeLLM) -> dict:
        """One Mem0 decision: dedupe by hash, show the top-S similar items with integer ids,
        apply ADD / UPDATE / DELETE / NOOP. An unparseable or invalid decision is a NOOP."""
        text = item.text.strip()
        if not text:
            return {"event": "NOOP", "reason": "empty"}
        if self.store.find_hash(content_hash(text)):
            return {"event": "NOOP", "reason": "duplicate"}
        where = {"level": item.level} if item.level else None
        similar = self.store.similar(text, k=self.cfg.longterm.update_top_s, where=where)
        if not similar:
            return self._add(text, item.level, idx, task, episode_id, reason="no similar items")
        result = llm.call(
            prompts.MemoryDecision,
            prompts.UPDATER_SYSTEM,
            prompts.updater_prompt(text, [s[1] for s in similar]),
            fallback=lambda: prompts.MemoryDecision(event="NOOP"),
        )
        decision = result.value
        if not result.ok:
            return {"event": "NOOP", "reason": "unparseable decision"}
        if decision.event == "ADD":
            return self._add(text, item.level, idx, task, episode_id)
        if decision.event == "NOOP":
            return {"event": "NOOP", "reason": "model"}
        if decision.id is None or not 0 <= decision.id < len(similar):
            log.warning("%s: %s names unknown id %s; NOOP", self.kind, decision.event, decision.id)
            return {"event": "NOOP", "reason": f"unknown id {decision.id}"}
        target = similar[decision.id][0]
        if decision.event == "UPDATE":
            return self._update(target, (decision.text or text).strip(), episode_id)
        return self._delete_and_add(target, text, item.level, idx, task, episode_id)

    def _add(
        self, text: str, level: str | None, idx: int, task: str, episode_id: str, reason: str = ""
    ) -> dict:
        pid = point_id(self.collection, episode_id, str(idx))
        meta = {
            "level": level,
            "q": self.cfg.utility.q_init,
            "visits": 0,
            "hash": content_hash(text),
            "episode_id": episode_id,
            "task": task,
            "created": time.time(),
        }
        self.store.put(pid, text, task, meta)
        self.history.record(self.collection, pid, "ADD", new_text=text, episode_id=episode_id)
        return {"event": "ADD", "item_id": pid, **({"reason": reason} if reason else {})}

    def _update(self, target: str, new_text: str, episode_id: str) -> dict:
        digest = content_hash(new_text)
        holder = self.store.find_hash(digest)
        if not new_text or (holder and holder != target):
            return {"event": "NOOP", "reason": "update duplicates an item"}

        def mutate(old_text: str, meta: dict):
            if old_text == new_text:
                return None
            return new_text, {**meta, "hash": digest, "updated": time.time()}

        done = self.store.modify(target, mutate)
        if done is None:
            return {"event": "NOOP", "reason": "target unchanged or gone"}
        self.history.record(
            self.collection,
            target,
            "UPDATE",
            old_text=done[0],
            new_text=new_text,
            episode_id=episode_id,
        )
        return {"event": "UPDATE", "item_id": target}

    def _delete_and_add(
        self, target: str, text: str, level: str | None, idx: int, task: str, episode_id: str
    ) -> dict:
        old = self.store.get([target]).get(target)
        self.store.delete([target])
        if old is not None:
            self.history.record(
                self.collection, target, "DELETE", old_text=old[0], episode_id=episode_id
            )
        added = self._add(text, level, idx, task, episode_id)
        return {"event": "DELETE", "item_id": target, "added": added["item_id"]}

    # ---- MemRL utility update ----------------------------------------------------------
    def update_utility(self, ids: list[str], reward: float, episode_id: str) -> list[dict]:
        """Q ← Q + α(r − Q), visits + 1 for each of ``ids`` held here; applied once per
        episode per item (the payload remembers recent episodes), serialized by CAS."""
        ucfg = self.cfg.utility
        mine = list(self.store.get(list(dict.fromkeys(ids))))
        out = []
        for pid in mine:
            done = self.store.modify(
                pid, lambda text, meta: _q_change(text, meta, reward, ucfg, episode_id)
            )
            if done is None:
                continue
            q_old = float(done[1].get("q", ucfg.q_init))
            q_new = float(done[3]["q"])
            self.history.record(
                self.collection, pid, "Q", q_old=q_old, q_new=q_new, episode_id=episode_id
            )
            out.append({"id": pid, "q_old": q_old, "q_new": q_new})
        return out

    def items(self) -> list[RetrievedItem]:
        """Every item with its Q and visits (inspection), highest Q first."""
        rows = [
            self._item(Candidate(id=pid, text=text, meta=meta))
            for pid, text, meta in self.store.all()
        ]
        return sorted(rows, key=lambda r: (r.q, r.visits), reverse=True)


def _q_change(text: str, meta: dict, reward: float, ucfg, episode_id: str):
    new_meta = apply_q(meta, reward, ucfg, episode_id)
    return None if new_meta is None else (text, new_meta)


def _merge(*lists: list[Candidate]) -> list[Candidate]:
    """Union by id keeping the highest similarity (copies: phase B writes scores)."""
    best: dict[str, Candidate] = {}
    for cands in lists:
        for c in cands:
            _keep_best(best, replace(c, meta=dict(c.meta)), key=lambda x: x.sim)
    return list(best.values())


def _keep_best(best: dict[str, Candidate], c: Candidate, key) -> None:
    if c.id not in best or key(c) > key(best[c.id]):
        best[c.id] = c
