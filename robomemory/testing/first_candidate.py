"""A FAKE model that needs no weights: the project's own scripted answers (``--model fake``).

Every structured call gets the smallest answer its schema accepts (``minimal_instance``): the
planner's ``next`` is the first candidate the grounding offers and its ``then`` is empty (so the
critic, which checks later steps, is rarely asked), summaries and memory queries are empty, a
consolidation keeps nothing. The critic approves. Deterministic and offline: the model-free
``first`` agent of ``bench suite`` (what the rules do without a model) and a dry run of the
graph, Studio or a notebook on a machine without the model file. It counts no tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage

from robomemory.config import FAKE_MODEL_NAME
from robomemory.structured import StructuredLLM
from robomemory.testing.chat import ScriptedChatModel, scripted

__all__ = ["FAKE_MODEL_NAME", "first_candidate_chat_model", "first_candidate_llm"]


def _approve(_messages: Sequence[BaseMessage]) -> dict:
    return {"approve": True, "reason": ""}


def first_candidate_chat_model() -> ScriptedChatModel:
    """The chat model: minimal answers, an approving critic, no tokens counted."""
    return ScriptedChatModel(
        responder=scripted({"CriticVerdict": _approve}), calls=[], metered=False
    )


def first_candidate_llm(max_retries: int = 1) -> StructuredLLM:
    """A StructuredLLM over :func:`first_candidate_chat_model` (a FAKE model)."""
    return StructuredLLM(first_candidate_chat_model(), max_retries=max_retries)
