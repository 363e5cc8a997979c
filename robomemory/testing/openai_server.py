"""A FAKE OpenAI-compatible chat server for benchmarks and tests (no model behind it).

It is a real HTTP server on 127.0.0.1 (stdlib ``ThreadingHTTPServer``) serving
``POST /v1/chat/completions``: after a fixed ``latency_s`` it answers with a JSON document valid
for the request's ``response_format.json_schema.schema``, produced by a ``responder`` if given,
else by :func:`minimal_instance`. It records every request, reports usage tokens and serves
many requests concurrently, so the whole client path (ChatOpenAI, json_schema parsing, retries,
metering, concurrency) is exercised for real while only the model's answers are fake.

    with FakeOpenAIServer(latency_s=0.2) as srv:
        llm = ChatOpenAI(base_url=srv.base_url, api_key="fake", model="fake")

A responder may return a :class:`Reply` to send an HTTP response of its own instead (an error
status, an HTML page, a body without choices): a server that is broken, not a model.
"""

from __future__ import annotations

import itertools
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reply:
    """An HTTP response sent as it is, instead of a chat completion: ``status``, ``body`` (a
    dict is sent as JSON) and ``content_type``."""

    status: int = 200
    body: dict[str, Any] | str = ""
    content_type: str = "application/json"

    @classmethod
    def error(cls, status: int, message: str = "fake server error") -> Reply:
        """An OpenAI-style error document with ``status``."""
        return cls(status, {"error": {"message": message, "type": "fake", "code": status}})


# responder(schema_name, schema, messages) -> a dict (sent as JSON), a str (sent verbatim as the
# answer's content, e.g. to simulate an unparseable answer) or a Reply (sent as the response).
Responder = Callable[[str, dict[str, Any], list[dict[str, Any]]], dict[str, Any] | str | Reply]


def minimal_instance(schema: dict[str, Any], root: dict[str, Any] | None = None) -> Any:
    """The smallest simple instance of a JSON schema: first enum value, "", 0, false, [], and
    objects with their required properties; follows ``$ref`` into ``$defs`` and takes the first
    branch of ``anyOf`` / ``oneOf``."""
    root = root if root is not None else schema
    if "$ref" in schema:
        return minimal_instance(_resolve(schema["$ref"], root), root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return minimal_instance(schema[key][0], root)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged.update(_resolve(part["$ref"], root) if "$ref" in part else part)
        return minimal_instance(merged, root)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0] if kind else None
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    match kind:
        case "object":
            props = schema.get("properties", {})
            return {k: minimal_instance(props.get(k, {}), root) for k in schema.get("required", [])}
        case "array":
            n = int(schema.get("minItems", 0))
            return [minimal_instance(schema.get("items", {}), root) for _ in range(n)]
        case "string":
            return "x" * int(schema.get("minLength", 0))
        case "integer" | "number":
            return _number(schema, integer=kind == "integer")
        case "boolean":
            return False
        case "null":
            return None
    raise ValueError(f"unsupported JSON schema type {kind!r}")


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    if not ref.startswith("#/"):
        raise ValueError(f"only local $refs are supported, got {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _number(schema: dict[str, Any], integer: bool) -> int | float:
    value: float = 0
    if "minimum" in schema and value < schema["minimum"]:
        value = schema["minimum"]
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        value = schema["exclusiveMinimum"] + 1
    if "maximum" in schema and value > schema["maximum"]:
        value = schema["maximum"]
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        value = schema["exclusiveMaximum"] - 1
    return int(value) if integer else float(value)


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _message_text(messages: list[dict[str, Any]]) -> str:
    parts: list[str] = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [p.get("text", "") for p in content if isinstance(p, dict)]
    return "\n".join(parts)


class FakeOpenAIServer:
    """A FAKE OpenAI-compatible chat endpoint on 127.0.0.1; a context manager.

    ``requests`` holds every chat request body received (thread-safe append).
    """

    def __init__(
        self,
        latency_s: float = 0.0,
        responder: Responder | None = None,
        port: int = 0,
        owned_by: str = "fake",
    ):
        self.latency_s = latency_s
        self.owned_by = owned_by  # what /models says of the model ("llamacpp" for llama.cpp)
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler_class(self))
        self._httpd.daemon_threads = True
        self._httpd.request_queue_size = 128
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, name="fake-openai", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def answer(self, body: dict[str, Any]) -> dict[str, Any] | Reply:
        """Build the chat.completion document for one request body (after the latency), or the
        responder's own :class:`Reply`."""
        with self._lock:
            self.requests.append(body)
            n = next(self._ids)
        if self.latency_s:
            time.sleep(self.latency_s)
        messages = body.get("messages", [])
        fmt = body.get("response_format") or {}
        spec = fmt.get("json_schema") or {}
        name = spec.get("name", "")
        schema = spec.get("schema") or fmt.get("schema") or {}
        if self.responder is not None:
            out = self.responder(name, schema, messages)
        else:
            out = minimal_instance(schema) if schema else {}
        if isinstance(out, Reply):
            return out
        text = out if isinstance(out, str) else json.dumps(out)
        prompt_tokens = _tokens(_message_text(messages))
        completion_tokens = _tokens(text)
        finish = "stop"
        limit = body.get("max_tokens") or body.get("max_completion_tokens")
        if limit and completion_tokens > int(limit):  # cut where a real server stops
            text, completion_tokens, finish = text[: int(limit) * 4], int(limit), "length"
        return {
            "id": f"chatcmpl-fake-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": finish,
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def _handler_class(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("fake-openai: " + format, *args)

        def _send(
            self, status: int, payload: dict[str, Any] | str, kind: str = "application/json"
        ) -> None:
            data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                model = {"id": "fake", "object": "model", "owned_by": server.owned_by}
                self._send(200, {"object": "list", "data": [model]})
            elif self.path.rstrip("/") in ("/health", "/v1/health"):
                self._send(200, {"status": "ok"})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            length = int(self.headers.get("Content-Length", 0))
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError as exc:
                self._send(400, {"error": {"message": f"bad JSON: {exc}"}})
                return
            try:
                payload = server.answer(body)
            except (ValueError, KeyError, TypeError) as exc:
                log.warning("fake-openai: responder failed: %s", exc)
                self._send(500, {"error": {"message": f"fake responder failed: {exc}"}})
                return
            if isinstance(payload, Reply):
                self._send(payload.status, payload.body, payload.content_type)
                return
            self._send(200, payload)

    return Handler
