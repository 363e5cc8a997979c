"""The map the agent builds by moving (like a SLAM map built by driving).

Only rooms the agent has stood in and the exits it has walked through are known; a move from A
to B also records the way back (the reverse compass direction), as a robot that drove a corridor
can drive it back. Path-finding never uses the game's hidden map.
"""

from __future__ import annotations

import networkx as nx

OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east"}
DIRECTIONS = tuple(OPPOSITE)


class KnownMap:
    """Visited rooms and learned exits, as a directed graph whose edges carry a direction."""

    def __init__(self) -> None:
        self.graph: nx.DiGraph = nx.DiGraph()

    def visit(self, room: str) -> None:
        """Record that the agent stands in ``room``."""
        self.graph.add_node(room)

    def record_move(self, src: str, direction: str, dst: str) -> None:
        """Record that going ``direction`` from ``src`` led to ``dst`` (and the way back)."""
        self.visit(src)
        self.visit(dst)
        self.graph.add_edge(src, dst, direction=direction)
        back = OPPOSITE.get(direction)
        if back is not None and not self.graph.has_edge(dst, src):
            self.graph.add_edge(dst, src, direction=back)

    @property
    def rooms(self) -> list[str]:
        """Visited rooms in the order they were first visited."""
        return list(self.graph.nodes)

    def knows(self, room: str) -> bool:
        return self.graph.has_node(room)

    def route(self, src: str, dst: str) -> list[str] | None:
        """Compass directions of a shortest known route (BFS), or None when none is known."""
        if not (self.knows(src) and self.knows(dst)):
            return None
        try:
            rooms = nx.shortest_path(self.graph, src, dst)
        except nx.NetworkXNoPath:
            return None
        return [self.graph.edges[a, b]["direction"] for a, b in zip(rooms, rooms[1:], strict=False)]

    def exits(self, room: str) -> dict[str, str]:
        """Learned exits of ``room``: direction -> neighbouring room."""
        if not self.knows(room):
            return {}
        return {data["direction"]: nb for _, nb, data in self.graph.out_edges(room, data=True)}
