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
