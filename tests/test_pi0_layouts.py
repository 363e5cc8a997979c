"""Policy layouts and the link behaviour openpi servers need, against the strict dummy server
(layout checking, inference blocking its event loop as openpi's does). The arm is a FAKE."""

from __future__ import annotations

import socket
import threading
import time
from contextlib import ExitStack

import numpy as np
import pytest
from robot_servers import policy_server, server_process

from robomemory.core import Action, Outcome
from robomemory.executors.arm import ArmObservation, FakeArm
from robomemory.executors.layouts import load_layout, reset_target, resolve_layout
from robomemory.executors.pi0 import Pi0Client, PolicyConnectionError, PolicyTimeout
from robomemory.executors.skills import ERR_POLICY_SERVER, Pi0Skill, SkillConfig

FAST = SkillConfig(control_hz=2000, actions_per_chunk=10, max_steps=20)
CAMERAS = {
    "aloha": ("cam_high", "cam_left_wrist", "cam_right_wrist"),
    "droid": ("exterior_image_1_left", "wrist_image_left"),
    "libero": ("image", "wrist_image"),
}
STATE_DIM = {"aloha": 14, "droid": 8, "libero": 8}


def arm_for(name: str) -> FakeArm:
    return FakeArm(cameras=CAMERAS[name], state=np.zeros(STATE_DIM[name]))


@pytest.mark.parametrize(("name", "dim"), [("aloha", 14), ("droid", 8), ("libero", 7)])
def test_each_layout_drives_the_arm_through_a_strict_server(name, dim):
    with policy_server("--layout", name, "--block") as (_, port):
        client = Pi0Client(f"ws://127.0.0.1:{port}")
        arm = arm_for(name)
        try:
            res = Pi0Skill(client, arm, FAST, layout=name).run(Action(verb="pick_up", args=["cup"]))
        finally:
            client.close()
    assert res.outcome == Outcome.SUCCEEDED, res.message
    assert len(arm.applied) == 20 and arm.applied[0].shape == (dim,)
    assert client.warmups == 1  # the blank request of the layout was accepted too


def test_a_layout_mismatch_is_the_servers_error_not_a_silent_success():
    with policy_server("--layout", "droid", "--block") as (_, port):
        client = Pi0Client(f"ws://127.0.0.1:{port}", warmup_timeout_s=5)
        client.warmup = lambda meta: None  # skip the warm-up: the first skill request must fail
        arm = arm_for("aloha")
        try:
            res = Pi0Skill(client, arm, FAST, layout="aloha").run(Action(verb="open", args=["box"]))
        finally:
            client.close()
    assert res.outcome == Outcome.ERROR and res.error_code == ERR_POLICY_SERVER
    assert "does not match layout droid" in res.message and arm.applied == []


def test_layout_named_by_the_server_metadata_and_reset_pose_applied():
    args = ("--layout", "libero", "--announce-layout", "--reset-pose", "0.1,0,0,0,0,0,0.5")
    with policy_server(*args) as (_, port):
        client = Pi0Client(f"ws://127.0.0.1:{port}")
        arm = arm_for("libero")
        skill = Pi0Skill(client, arm, FAST)
        try:
            res = skill.run(Action(verb="pick_up", args=["cup"]))
        finally:
            client.close()
    assert res.outcome == Outcome.SUCCEEDED and skill.layout.name == "libero"
    np.testing.assert_allclose(arm.applied[0], [0.1, 0, 0, 0, 0, 0, 0.5])
    assert len(arm.applied) == 21  # the reset move, then 20 policy steps


def test_aloha_reset_pose_goes_to_both_arms_and_keeps_the_grippers():
    layout = load_layout("aloha")
    state = np.arange(14, dtype=float)
    target = reset_target(layout, [0, -1.5, 1.5, 0, 0, 0], state)
    np.testing.assert_allclose(target[0:6], [0, -1.5, 1.5, 0, 0, 0])
    np.testing.assert_allclose(target[7:13], [0, -1.5, 1.5, 0, 0, 0])
    assert target[6] == 6 and target[13] == 13
    with pytest.raises(ValueError):
        reset_target(layout, [0, 1, 2], state)


