"""A client for an openpi policy server (π0), wire-compatible with openpi's ``serve_policy.py``.

The protocol: a websocket (no compression, no size limit); right after the handshake the server
sends its metadata; then each binary msgpack frame from the client is one observation and each
binary frame back is the policy output (``{"actions": (H, D) array, "server_timing": {...}}``).
A *text* frame from the server is an error (a traceback), after which it closes the connection.

openpi runs inference inside its event loop, so it cannot answer websocket pings while it
computes: pings are off by default (``ping_interval_s``). Its first inference compiles the model
(no warm-up in ``serve_policy.py``), so a new connection can send a warm-up request with its own
long timeout (``warmup``/``warmup_timeout_s``). Any undecodable reply (garbage, a truncated frame,
an array whose buffer is too small) is a :class:`PolicyProtocolError`, never a decoder exception.

NumPy arrays travel with openpi's msgpack convention (byte keys ``__ndarray__``, ``data``,
``dtype``, ``shape``; scalars ``__npgeneric__``). The ``msgpack-numpy`` package uses other keys
and is *not* wire-compatible, so the two hooks live here.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
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


# What a malformed frame can raise from msgpack or from rebuilding an array: FormatError,
# StackError, ExtraData, "Unpack failed" (ValueError), "buffer is too small" (TypeError), ...
DECODE_ERRORS = (ValueError, TypeError, KeyError, OverflowError, msgpack.UnpackException)


# -- errors --------------------------------------------------------------------------------------


class PolicyError(RuntimeError):
    """Any failure talking to the policy server."""


class PolicyConnectionError(PolicyError, ConnectionError):
    """The server could not be reached or dropped the connection."""


class PolicyClosedError(PolicyConnectionError):
    """The connection closed while a request waited for its answer (none came back)."""


class PolicyTimeout(PolicyError, TimeoutError):
    """Connecting or inference took longer than allowed."""


class PolicyServerError(PolicyError):
    """The server answered with an error frame (its traceback is the message)."""


class PolicyProtocolError(PolicyError):
    """The server's reply could not be decoded (garbage, truncated, inconsistent arrays)."""


def decode_frame(frame: bytes, what: str) -> Any:
    """Decode one binary frame; any decoder failure becomes :class:`PolicyProtocolError`."""
    try:
        return unpackb(frame)
    except DECODE_ERRORS as exc:
        raise PolicyProtocolError(
            f"undecodable {what} from the policy server ({len(frame)} bytes): "
            f"{type(exc).__name__}: {exc}"
        ) from exc


# -- client --------------------------------------------------------------------------------------


