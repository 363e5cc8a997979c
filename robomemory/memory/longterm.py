"""Semantic and episodic long-term memory (paper section 3.2): items in a vector store, the Mem0
update ("Mem0: Building Production-Ready AI Agents with Scalable Long-Term Memory")
and MemRL two-phase retrieval and utility (see utility.py).

Semantic items have a ``level`` ("action", "verdict" or "task"); episodic items record one
task attempt each, and every attempt is kept (the paper's episodic memory records every
trajectory): an episode is added unless its text is known, the updater decides for semantic
items only.
Similarity to a request is the larger of cos(query, item text) and cos(task, item intent).

Retrieval embeds the step's queries through the robot's shared embedding cache (so the
semantic and episodic branches embed them once) and runs every search of a step as one batch.
A Mem0 update is planned (``mem0.py``, pure), journaled, then applied with idempotent
operations whose history rows carry an op key: a crash anywhere resumes the journaled plan and
never asks the model again.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from typing import Literal

from langchain_core.embeddings import Embeddings

from robomemory.config import MemoryConfig
from robomemory.core import clip, echo
from robomemory.memory import mem0
from robomemory.memory.base import RetrievedItem, origin_of
from robomemory.memory.damage import DamagedStoreError
from robomemory.memory.history import MemoryHistory
from robomemory.memory.mem0 import AddOp, DeleteOp, Existing, UpdateOp, UpdatePlan, content_hash
from robomemory.memory.stores.vector_store import (
    CONTENT,
    INTENT,
    Hit,
    MemoryServerError,
    Search,
    SharedStore,
    VectorStore,
    point_id,
)
from robomemory.memory.utility import Candidate, apply_q, traced_q, two_phase
from robomemory.prompts import longterm as prompts
from robomemory.structured import NodeLLM

log = logging.getLogger(__name__)

Kind = Literal["semantic", "episodic"]
__all__ = ["LongTermMemory", "NewItem", "content_hash"]


@dataclass
class NewItem:
    """An item written by the long-term creator, before the Mem0 update."""

    text: str
    level: str | None = None  # semantic: "action" | "verdict" | "task"; episodic: None


STORE_REMEDY = (
    "restore the folder from a backup; to start this memory over, move the folder and the "
    "history database aside"
)


class LongTermMemory:
    """One long-term module (semantic or episodic) of one robot, in one vector store."""

    def __init__(
        self,
        kind: Kind,
        cfg: MemoryConfig,
        store: VectorStore,
        embedder: Embeddings,
        history: MemoryHistory,
    ):
        if kind not in ("semantic", "episodic"):
            raise ValueError(f"long-term memory kind must be semantic or episodic, not {kind!r}")
        self.kind = kind
        self.cfg = cfg
        self.store = store
        self.collection = store.collection
        self.history = history
        self.embedder = embedder
        # a fleet's shared store: whose episode it was (robots may name episodes alike)
        self.writer = store.writer if isinstance(store, SharedStore) else None

    # ---- retrieval (MemRL) -------------------------------------------------------------
    def levels(self) -> list[tuple[str | None, int]]:
        """(level, how many to return): semantic N_s action + the world's verdicts + N_t
        task; episodic N. A verdict has its own slots: among a task's action lessons, which
        tie on its intent, utility ranked the creator's "navigate helped" above the step the
        world ended the task on, and the next attempt took that step again. It is recalled by
        its own task only: "the blue jay is no non-living thing" withheld the answer of "find
        a(n) animal", whose text differs by one word."""
        lt = self.cfg.longterm
        if self.kind == "semantic":
            return [
                ("action", lt.semantic_action_n),
                ("verdict", lt.semantic_verdict_n),
                ("task", lt.semantic_task_n),
            ]
        return [(None, lt.episodic_n)]

    def retrieve(self, queries: list[str], task: str) -> list[RetrievedItem]:
        """Items for this step's queries: two-phase MemRL retrieval (plain top-N when the
        utility module is off), per level, best first. One embedding call (cached, shared
        with the other branches) and one batch of searches."""
        queries = [q for q in queries if q and q.strip()] or [task]
        vectors = self.embedder.embed_documents([*queries, task])
        query_vecs, task_vec = vectors[:-1], vectors[-1]
        levels = [(level, n) for level, n in self.levels() if n > 0]
        requests: list[Search] = []
        for level, n in levels:
            requests += self._requests(level, n, query_vecs, task_vec)
        found = self.store.search(requests)
        out: list[RetrievedItem] = []
        per = len(query_vecs) + 1
        for i, (level, n) in enumerate(levels):
            hits = found[i * per : (i + 1) * per]
            if level == "verdict":  # a fact of its task: another task's answer may differ
                hits = [[h for h in hs if h.meta.get("task") == task] for hs in hits]
            out += [self._item(c) for c in self._select(n, hits[0], hits[1:])]
        return out

    def _requests(
        self, level: str | None, n: int, query_vecs: list[list[float]], task_vec: list[float]
    ) -> list[Search]:
        """The intent search then one content search per query (gated at δ, top-k1 when
        the utility module is on; plain top-n otherwise)."""
        ucfg = self.cfg.utility
        where = {"level": level} if level else None
        k, threshold = (ucfg.k1, ucfg.delta) if ucfg.enabled else (n, None)
        return [Search(task_vec, INTENT, k, threshold, where)] + [
            Search(vec, CONTENT, k, threshold, where) for vec in query_vecs
        ]

    def _select(self, n: int, by_intent: list[Hit], by_query: list[list[Hit]]) -> list[Candidate]:
        best: dict[str, Candidate] = {}
        intent = _candidates(by_intent)
        if not self.cfg.utility.enabled:  # plain similarity top-N
            for hits in by_query:
                for c in _merge(_candidates(hits), intent):
                    _keep_best(best, c, key=lambda x: x.sim)
            chosen = sorted(best.values(), key=lambda c: c.sim, reverse=True)[:n]
            for c in chosen:
                c.score = c.sim
            return chosen
        for hits in by_query:
            for c in two_phase(_merge(_candidates(hits), intent), self.cfg.utility):
                _keep_best(best, c, key=lambda x: x.score)
        return sorted(best.values(), key=lambda c: (c.score, c.sim), reverse=True)[:n]

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
            origin=origin_of(c.meta),
        )

    def verify(self, probe: list[float]) -> None:
        """Refuse a store that lost items its history holds, or that its engine cannot search
        (a damaged shard): it is never used with fewer items. ``probe``: any query vector. In a
        fleet's shared store an item another robot removed is accounted for, not lost."""
        expected = self.history.live_items(self.collection)
        where = getattr(self.store, "path", self.collection)
        held_of = self.store.accounted if isinstance(self.store, SharedStore) else self.store.get
        try:
            held = set(held_of(sorted(expected))) if expected else set()
            self.store.search([Search(probe, CONTENT, 1, None, None)])
            self.store.search([Search(probe, INTENT, 1, None, None)])
        except MemoryServerError:  # unreachable is not damaged
            raise
        except Exception as exc:  # the engine raises bare Exception: said, by name, not used
            raise DamagedStoreError(
                f"long-term store {where} is damaged ({' '.join(str(exc).split())[:200]}): "
                f"{STORE_REMEDY}"
            ) from exc
        if expected - held:
            raise DamagedStoreError(
                f"long-term store {where} is damaged: it holds {len(expected & held)} of the "
                f"{len(expected)} items {self.history.path} records: {STORE_REMEDY}"
            )
        self._verify_deletes(where)

    def _verify_deletes(self, where: object) -> None:
        """Refuse a store that holds items its history records as deleted: a store that lost
        its newest writes (a cut write-ahead log) brings back what the updater removed. A
        fleet's shared store is left out (other robots write it)."""
        if isinstance(self.store, SharedStore):
            return
        deleted = self.history.deleted_items(self.collection)
        back = sorted(self.store.get(sorted(deleted))) if deleted else []
        if back:
            raise DamagedStoreError(
                f"long-term store {where} is damaged: it holds {len(back)} item(s) "
                f"{self.history.path} records as deleted (first {echo(back[0])}), so it lost "
                f"its newest writes: {STORE_REMEDY}"
            )

    # ---- Mem0 update -------------------------------------------------------------------
    def add_items(
        self, items: list[NewItem], *, task: str, episode_id: str, llm: NodeLLM
    ) -> list[dict]:
        """Run the Mem0 update for each new item, in order (see ``update``)."""
        return [
            self.update(item, idx=idx, task=task, episode_id=episode_id, llm=llm)
            for idx, item in enumerate(items)
        ]

    def update(self, item: NewItem, *, idx: int, task: str, episode_id: str, llm: NodeLLM) -> dict:
        """One Mem0 decision for item ``idx`` of ``episode_id``: dedupe by hash, show the top-S
        similar items with integer ids, decide ADD / UPDATE / DELETE / NOOP (invalid: NOOP).
        The plan is journaled before any write and marked done after; a resumed call applies
        the journaled plan again (idempotently) and never asks the model again."""
        key = f"{self.collection}:item:{idx}"
        entry = self.history.journal_get(episode_id, key)
        if entry is not None and "plan" not in entry:  # a result journaled before plans
            return entry
        if entry is not None and entry.get("done"):
            return entry["result"]
        if entry is not None:
            plan = UpdatePlan.model_validate(entry["plan"])
        else:
            plan = self._plan(item, idx, episode_id, llm)
            self.history.journal_put(episode_id, key, {"plan": plan.model_dump(), "done": False})
        result = self._apply(plan, idx, task, episode_id)
        self.history.journal_put(
            episode_id, key, {"plan": plan.model_dump(), "done": True, "result": result}
        )
        return result

    def _plan(self, item: NewItem, idx: int, episode_id: str, llm: NodeLLM) -> UpdatePlan:
        """Gather what the pure Mem0 rules need (store reads, one model call) and plan."""
        text = clip(item.text.strip(), self.cfg.longterm.max_item_chars)
        add_id = point_id(self.collection, episode_id, str(idx))
        duplicate = bool(text) and self.store.find_hash(content_hash(text)) is not None
        existing: list[Existing] = []
        event = self.kind == "episodic"  # each episode is its own happening
        if text and not duplicate and not event:
            where = {"level": item.level} if item.level else None
            vec = self.embedder.embed_query(text)
            (hits,) = self.store.search(
                [Search(vec, CONTENT, self.cfg.longterm.update_top_s, None, where)]
            )
            existing = mem0.comparable(text, [Existing(h.id, h.text) for h in hits])
        plan = mem0.plan_without_model(
            text, item.level, add_id, duplicate=duplicate, existing=existing, event=event
        )
        if plan is not None:
            return plan
        answer = llm.call(
            prompts.MemoryDecision,
            prompts.UPDATER_SYSTEM,
            prompts.updater_prompt(text, [e.text for e in existing]),
            fallback=lambda: prompts.MemoryDecision(event="NOOP"),
        )
        decision = answer.value if answer.ok else None
        merged, holders = None, {}
        if (target := mem0.merge_target(decision, text, existing)) is not None:
            merge = llm.call(
                prompts.MergedItem,
                prompts.MERGER_SYSTEM,
                prompts.merger_prompt(text, target.text),
                fallback=lambda: None,
            )
            merged = merge.value.text.strip() if merge.ok else None
        if merged:
            digest = content_hash(merged)
            holder = self.store.find_hash(digest)
            holders = {digest: holder} if holder else {}
        plan = mem0.plan_decision(decision, text, item.level, add_id, existing, holders, merged)
        if plan.result["event"] == "NOOP" and plan.result["reason"] != "model":
            log.warning("%s: updater decision ignored: %s", self.kind, plan.result["reason"])
        return plan

    def _apply(self, plan: UpdatePlan, idx: int, task: str, episode_id: str) -> dict:
        """Carry out a plan's operations; each is idempotent, its history row written once."""
        result = dict(plan.result)
        for op in plan.ops:
            op_key = f"{self.collection}:{episode_id}:{idx}:{op.op}:{op.item_id}"
            if isinstance(op, AddOp):
                self._add(op, task, episode_id, op_key)
            elif isinstance(op, DeleteOp):
                self.store.delete([op.item_id])
                self.history.record(
                    self.collection,
                    op.item_id,
                    "DELETE",
                    old_text=op.old_text,
                    episode_id=episode_id,
                    op_key=op_key,
                )
            else:
                result = self._update(op, idx, task, episode_id, op_key) or result
        return result

    def _add(self, op: AddOp, task: str, episode_id: str, op_key: str) -> None:
        if not self.store.get([op.item_id]):  # a resumed ADD keeps the item as written
            meta = {
                "level": op.level,
                "q": self.cfg.utility.q_init,
                "visits": 0,
                "hash": content_hash(op.text),
                "episode_id": episode_id,
                "task": task,
                "created": time.time(),
            }
            content_vec, intent_vec = self.embedder.embed_documents([op.text, task])
            self.store.put(op.item_id, op.text, meta, {CONTENT: content_vec, INTENT: intent_vec})
        self.history.record(
            self.collection,
            op.item_id,
            "ADD",
            new_text=op.text,
            episode_id=episode_id,
            op_key=op_key,
        )

    def _update(
        self, op: UpdateOp, idx: int, task: str, episode_id: str, op_key: str
    ) -> dict | None:
        """Rewrite the target's text (keeping its Q). A target another writer (a robot of the
        fleet) changed since the plan keeps its text, and the merged text is added as a new
        item, so neither update is lost. None when done as planned, else the new result."""
        digest = content_hash(op.new_text)
        changed: list[str | None] = []  # the level of a target changed by another writer

        def mutate(old_text: str, meta: dict):
            if old_text == op.new_text:  # applied before a crash
                return None
            if old_text != op.old_text:
                changed.append(meta.get("level"))
                return None
            return op.new_text, {**meta, "hash": digest, "updated": time.time()}

        change = self.store.modify(op.item_id, mutate, self.embedder.embed_query)
        if changed:
            add = AddOp(
                item_id=point_id(self.collection, episode_id, str(idx)),
                text=op.new_text,
                level=changed[0],
            )
            self._add(add, task, episode_id, f"{op_key}:{add.op}:{add.item_id}")
            return {"event": "ADD", "item_id": add.item_id, "reason": "target changed"}
        if change is None and not self.store.get([op.item_id]):
            return {"event": "NOOP", "reason": "target gone"}
        self.history.record(
            self.collection,
            op.item_id,
            "UPDATE",
            old_text=op.old_text,
            new_text=op.new_text,
            episode_id=episode_id,
            op_key=op_key,
        )
        return None

    # ---- MemRL utility update ----------------------------------------------------------
    def update_utility(self, ids: list[str], reward: float, episode_id: str) -> list[dict]:
        """Q ← Q + α(r − Q), visits + 1 for each of ``ids`` held here; applied once per
        episode per item (the payload remembers recent episodes), serialized by CAS. The
        history row is written once per (item, episode): when the Q write went through before
        a crash, the resumed call records it from the item's ``q_trace``. Returns the updates
        recorded by this call. In a fleet's shared store an item remembers the episode as
        ``robot/episode``: two robots' episodes of one name are two updates."""
        ucfg = self.cfg.utility
        key = f"{self.writer}/{episode_id}" if self.writer else episode_id
        out = []
        for pid in self.store.get(list(dict.fromkeys(ids))):
            change = self.store.modify(
                pid,
                lambda text, meta: _q_change(text, meta, reward, ucfg, key),
                self.embedder.embed_query,
            )
            if change is not None:
                q_old, q_new = float(change.old_meta.get("q", ucfg.q_init)), change.new_meta["q"]
            else:
                held = self.store.get([pid]).get(pid)
                traced = traced_q(held[1], key) if held else None
                if traced is None:
                    continue
                q_old, q_new = traced
            if self.history.record(
                self.collection,
                pid,
                "Q",
                q_old=q_old,
                q_new=q_new,
                episode_id=episode_id,
                op_key=f"{self.collection}:{episode_id}:Q:{pid}",
            ):
                out.append({"id": pid, "q_old": q_old, "q_new": float(q_new)})
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


def _candidates(hits: list[Hit]) -> list[Candidate]:
    return [Candidate(id=h.id, text=h.text, meta=h.meta, sim=h.score) for h in hits]


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