def test_user_layout_file_and_float_frames_scaled_like_openpi(tmp_path):
    path = tmp_path / "my_arm.yaml"
    path.write_text(
        "cameras: {front: observation/front}\nimage_size: 32\n"
        "state: [{key: observation/q, dim: 6}]\naction_dim: 6\n"
    )
    layout = load_layout(path)
    assert layout.name == "my_arm" and layout.image_layout == "HWC"
    frame = np.full((64, 64, 3), 0.5, dtype=np.float32)
    req = layout.build(ArmObservation({"front": frame}, np.ones(6)), "wave")
    img = req["observation/front"]
    assert img.dtype == np.uint8 and img.shape == (32, 32, 3) and img[16, 16, 0] == 127
    assert layout.problems(req) == [] and req["observation/q"].shape == (6,)
    assert load_layout("aloha").problems(req)  # another layout sees what is missing
    with pytest.raises(ValueError, match="unknown policy layout"):
        load_layout("nope")
    assert resolve_layout(None, {"layout": "droid"}).name == "droid"
    assert resolve_layout(None, {"reset_pose": [0] * 6}).name == "aloha"


def test_pings_off_by_default_survive_a_blocking_inference():
    with policy_server("--block", "--slow-on", "slow", "--slow-s", "1.2") as (_, port):
        url = f"ws://127.0.0.1:{port}"
        obs = load_layout("aloha").example() | {"prompt": "slow"}
        quiet = Pi0Client(url, infer_timeout_s=5)
        assert quiet.infer(obs)["actions"].shape == (50, 14)
        quiet.close()
        # With pings, the blocked server cannot answer them and the link dies (close 1011).
        pinging = Pi0Client(url, infer_timeout_s=5, ping_interval_s=0.2, ping_timeout_s=0.2)
        with pytest.raises(PolicyConnectionError):
            pinging.infer(obs)
        pinging.close()


def test_cold_start_warm_up_and_reconnect_to_a_busy_server():
    with policy_server("--block", "--slow-on", "slow", "--slow-s", "1.0") as (_, port):
        url = f"ws://127.0.0.1:{port}"
        blank = load_layout("aloha").example()
        # The warm-up (a compile on a real server) gets its own long timeout.
        client = Pi0Client(
            url,
            infer_timeout_s=0.3,
            connect_timeout_s=5,
            warmup=lambda meta: blank | {"prompt": "slow warm-up"},
            warmup_timeout_s=5,
        )
        client.connect()
        assert client.warmups == 1
        client.warmup = None
        with pytest.raises(PolicyTimeout):
            client.infer(blank | {"prompt": "slow"})
        # The server is still busy with the stale request: the reconnect waits the connect
        # timeout for its metadata, not the 0.3 s inference timeout.
        assert client.infer(blank)["actions"].shape == (50, 14)
        client.close()


def test_bench_reports_every_layout(capsys):
    from robomemory.cli import main

    assert main(["bench", "pi0-client", "-n", "3", "--warmup", "1"]) == 0
    out = capsys.readouterr().out
    assert all(f"[{name}]" in out for name in ("aloha", "droid", "libero"))
    assert "(H,8) chunk" in out and "(H,7) chunk" in out


def test_bench_json_is_one_row_per_layout_on_stdout(capsys):
    import json

    from robomemory.cli import main

    capsys.readouterr()
    argv = ["bench", "pi0-client", "-n", "3", "--warmup", "1", "--layout", "droid", "--json"]
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)  # stdout is the JSON document alone
    assert [(r["layout"], r["action_dim"], r["iterations"]) for r in rows] == [("droid", 8, 3)]
    # every request's round trip holds the server's own inference time
    assert rows[0]["rtt_median_ms"] >= rows[0]["server_median_ms"] > 0


def test_an_arm_that_does_not_fit_the_layout_is_an_error_result():
    with policy_server("--layout", "aloha", "--block") as (_, port):
        client = Pi0Client(f"ws://127.0.0.1:{port}")
        arm = FakeArm(state=np.zeros(7))  # a 7-dof arm behind an ALOHA (14) policy
        try:
            res = Pi0Skill(client, arm, FAST).run(Action(verb="pick_up", args=["cup"]))
        finally:
            client.close()
    assert res.outcome == Outcome.ERROR and "7 values, 14 needed" in res.message
    assert arm.applied == [] and arm.stop_calls == 1


@pytest.mark.parametrize(("name", "dim"), [("droid", 8), ("libero", 7)])
def test_a_server_that_names_no_layout_gets_the_one_it_answers(name, dim):
    """openpi's servers send no layout in their metadata: the skill tries the built-in ones."""
    with policy_server("--layout", name, "--block") as (_, port):
        client = Pi0Client(f"ws://127.0.0.1:{port}")
        arm = arm_for(name)
        skill = Pi0Skill(client, arm, FAST)
        try:
            res = skill.run(Action(verb="pick_up", args=["cup"]))
            again = skill.run(Action(verb="pick_up", args=["cup"]))
        finally:
            client.close()
    assert res.outcome == Outcome.SUCCEEDED, res.message
    assert again.outcome == Outcome.SUCCEEDED and skill.layout.name == name
    assert arm.applied[0].shape == (dim,) and len(arm.applied) == 40
    assert client.warmups == 0  # no blind ALOHA warm-up: the tried layouts' requests warmed it