class Pi0Client:
    """Synchronous, thread-safe client of one openpi policy server.

    ``infer`` reconnects once (up to ``max_reconnects``) when the connection was lost before the
    request reached the server, or closed without an answer (a server that restarted: no action
    came back, so none was applied, and the request is sent again); it never resends after a
    timeout or a server error (the connection is dropped instead, so a late answer can never be
    taken for the next one). A reconnect waits up to ``connect_timeout_s`` for the metadata: an
    openpi server answers a new connection only after it has finished the request it was busy
    with. Once connected, a server that refuses connections (restarting) is tried again for up
    to ``reconnect_wait_s`` before the request fails; a first connection fails at once.
    """

    def __init__(
        self,
        url: str,
        *,
        connect_timeout_s: float = 10.0,
        infer_timeout_s: float = 5.0,
        max_reconnects: int = 1,
        api_key: str | None = None,
        ping_interval_s: float | None = None,
        ping_timeout_s: float | None = None,
        warmup: Callable[[dict], dict | None] | None = None,
        warmup_timeout_s: float = 120.0,
        reconnect_wait_s: float = 15.0,
    ) -> None:
        self.url = url if url.startswith(("ws://", "wss://")) else f"ws://{url}"
        if not urlparse(self.url).hostname:
            raise ValueError(f"not a websocket URL: {url!r}")
        self.connect_timeout_s = connect_timeout_s
        self.infer_timeout_s = infer_timeout_s
        self.max_reconnects = max_reconnects
        self.api_key = api_key
        self.ping_interval_s = ping_interval_s
        self.ping_timeout_s = ping_timeout_s
        self.warmup = warmup  # metadata -> a blank request (or None: no warm-up)
        self.warmup_timeout_s = warmup_timeout_s
        self.warmups = 0
        self.reconnect_wait_s = reconnect_wait_s
        self._was_connected = False
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
            self._reconnect(self.connect_timeout_s)
            return self._metadata

    def _reconnect(self, timeout_s: float) -> ClientConnection:
        """The open connection, or a new one; after a lost connection, retried with backoff for
        up to ``reconnect_wait_s`` while the server is unreachable (it may be restarting)."""
        if self._ws is not None or not self._was_connected:
            return self._ensure_connected(timeout_s)
        deadline = time.monotonic() + self.reconnect_wait_s
        delay = 0.1
        while True:
            try:
                return self._ensure_connected(timeout_s)
            except PolicyConnectionError as exc:
                if time.monotonic() + delay > deadline:
                    raise PolicyConnectionError(
                        f"{exc} (still unreachable after {self.reconnect_wait_s:.0f}s)"
                    ) from exc
                log.warning("policy server unreachable, retrying in %.1fs: %s", delay, exc)
            time.sleep(delay)
            delay = min(2 * delay, 1.0)

    def _ensure_connected(self, timeout_s: float) -> ClientConnection:
        if self._ws is not None:
            return self._ws
        headers = {"Authorization": f"Api-Key {self.api_key}"} if self.api_key else None
        try:
            ws = self._stack.enter_context(
                connect(
                    self.url,
                    open_timeout=timeout_s,
                    close_timeout=0.2,  # a busy openpi server cannot answer a close
                    compression=None,
                    max_size=None,
                    additional_headers=headers,
                    ping_interval=self.ping_interval_s,
                    ping_timeout=self.ping_timeout_s,
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
        try:
            meta = decode_frame(first, "metadata")
        except PolicyProtocolError:
            self._stack.close()
            raise
        self._metadata = meta if isinstance(meta, dict) else {"metadata": meta}
        self._ws = ws
        self._was_connected = True
        log.info("connected to policy server %s (metadata: %s)", self.url, list(self._metadata))
        self._warm_up(ws)
        return ws

    def _warm_up(self, ws: ClientConnection) -> None:
        """One blank inference with the long warm-up timeout (openpi compiles on the first)."""
        request = self.warmup(self._metadata) if self.warmup is not None else None
        if request is None:
            return
        started = time.monotonic()
        try:
            ws.send(packb(request))
        except ConnectionClosed as exc:
            self._drop()
            raise PolicyConnectionError(f"policy server closed before warm-up: {exc}") from exc
        self._receive(ws, self.warmup_timeout_s, "warm-up")
        self.warmups += 1
        log.info("policy warm-up took %.1fs", time.monotonic() - started)

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
                ws = self._reconnect(self.connect_timeout_s)
                try:
                    ws.send(payload)
                except ConnectionClosed as exc:
                    self._drop()
                    if attempt < self.max_reconnects:
                        log.warning("policy connection lost before send; reconnecting")
                        continue
                    raise PolicyConnectionError(f"policy server {self.url} closed: {exc}") from exc
                try:
                    return self._receive(ws, timeout)
                except PolicyClosedError:
                    if attempt < self.max_reconnects:
                        log.warning("policy connection closed with no answer; reconnecting")
                        continue
                    raise
        raise PolicyConnectionError(f"policy server {self.url}: no connection")  # pragma: no cover

    def _receive(self, ws: ClientConnection, timeout: float, what: str = "inference") -> dict:
        try:
            reply = ws.recv(timeout=timeout)
        except TimeoutError as exc:
            self._drop()
            raise PolicyTimeout(f"policy {what} took longer than {timeout:.2f}s") from exc
        except ConnectionClosed as exc:
            self._drop()
            raise PolicyClosedError(f"policy server closed during {what}: {exc}") from exc
        if isinstance(reply, str):
            self._drop()
            raise PolicyServerError(f"policy server error:\n{reply}")
        try:
            out = decode_frame(reply, f"{what} reply")
        except PolicyProtocolError:
            self._drop()  # the stream can no longer be trusted
            raise
        if not isinstance(out, dict):
            self._drop()
            raise PolicyProtocolError(f"policy server sent {type(out).__name__}, expected a dict")
        return out
