"""Spatial KG on Neo4j over Bolt (scale-out backend), parameterized Cypher only.

Data model, all scoped by ``graph_id`` so many robots share one database:
``(:SpatialVertex {graph_id, name, embedding})`` with a cosine vector index on ``embedding``;
valid edges ``[:SPATIAL {graph_id, id, relation, valid_from_step, episode_id}]``; invalidated
edges as ``(:SpatialHistory {...})`` nodes (history survives vertex pruning);
``(:SpatialGraph {graph_id, next_id})`` holds the id counter and ``(:SpatialUpdate {graph_id,
key})`` the applied update keys. Algorithm 2's selection and merge are the shared pure functions
of :mod:`~robomemory.memory.spatial_algorithm`: this backend answers their reads (one query per
call, a K-hop frontier in one query) and writes the merge plan in one write transaction. The
only values not passed as parameters are schema names and the index dimension (a validated
int), which Cypher DDL cannot take as parameters.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from robomemory.memory.base import Triple
from robomemory.memory.spatial_algorithm import GraphChange, MergePlan, k_hop, plan_merge
from robomemory.memory.stores.graph_store import ApplyResult

log = logging.getLogger(__name__)

INDEX_NAME = "spatial_vertex_embedding"
OVERFETCH = 8

_EDGE_FIELDS = (
    "e.id AS id, u.name AS subject, e.relation AS relation, v.name AS object, "
    "e.valid_from_step AS valid_from_step, e.episode_id AS episode_id"
)


def _triple(rec: Any) -> Triple:
    return Triple(**{k: rec[k] for k in rec.keys()})


class Neo4jGraphStore:
    """A :class:`GraphStore` on Neo4j; ``dim`` is the embedding size (for the vector index)."""

    def __init__(
        self, graph_id: str, uri: str, auth: tuple[str, str] | None, database: str | None = None
    ):
        import neo4j

        self.graph_id = graph_id
        self._db = database
        self._index_dim: int | None = None
        self._driver = neo4j.GraphDatabase.driver(uri, auth=auth)
        self._driver.verify_connectivity()
        for stmt in (
            "CREATE CONSTRAINT spatial_vertex_key IF NOT EXISTS FOR (v:SpatialVertex) "
            "REQUIRE (v.graph_id, v.name) IS UNIQUE",
            "CREATE CONSTRAINT spatial_update_key IF NOT EXISTS FOR (u:SpatialUpdate) "
            "REQUIRE (u.graph_id, u.key) IS UNIQUE",
        ):
            self._driver.execute_query(stmt, database_=self._db)

    @classmethod
    def from_env(cls, graph_id: str, uri: str, user_env: str, password_env: str):
        """Connect with credentials read from the named environment variables."""
        user, password = os.environ.get(user_env), os.environ.get(password_env)
        auth = (user, password) if user and password else None
        return cls(graph_id, uri, auth)

    def _ensure_index(self, dim: int) -> None:
        """Create the cosine vector index once the embedding size is known (first vertices)."""
        dim = int(dim)
        if self._index_dim == dim:
            return
        if not 0 < dim <= 4096:
            raise ValueError(f"bad embedding dimension {dim}")
        self._driver.execute_query(
            f"CREATE VECTOR INDEX {INDEX_NAME} IF NOT EXISTS FOR (v:SpatialVertex) "
            f"ON (v.embedding) OPTIONS {{indexConfig: {{`vector.dimensions`: {dim}, "
            "`vector.similarity_function`: 'cosine'}}",
            database_=self._db,
        )
        self._index_dim = dim

    def _read(self, query: str, **params: Any) -> list[Any]:
        records, _, _ = self._driver.execute_query(
            query,
            parameters_={"g": self.graph_id, **params},
            database_=self._db,
            routing_="r",
        )
        return records

    # ---- reads -------------------------------------------------------------------------------
    def has_update(self, key: str) -> bool:
        return bool(
            self._read("MATCH (u:SpatialUpdate {graph_id: $g, key: $key}) RETURN 1", key=key)
        )

    def last_step(self) -> int | None:
        rows = self._read("MATCH (s:SpatialGraph {graph_id: $g}) RETURN s.last_step AS last")
        return None if not rows or rows[0]["last"] is None else int(rows[0]["last"])

    def vertex_names(self) -> set[str]:
        return {
            r["name"]
            for r in self._read("MATCH (v:SpatialVertex {graph_id: $g}) RETURN v.name AS name")
        }

    def similar_vertices(self, embedding: Sequence[float], n: int) -> list[tuple[str, float]]:
        if n <= 0:
            return []
        from neo4j.exceptions import ClientError

        vec = [float(x) for x in embedding]
        try:
            rows = self._read(
                "CALL db.index.vector.queryNodes($index, $k, $vec) YIELD node, score "
                "WHERE node.graph_id = $g RETURN node.name AS name, score LIMIT $n",
                index=INDEX_NAME,
                k=n * OVERFETCH,
                vec=vec,
                n=n,
            )
        except ClientError as exc:  # no index yet (empty database): exact scan below
            log.info("spatial %s: vector index unavailable (%s)", self.graph_id, exc.code)
            rows = []
        if len(rows) < n:  # other graphs crowded the approximate top-k: exact scan of this graph
            rows = self._read(
                "MATCH (v:SpatialVertex {graph_id: $g}) "
                "WITH v, vector.similarity.cosine(v.embedding, $vec) AS score "
                "RETURN v.name AS name, score ORDER BY score DESC LIMIT $n",
                vec=vec,
                n=n,
            )
        return [(r["name"], float(r["score"])) for r in rows]

    def known_vertices(self, names: Iterable[str]) -> set[str]:
        rows = self._read(
            "MATCH (v:SpatialVertex {graph_id: $g}) WHERE v.name IN $names RETURN v.name AS name",
            names=sorted(set(names)),
        )
        return {r["name"] for r in rows}

    def neighbors(self, names: Collection[str], undirected: bool = False) -> set[str]:
        arrow = "-" if undirected else "->"
        rows = self._read(
            f"MATCH (u:SpatialVertex {{graph_id: $g}})-[:SPATIAL]{arrow}(v:SpatialVertex) "
            "WHERE u.name IN $names RETURN DISTINCT v.name AS name",
            names=sorted(set(names)),
        )
        return {r["name"] for r in rows}

    def degrees(self, names: Collection[str]) -> dict[str, int]:
        rows = self._read(
            "MATCH (v:SpatialVertex {graph_id: $g}) WHERE v.name IN $names "
            "RETURN v.name AS name, COUNT { (v)-[:SPATIAL]-() } AS degree",
            names=sorted(set(names)),
        )
        return {r["name"]: int(r["degree"]) for r in rows}

    def edges_by_id(self, ids: Collection[int]) -> list[Triple]:
        rows = self._read(
            "MATCH (u:SpatialVertex {graph_id: $g})-[e:SPATIAL]->(v:SpatialVertex) "
            f"WHERE e.id IN $ids RETURN {_EDGE_FIELDS} ORDER BY id",
            ids=sorted({int(i) for i in ids}),
        )
        return [_triple(r) for r in rows]

    def k_hop(self, seeds: Iterable[str], k: int, undirected: bool = False) -> set[str]:
        return k_hop(self, seeds, k, undirected=undirected)

    def edges_among(self, names: Iterable[str]) -> list[Triple]:
        rows = self._read(
            "MATCH (u:SpatialVertex {graph_id: $g})-[e:SPATIAL]->(v:SpatialVertex) "
            f"WHERE u.name IN $names AND v.name IN $names RETURN {_EDGE_FIELDS} ORDER BY id",
            names=sorted(set(names)),
        )
        return [_triple(r) for r in rows]

    def triples(self, include_invalid: bool = False) -> list[Triple]:
        out = [
            _triple(r)
            for r in self._read(
                "MATCH (u:SpatialVertex {graph_id: $g})-[e:SPATIAL]->(v:SpatialVertex) "
                f"RETURN {_EDGE_FIELDS}"
            )
        ]
        if include_invalid:
            out += [
                _triple(r)
                for r in self._read(
                    "MATCH (h:SpatialHistory {graph_id: $g}) "
                    "RETURN h.id AS id, h.subject AS subject, h.relation AS relation, "
                    "h.object AS object, h.valid_from_step AS valid_from_step, "
                    "h.invalidated_at_step AS invalidated_at_step, h.episode_id AS episode_id"
                )
            ]
        return sorted(out, key=lambda t: t.id or 0)

    def size(self) -> tuple[int, int]:
        rows = self._read(
            "OPTIONAL MATCH (v:SpatialVertex {graph_id: $g}) WITH count(v) AS nv "
            "OPTIONAL MATCH (:SpatialVertex {graph_id: $g})-[e:SPATIAL]->() "
            "RETURN nv, count(e) AS ne"
        )
        return int(rows[0]["nv"]), int(rows[0]["ne"])

    # ---- writes ------------------------------------------------------------------------------
    def apply(self, change: GraphChange) -> ApplyResult:
        """Plan the merge with the shared pure function, then write it in one transaction
        (one writing process per robot, as with the SQLite store)."""
        plan = plan_merge(self, change)
        for i in plan.missing:
            log.warning("spatial %s: no valid edge %d to invalidate", self.graph_id, i)
        if plan.vertices:
            self._ensure_index(len(next(iter(plan.vertices.values()))))
        with self._driver.session(database=self._db) as session:
            return session.execute_write(self._write_tx, change, plan)

    def _write_tx(self, tx: Any, change: GraphChange, plan: MergePlan) -> ApplyResult:
        g = self.graph_id
        pruned = set(plan.prune)
        tx.run(
            "UNWIND $rows AS row MERGE (v:SpatialVertex {graph_id: $g, name: row.name}) "
            "ON CREATE SET v.embedding = row.embedding",
            g=g,
            rows=[
                {"name": n, "embedding": [float(x) for x in e]}
                for n, e in plan.vertices.items()
                if n not in pruned
            ],
        )
        tx.run(
            "UNWIND $ids AS id "
            "MATCH (u:SpatialVertex {graph_id: $g})-[e:SPATIAL {id: id}]->(v:SpatialVertex) "
            "CREATE (h:SpatialHistory {graph_id: $g, id: e.id, subject: u.name, "
            "relation: e.relation, object: v.name, valid_from_step: e.valid_from_step, "
            "invalidated_at_step: $step, episode_id: e.episode_id}) DELETE e",
            g=g,
            ids=[t.id for t in plan.invalidate],
            step=change.step,
        )
        counter = tx.run(
            "MERGE (s:SpatialGraph {graph_id: $g}) ON CREATE SET s.next_id = 1 "
            "RETURN s.next_id AS n",
            g=g,
        ).single()
        first = int(counter["n"])
        ids = list(range(first, first + len(plan.add)))
        tx.run(
            "UNWIND $rows AS row "
            "MATCH (u:SpatialVertex {graph_id: $g, name: row.s}), "
            "(v:SpatialVertex {graph_id: $g, name: row.o}) "
            "CREATE (u)-[:SPATIAL {graph_id: $g, id: row.id, relation: row.r, "
            "valid_from_step: $step, episode_id: $ep}]->(v)",
            g=g,
            rows=[
                {"id": i, "s": t.subject, "r": t.relation, "o": t.object}
                for i, t in zip(ids, plan.add, strict=True)
            ],
            step=change.step,
            ep=change.episode_id,
        )
        tx.run(
            "MATCH (s:SpatialGraph {graph_id: $g}) SET s.next_id = $n, "
            "s.last_step = CASE WHEN s.last_step IS NULL OR s.last_step < $step THEN $step "
            "ELSE s.last_step END",
            g=g,
            n=first + len(plan.add),
            step=change.step,
        )
        tx.run(
            "MATCH (v:SpatialVertex {graph_id: $g}) WHERE v.name IN $names "
            "AND NOT (v)-[:SPATIAL]-() DELETE v",
            g=g,
            names=sorted(pruned),
        )
        tx.run("MERGE (:SpatialUpdate {graph_id: $g, key: $key})", g=g, key=change.key)
        return ApplyResult(
            added=ids,
            invalidated=[t.id for t in plan.invalidate if t.id is not None],
            pruned=sorted(pruned),
        )

    def drop(self) -> None:
        """Delete this graph's data (tests)."""
        self._driver.execute_query(
            "MATCH (n) WHERE (n:SpatialVertex OR n:SpatialHistory OR n:SpatialGraph OR "
            "n:SpatialUpdate) AND n.graph_id = $g DETACH DELETE n",
            parameters_={"g": self.graph_id},
            database_=self._db,
        )

    def close(self) -> None:
        self._driver.close()
