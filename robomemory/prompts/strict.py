"""The strict parse of a model answer whose fields act on memory (an id deletes an item or
invalidates an edge): no coercion, no unknown field, no duplicate key. Shared by the Mem0
updater and the spatial resolver, so both refuse the same answers the same way."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError


class StrictAnswer(BaseModel):
    """A response schema parsed strictly: ``"1"``, ``true`` and ``1.0`` are no ids, an unknown
    field fails, and so does a duplicate key (which a JSON parser would settle silently by
    keeping the last: ``{"delete": [], "delete": [1]}`` deletes)."""

    model_config = ConfigDict(strict=True, extra="forbid")

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, **kwargs: Any) -> Any:
        """``json_data`` validated, refusing duplicate keys with a ``ValidationError`` (an
        unparseable answer, as every other invalid one)."""
        if dupes := duplicate_keys(json_data):
            error = ValueError(f"duplicate keys in the answer: {', '.join(dupes)}")
            line = {"type": "value_error", "loc": (), "input": json_data, "ctx": {"error": error}}
            raise ValidationError.from_exception_data(cls.__name__, [line])
        return super().model_validate_json(json_data, **kwargs)


def duplicate_keys(json_data: str | bytes | bytearray) -> list[str]:
    """The keys some object of ``json_data`` repeats, sorted; none for invalid JSON (the
    schema's own parse reports that)."""
    found: set[str] = set()

    def collect(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        found.update(k for k in keys if keys.count(k) > 1)
        return dict(pairs)

    try:
        json.loads(json_data, object_pairs_hook=collect)
    except json.JSONDecodeError:
        return []
    return sorted(found)
