"""π0 client against a real local process speaking openpi's policy-server protocol."""

from __future__ import annotations

import socket

import msgpack
import numpy as np
import pytest
from robot_servers import policy_server

from robomemory.executors.pi0 import (
    Pi0Client,
    PolicyConnectionError,
    PolicyServerError,
    PolicyTimeout,
    packb,
    unpackb,
)


def _obs(prompt: str = "pick up the banana") -> dict:
    cams = ("cam_high", "cam_left_wrist", "cam_right_wrist")
    return {
        "images": {c: np.full((3, 224, 224), 7, dtype=np.uint8) for c in cams},
        "state": np.arange(14, dtype=np.float32),
        "prompt": prompt,
    }


@pytest.fixture(scope="module")
def server():
    with policy_server("--fail-on", "explode", "--slow-on", "slowly", "--slow-s", "1.5") as (
        proc,
        port,
    ):
        yield f"ws://127.0.0.1:{port}"


def test_codec_uses_openpi_wire_keys_and_round_trips():
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    raw = msgpack.unpackb(packb({"a": arr, "s": np.int64(3)}))
    assert raw["a"][b"__ndarray__"] is True
    assert raw["a"][b"dtype"] == "<f4" and list(raw["a"][b"shape"]) == [2, 3]
    assert raw["s"][b"__npgeneric__"] is True
    back = unpackb(packb({"x": {"y": arr}, "u8": np.ones((3, 2, 2), np.uint8), "t": "text"}))
    np.testing.assert_array_equal(back["x"]["y"], arr)
    assert back["u8"].dtype == np.uint8 and back["u8"].shape == (3, 2, 2)
    assert back["t"] == "text"
    with pytest.raises(ValueError):
        packb(np.array([object()], dtype=object))


def test_metadata_first_then_inference(server):
    client = Pi0Client(server)
    try:
        meta = client.connect()
        assert meta["action_horizon"] == 50 and meta["action_dim"] == 14
        out = client.infer(_obs())
        assert out["actions"].shape == (50, 14)
        # The dummy policy offsets the state we sent: proves the state crossed the wire intact.
        np.testing.assert_allclose(out["actions"][0], np.arange(14) + 0.001, rtol=1e-5)
        assert "infer_ms" in out["server_timing"]
        second = client.infer(_obs())
        assert "prev_total_ms" in second["server_timing"]
    finally:
        client.close()


def test_server_error_frame_raises_then_client_reconnects(server):
    client = Pi0Client(server)
    try:
        with pytest.raises(PolicyServerError, match="dummy policy failure"):
            client.infer(_obs("explode now"))
        assert not client.connected
        assert client.infer(_obs())["actions"].shape == (50, 14)
        assert client.connected
    finally:
        client.close()


def test_slow_server_times_out_and_next_call_is_not_confused(server):
    client = Pi0Client(server, infer_timeout_s=0.3)
    try:
        with pytest.raises(PolicyTimeout):
            client.infer(_obs("move slowly"))
        out = client.infer(_obs("fast again"), timeout_s=5.0)
        np.testing.assert_allclose(out["actions"][0], np.arange(14) + 0.001, rtol=1e-5)
    finally:
        client.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_server_down_is_a_connection_error():
    client = Pi0Client(f"ws://127.0.0.1:{_free_port()}", connect_timeout_s=1.0)
    with pytest.raises(PolicyConnectionError):
        client.infer(_obs())


def test_server_going_away_mid_session():
    with policy_server() as (proc, port):
        client = Pi0Client(
            f"ws://127.0.0.1:{port}",
            connect_timeout_s=1.0,
            infer_timeout_s=2.0,
            reconnect_wait_s=0.5,
        )
        client.connect()
        proc.terminate()
        proc.wait(5)
        with pytest.raises(PolicyConnectionError):
            client.infer(_obs())
        with pytest.raises(PolicyConnectionError):
            client.infer(_obs())
        client.close()
