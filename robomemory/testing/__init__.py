"""FAKES for tests, notebooks, benchmarks and dry runs; each says it is a fake.

- :mod:`robomemory.testing.chat`: ``ScriptedChatModel`` and ``scripted_llm()``, a chat model
  whose answers a test scripts (everything else — graph, stores, worlds — is real);
- :mod:`robomemory.testing.openai_server`: ``FakeOpenAIServer``, a real HTTP server speaking the
  OpenAI chat API with scripted or minimal schema-valid answers;
- :mod:`robomemory.testing.embeddings`: ``BagOfWordsEmbeddings``, a hashed bag-of-words embedder;
- :mod:`robomemory.testing.policy_server`: an openpi-protocol policy server with a DUMMY policy
  (``python -m robomemory.testing.policy_server``; needs the robot extra, so not imported here);
- ``FakeArm`` (re-exported): lives in :mod:`robomemory.executors.arm`, because a robot started
  without an arm driver uses it (it records commands and moves nothing).
"""

from __future__ import annotations

import importlib
from typing import Any

# Each fake is imported when first used, so the policy server (a subprocess of robot tests)
# starts without loading the chat model's dependencies.
_HOMES = {
    "FakeArm": "robomemory.executors.arm",
    "BagOfWordsEmbeddings": "robomemory.testing.embeddings",
    "FakeOpenAIServer": "robomemory.testing.openai_server",
    "Reply": "robomemory.testing.openai_server",
    "minimal_instance": "robomemory.testing.openai_server",
    **dict.fromkeys(
        [
            "PlanScript",
            "Responder",
            "ScriptedChatModel",
            "by_schema",
            "chat_result",
            "message_text",
            "plan_of",
            "scripted",
            "scripted_llm",
        ],
        "robomemory.testing.chat",
    ),
}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
