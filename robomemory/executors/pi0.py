"""A client for an openpi policy server (π0), wire-compatible with openpi's ``serve_policy.py``.

The protocol: a websocket (no compression, no size limit); right after the handshake the server
sends its metadata; then each binary msgpack frame from the client is one observation and each
binary frame back is the policy output (``{"actions": (H, 14) array, "server_timing": {...}}``).
A *text* frame from the server is an error (a traceback), after which it closes the connection.

NumPy arrays travel with openpi's msgpack convention (byte keys ``__ndarray__``, ``data``,
``dtype``, ``shape``; scalars ``__npgeneric__``). The ``msgpack-numpy`` package uses other keys
and is *not* wire-compatible, so the two hooks live here.
"""

from __future__ import annotations

import logging
import threading
from contextlib import ExitStack
from typing import Any
from urllib.parse import urlparse

import msgpack
import numpy as np
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI
from websockets.sync.client import ClientConnection, connect

log = logging.getLogger(__name__)


# -- openpi msgpack convention -------------------------------------------------------------------


def pack_array(obj: Any) -> Any:
    """msgpack ``default`` hook: NumPy arrays and scalars as openpi encodes them."""
    if isinstance(obj, np.ndarray | np.generic) and obj.dtype.kind in ("V", "O", "c"):
        raise ValueError(f"unsupported dtype for the policy wire format: {obj.dtype}")
    if isinstance(obj, np.ndarray):
        arr = np.ascontiguousarray(obj)
        return {
            b"__ndarray__": True,
            b"data": arr.tobytes(),
            b"dtype": arr.dtype.str,
            b"shape": arr.shape,
        }
    if isinstance(obj, np.generic):
        return {b"__npgeneric__": True, b"data": obj.item(), b"dtype": obj.dtype.str}
    return obj


def unpack_array(obj: dict) -> Any:
    """msgpack ``object_hook``: the inverse of :func:`pack_array`."""
    if b"__ndarray__" in obj:
        return np.ndarray(buffer=obj[b"data"], dtype=np.dtype(obj[b"dtype"]), shape=obj[b"shape"])
    if b"__npgeneric__" in obj:
        return np.dtype(obj[b"dtype"]).type(obj[b"data"])
    return obj


def packb(obj: Any) -> bytes:
    return msgpack.packb(obj, default=pack_array)


def unpackb(data: bytes) -> Any:
    return msgpack.unpackb(data, object_hook=unpack_array)


# -- errors --------------------------------------------------------------------------------------


class PolicyError(RuntimeError):
    """Any failure talking to the policy server."""


class PolicyConnectionError(PolicyError, ConnectionError):
    """The server could not be reached or dropped the connection."""


class PolicyTimeout(PolicyError, TimeoutError):
    """Connecting or inference took longer than allowed."""


class PolicyServerError(PolicyError):
    """The server answered with an error frame (its traceback is the message)."""


# -- client --------------------------------------------------------------------------------------


class Pi0Client:
    """Synchronous, thread-safe client of one openpi policy server.

    ``infer`` reconnects once (up to ``max_reconnects``) when the connection was lost before the
    request reached the server; it never resends after a timeout or a server error (the
    connection is dropped instead, so a late answer can never be taken for the next one).
    """

    def __init__(
        self,
        url: str,
        *,
        connect_timeout_s: float = 10.0,
        infer_timeout_s: float = 5.0,
        max_reconnects: int = 1,
        api_key: str | None = None,
    ) -> None:
        self.url = url if url.startswith(("ws://", "wss://")) else f"ws://{url}"
        if not urlparse(self.url).hostname:
            raise ValueError(f"not a websocket URL: {url!r}")
        self.connect_timeout_s = connect_timeout_s
        self.infer_timeout_s = infer_timeout_s
        self.max_reconnects = max_reconnects
        self.api_key = api_key
        self._ws: ClientConnection | None = None
        self._stack = ExitStack()  # owns the open connection (closed on drop)
        self._metadata: dict = {}
        self._lock = threading.Lock()

    # connection ---------------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self._ws is not None

    @property
    def metadata(self) -> dict:
        """The server's metadata (sent first on every connection)."""
        return self._metadata

    def connect(self) -> dict:
        """Open the connection (if needed) and return the server's metadata."""
        with self._lock:
            self._ensure_connected(self.connect_timeout_s)
            return self._metadata

    def _ensure_connected(self, timeout_s: float) -> ClientConnection:
        if self._ws is not None:
            return self._ws
        headers = {"Authorization": f"Api-Key {self.api_key}"} if self.api_key else None
        try:
            ws = self._stack.enter_context(
                connect(
                    self.url,
                    open_timeout=timeout_s,
                    close_timeout=1.0,
                    compression=None,
                    max_size=None,
                    additional_headers=headers,
                )
            )
        except TimeoutError as exc:
            raise PolicyTimeout(f"policy server {self.url}: connect timed out") from exc
        except (OSError, InvalidHandshake, InvalidURI) as exc:
            raise PolicyConnectionError(f"policy server {self.url} unreachable: {exc}") from exc
        try:
            first = ws.recv(timeout=timeout_s)
        except TimeoutError as exc:
            self._stack.close()
            raise PolicyTimeout(f"policy server {self.url}: no metadata in {timeout_s}s") from exc
        except ConnectionClosed as exc:
            self._stack.close()
            raise PolicyConnectionError(f"policy server {self.url} closed: {exc}") from exc
        if isinstance(first, str):
            self._stack.close()
            raise PolicyServerError(f"policy server error on connect:\n{first}")
        meta = unpackb(first)
        self._metadata = meta if isinstance(meta, dict) else {"metadata": meta}
        self._ws = ws
        log.info("connected to policy server %s (metadata keys: %s)", self.url, list(meta or {}))
        return ws

    def _drop(self) -> None:
        self._ws = None
        self._stack.close()

    def close(self) -> None:
        with self._lock:
            self._drop()

    # inference ----------------------------------------------------------------------------------

    def infer(self, obs: dict, timeout_s: float | None = None) -> dict:
        """Send one observation; return the server's output dict (``actions`` etc.)."""
        timeout = self.infer_timeout_s if timeout_s is None else timeout_s
        payload = packb(obs)
        with self._lock:
            for attempt in range(self.max_reconnects + 1):
                ws = self._ensure_connected(min(self.connect_timeout_s, max(timeout, 0.01)))
                try:
                    ws.send(payload)
                except ConnectionClosed as exc:
                    self._drop()
                    if attempt < self.max_reconnects:
                        log.warning("policy connection lost before send; reconnecting")
                        continue
                    raise PolicyConnectionError(f"policy server {self.url} closed: {exc}") from exc
                return self._receive(ws, timeout)
        raise PolicyConnectionError(f"policy server {self.url}: no connection")  # pragma: no cover

    def _receive(self, ws: ClientConnection, timeout: float) -> dict:
        try:
            reply = ws.recv(timeout=timeout)
        except TimeoutError as exc:
            self._drop()
            raise PolicyTimeout(f"policy inference took longer than {timeout:.2f}s") from exc
        except ConnectionClosed as exc:
            self._drop()
            raise PolicyConnectionError(f"policy server closed during inference: {exc}") from exc
        if isinstance(reply, str):
            self._drop()
            raise PolicyServerError(f"policy server error:\n{reply}")
        out = unpackb(reply)
        if not isinstance(out, dict):
            raise PolicyError(f"policy server sent {type(out).__name__}, expected a dict")
        return out
