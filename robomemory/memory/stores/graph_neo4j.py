"""Spatial KG on Neo4j over Bolt (scale-out backend), parameterized Cypher only.

Data model, all scoped by ``graph_id`` so many robots share one database:
``(:SpatialVertex {graph_id, name, embedding})`` with a cosine vector index on ``embedding``;
valid edges ``[:SPATIAL {graph_id, id, relation, valid_from_step, episode_id}]``; invalidated
edges as ``(:SpatialHistory {...})`` nodes (history survives vertex pruning);
``(:SpatialGraph {graph_id, next_id})`` holds the id counter and ``(:SpatialUpdate {graph_id,
key})`` the applied update keys. Every :meth:`apply` is one write transaction. The only values
not passed as parameters are schema names and the index dimension (a validated int), which
Cypher DDL cannot take as parameters.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from typing import Any

from robomemory.memory.base import Triple
from robomemory.memory.stores.graph_store import ApplyResult, GraphChange

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

    def k_hop(self, seeds: Iterable[str], k: int, undirected: bool = False) -> set[str]:
        rows = self._read(
            "MATCH (v:SpatialVertex {graph_id: $g}) WHERE v.name IN $names RETURN v.name AS name",
            names=sorted(set(seeds)),
        )
        seen = frontier = {r["name"] for r in rows}
        for _ in range(k):
            arrow = "-" if undirected else "->"
            rows = self._read(
                f"MATCH (u:SpatialVertex {{graph_id: $g}})-[:SPATIAL]{arrow}(v:SpatialVertex) "
                "WHERE u.name IN $names RETURN DISTINCT v.name AS name",
                names=sorted(frontier),
            )
            frontier = {r["name"] for r in rows} - seen
            if not frontier:
                break
            seen = seen | frontier
        return set(seen)

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
        if change.vertices:
            self._ensure_index(len(next(iter(change.vertices.values()))))
        with self._driver.session(database=self._db) as session:
            return session.execute_write(self._apply_tx, change)

    def _apply_tx(self, tx: Any, change: GraphChange) -> ApplyResult:
        g = self.graph_id
        result = ApplyResult()
        tx.run(
            "UNWIND $rows AS row MERGE (v:SpatialVertex {graph_id: $g, name: row.name}) "
            "ON CREATE SET v.embedding = row.embedding",
            g=g,
            rows=[
                {"name": n, "embedding": [float(x) for x in e]} for n, e in change.vertices.items()
            ],
        )
        for edge_id in dict.fromkeys(change.invalidate):
            rec = tx.run(
                "MATCH (u:SpatialVertex {graph_id: $g})-[e:SPATIAL {id: $id}]->(v:SpatialVertex) "
                "CREATE (h:SpatialHistory {graph_id: $g, id: e.id, subject: u.name, "
                "relation: e.relation, object: v.name, valid_from_step: e.valid_from_step, "
                "invalidated_at_step: $step, episode_id: e.episode_id}) DELETE e RETURN h.id AS id",
                g=g,
                id=edge_id,
                step=change.step,
            ).single()
            if rec is None:
                log.warning("spatial %s: no valid edge %d to invalidate", g, edge_id)
            else:
                result.invalidated.append(edge_id)
        counter = tx.run(
            "MERGE (s:SpatialGraph {graph_id: $g}) ON CREATE SET s.next_id = 1 "
            "RETURN s.next_id AS n",
            g=g,
        ).single()
        next_id = int(counter["n"])
        for t in change.add:
            rec = tx.run(
                "MATCH (u:SpatialVertex {graph_id: $g, name: $s}), "
                "(v:SpatialVertex {graph_id: $g, name: $o}) "
                "OPTIONAL MATCH (u)-[old:SPATIAL {relation: $r}]->(v) "
                "WITH u, v, old WHERE old IS NULL "
                "CREATE (u)-[e:SPATIAL {graph_id: $g, id: $id, relation: $r, "
                "valid_from_step: $step, "
                "episode_id: $ep}]->(v) RETURN e.id AS id",
                g=g,
                s=t.subject,
                o=t.object,
                r=t.relation,
                id=next_id,
                step=change.step,
                ep=change.episode_id,
            ).single()
            if rec is not None:
                result.added.append(next_id)
                next_id += 1
        tx.run(
            "MATCH (s:SpatialGraph {graph_id: $g}) SET s.next_id = $n, "
            "s.last_step = CASE WHEN s.last_step IS NULL OR s.last_step < $step THEN $step "
            "ELSE s.last_step END",
            g=g,
            n=next_id,
            step=change.step,
        )
        pruned = tx.run(
            "MATCH (v:SpatialVertex {graph_id: $g}) WHERE NOT (v)-[:SPATIAL]-() "
            "WITH v, v.name AS name DELETE v RETURN name",
            g=g,
        )
        result.pruned = sorted(r["name"] for r in pruned)
        tx.run("MERGE (:SpatialUpdate {graph_id: $g, key: $key})", g=g, key=change.key)
        return result

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
