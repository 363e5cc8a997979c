"""The spatial resolver's edge ids are strict integers, as the Mem0 updater's item ids."""

from __future__ import annotations

import pytest

from robomemory.prompts import spatial
from robomemory.prompts.spatial import resolver_model
from robomemory.structured import parse_answer


@pytest.mark.parametrize("loose", ["true", "1.0", '"1"', "false"])
def test_the_resolver_takes_only_integer_ids(loose):
    schema = resolver_model((0, 1, 2))
    with pytest.raises(ValueError):
        parse_answer(schema, f'{{"delete": [{loose}]}}')
    assert parse_answer(schema, '{"delete": [1]}').delete == [1]
    with pytest.raises(ValueError):
        parse_answer(spatial.ResolverDecision, f'{{"delete": [{loose}]}}')


DUPLICATE = '{"delete": [], "delete": [1]}'  # a JSON parser keeps the last: [1]


def test_the_resolver_refuses_a_duplicate_key_as_the_updater_does():
    """One strict parse for both: the same error type and words for a repeated key."""
    from pydantic import ValidationError

    from robomemory.prompts.longterm import MemoryDecision

    errors = []
    for schema, text in [
        (resolver_model((0, 1, 2)), DUPLICATE),
        (spatial.ResolverDecision, DUPLICATE),
        (MemoryDecision, '{"event": "NOOP", "event": "DELETE", "id": 0}'),
    ]:
        with pytest.raises(ValidationError, match="duplicate keys in the answer") as err:
            parse_answer(schema, text)
        errors.append(type(err.value))
    assert len(set(errors)) == 1
    assert parse_answer(resolver_model((0, 1)), '{"delete": [1]}').delete == [1]