def test_a_server_whose_layout_is_none_of_the_built_in_ones_names_the_flag(tmp_path):
    spec = tmp_path / "my_arm.yaml"
    spec.write_text(
        "cameras: {front: observation/front}\n"
        "state: [{key: observation/joints, dim: 6}]\naction_dim: 6\n"
    )
    with policy_server("--layout", str(spec), "--block") as (_, port):
        client = Pi0Client(f"ws://127.0.0.1:{port}")
        arm = FakeArm(cameras=("front",), state=np.zeros(6))
        try:
            res = Pi0Skill(client, arm, FAST).run(Action(verb="pick_up", args=["cup"]))
        finally:
            client.close()
    assert res.outcome == Outcome.ERROR and arm.applied == []
    assert "\n" not in res.message and "--policy-layout" in res.message
    assert "refused the aloha, droid, libero requests" in res.message


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_request_sent_while_the_policy_server_restarts_waits_for_it():
    port = _free_port()
    argv = ["-m", "robomemory.testing.policy_server", "--port", str(port), "--layout", "aloha"]
    with ExitStack() as stack:
        proc, _ = stack.enter_context(server_process(argv))
        # a generous wait: a server process starts in ~1 s, but in >10 s on a loaded machine
        client = Pi0Client(f"ws://127.0.0.1:{port}", connect_timeout_s=2, reconnect_wait_s=60)
        stack.callback(client.close)
        arm = arm_for("aloha")
        skill = Pi0Skill(client, arm, FAST, layout="aloha")
        assert skill.run(Action(verb="pick_up", args=["cup"])).outcome == Outcome.SUCCEEDED
        proc.terminate()
        proc.wait(5)
        restarted = threading.Timer(1.0, lambda: stack.enter_context(server_process(argv)))
        restarted.start()
        started = time.monotonic()
        res = skill.run(Action(verb="pick_up", args=["cup"]))
        restarted.join()
        assert res.outcome == Outcome.SUCCEEDED, res.message
        assert 0.8 < time.monotonic() - started < 60


def test_the_wait_for_a_restarting_server_is_bounded():
    with policy_server("--layout", "aloha") as (proc, port):
        client = Pi0Client(f"ws://127.0.0.1:{port}", connect_timeout_s=1, reconnect_wait_s=1.0)
        skill = Pi0Skill(client, arm_for("aloha"), FAST, layout="aloha")
        assert skill.run(Action(verb="pick_up", args=["cup"])).outcome == Outcome.SUCCEEDED
        proc.terminate()
        proc.wait(5)
        started = time.monotonic()
        res = skill.run(Action(verb="pick_up", args=["cup"]))
        client.close()
    assert res.outcome == Outcome.ERROR and "still unreachable after 1s" in res.message
    assert time.monotonic() - started < 5


class _MetadataOnly:
    """A policy client that connects and announces ``metadata`` (its reset_pose) only."""

    warmup = None
    connected = True

    def __init__(self, reset_pose: object):
        self.metadata = {"reset_pose": reset_pose}

    def connect(self) -> None:
        pass


@pytest.mark.parametrize(
    "pose",
    ["0,0,0,0,0,0,0", {"a": 1}, [0, [1, 2], 3], b"\x00" * 7, [True] * 7, [[0] * 7]],
    ids=["string", "dict", "ragged", "bytes", "bools", "nested"],
)
def test_a_bad_reset_pose_is_an_error_result_and_the_arm_is_stopped(pose):
    arm = arm_for("libero")
    skill = Pi0Skill(_MetadataOnly(pose), arm, FAST, layout="libero")
    res = skill.run(Action(verb="pick_up", args=["cup"]))
    assert res.outcome == Outcome.ERROR and "reset_pose" in res.message
    assert arm.stop_calls == 1 and arm.applied == []


@pytest.mark.parametrize(
    "settings",
    [{"control_hz": float("inf")}, {"control_hz": float("nan")}, {"contol_hz": 10}],
    ids=["inf", "nan", "misspelt"],
)
def test_skill_settings_are_strict(settings):
    with pytest.raises(ValueError):
        SkillConfig(**settings)
    with pytest.raises(ValueError):
        SkillConfig(max_steps=True)
