"""Named navigation points (paper App. F.4: a handful of SLAM goals), loaded from YAML.

Format (``frame`` defaults to the file's top-level ``frame``, else ``map``; ``yaw`` in radians)::

    frame: map
    waypoints:
      kitchen_counter: {x: 1.20, y: 0.35, yaw: 1.57}
      oven:            {x: 2.05, y: -0.80, yaw: 0.0, frame: map}
"""

from __future__ import annotations

import math
from pathlib import Path

import yaml
from pydantic import BaseModel, Field


class Waypoint(BaseModel):
    """A 2-D goal pose in a fixed frame."""

    name: str
    x: float
    y: float
    yaw: float = 0.0
    frame: str = "map"

    def quaternion(self) -> dict[str, float]:
        """Orientation about z as a ROS quaternion."""
        return {"x": 0.0, "y": 0.0, "z": math.sin(self.yaw / 2), "w": math.cos(self.yaw / 2)}

    def pose(self) -> dict:
        """geometry_msgs/Pose as a dict."""
        return {
            "position": {"x": self.x, "y": self.y, "z": 0.0},
            "orientation": self.quaternion(),
        }


class WaypointMap(BaseModel):
    """Name → waypoint; names are what the planner writes in navigate_to(point)."""

    waypoints: dict[str, Waypoint] = Field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return list(self.waypoints)

    def get(self, name: str) -> Waypoint | None:
        return self.waypoints.get(name)

    @classmethod
    def from_dict(cls, data: dict) -> WaypointMap:
        if not isinstance(data, dict):
            raise ValueError("waypoint file must be a mapping")
        frame = str(data.get("frame", "map"))
        raw = data.get("waypoints", data)
        if not isinstance(raw, dict):
            raise ValueError("'waypoints' must map names to {x, y, yaw, frame}")
        points = {}
        for name, spec in raw.items():
            if name == "frame" and raw is data:
                continue
            if not isinstance(spec, dict):
                raise ValueError(f"waypoint {name!r} must be a mapping with x, y")
            points[str(name)] = Waypoint(name=str(name), **{"frame": frame, **spec})
        if not points:
            raise ValueError("no waypoints defined")
        return cls(waypoints=points)

    @classmethod
    def load(cls, path: str | Path) -> WaypointMap:
        with open(path, encoding="utf-8") as fh:
            return cls.from_dict(yaml.safe_load(fh) or {})
