"""A small rosbridge-protocol websocket server for tests: a FAKE Nav2 / move_base behind it.

It speaks the rosbridge v2 JSON ops that roslibpy uses: ``send_action_goal`` /
``cancel_action_goal`` → ``action_feedback`` / ``action_result`` (ROS 2 actions, goals handled
concurrently as with ``send_action_goals_in_new_thread:=true``), and ``advertise`` /
``subscribe`` / ``publish`` for ROS 1 actionlib topics of ``/move_base``.

The scenario is chosen by the goal's x coordinate (int(x)):
1 succeed after 3 feedbacks · 2 abort (error 104 "Failed to create plan") · 3 run until canceled
(feedback every 50 ms) · 4 reject · 5 result with an unknown-status failure · 6 one feedback,
then silence until canceled (a hung server) · 7 one feedback, then the connection is dropped.
Every received op is appended to the JSON-lines file given by ``--log``.

``--variant`` mimics other servers: ``rs`` (rosbridge-server-rs: ``result`` is true only for
status 4, so aborted/canceled arrive as ``result: false``, and a rejected goal is reported as
aborted, status 6), ``old`` (rosbridge_suite before its
late-2025 fixes: a rejected goal or a missing action server gets no answer at all).

    python tests/rosbridge_server.py --port 0 --log ops.jsonl   # prints "PORT <n>"
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

SUCCEEDED, CANCELED, ABORTED = 4, 5, 6  # action_msgs/GoalStatus
R1_ACTIVE, R1_PREEMPTED, R1_SUCCEEDED, R1_ABORTED, R1_REJECTED = 1, 2, 3, 4, 5


class Bridge:
    def __init__(self, log_path: str | None, variant: str = "suite") -> None:
        self.log_path = log_path
        self.variant = variant
        self.cancels: dict[str, asyncio.Event] = {}
        self.subs: dict[str, set[ServerConnection]] = {}
        self.r1_status: dict[str, tuple[int, str]] = {}

    def record(self, msg: dict) -> None:
        if self.log_path:
            with open(self.log_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(msg) + "\n")

    async def handle(self, ws: ServerConnection) -> None:
        status_task = asyncio.create_task(self.status_loop(ws))
        try:
            async for raw in ws:
                msg = json.loads(raw)
                self.record(msg)
                op = msg.get("op")
                if op == "send_action_goal":
                    asyncio.create_task(self.ros2_goal(ws, msg))
                elif op == "cancel_action_goal":
                    ev = self.cancels.get(msg.get("id"))
                    if ev:
                        ev.set()
                elif op == "subscribe":
                    self.subs.setdefault(msg["topic"], set()).add(ws)
                elif op == "unsubscribe":
                    self.subs.get(msg["topic"], set()).discard(ws)
                elif op == "publish":
                    await self.on_publish(msg["topic"], msg.get("msg") or {})
        except ConnectionClosed:
            pass
        finally:
            status_task.cancel()
            for subs in self.subs.values():
                subs.discard(ws)

    # ROS 2 actions -----------------------------------------------------------------------------

    async def ros2_goal(self, ws: ServerConnection, msg: dict) -> None:
        gid, action = msg["id"], msg["action"]
        x = int(msg["args"]["pose"]["pose"]["position"]["x"])
        cancel = self.cancels[gid] = asyncio.Event()  # ids restart with each client

        async def feedback(dist: float) -> None:
            values = {
                "distance_remaining": dist,
                "number_of_recoveries": 0,
                "navigation_time": {"sec": 0, "nanosec": 0},
            }
            await ws.send(
                json.dumps({"op": "action_feedback", "id": gid, "action": action, "values": values})
            )

        async def result(status: int, values, ok: bool = True) -> None:
            if self.variant == "old" and not ok:
                return  # old rosbridge_suite: rejected / missing server goals are never answered
            if self.variant == "rs":
                if status == 0 and not ok:  # rosbridge-server-rs: a rejected goal is aborted
                    status, values = ABORTED, {}
                ok = status == SUCCEEDED
            await ws.send(
                json.dumps(
                    {
                        "op": "action_result",
                        "id": gid,
                        "action": action,
                        "values": values,
                        "status": status,
                        "result": ok,
                    }
                )
            )

        try:
            if x == 1:
                for dist in (2.0, 1.0, 0.2):
                    await feedback(dist)
                    await asyncio.sleep(0.02)
                await result(SUCCEEDED, {"error_code": 0, "error_msg": ""})
            elif x == 2:
                await feedback(3.0)
                await result(ABORTED, {"error_code": 104, "error_msg": "Failed to create plan"})
            elif x == 3:
                dist = 10.0
                while not cancel.is_set():
                    await feedback(dist)
                    dist = max(0.0, dist - 0.1)
                    try:
                        await asyncio.wait_for(cancel.wait(), 0.05)
                    except TimeoutError:
                        pass
                await result(CANCELED, {"error_code": 0, "error_msg": ""})
            elif x == 4:
                await result(0, "Action goal was rejected", ok=False)
            elif x == 6:
                await feedback(5.0)
                await cancel.wait()
                await result(CANCELED, {"error_code": 0, "error_msg": ""})
            elif x == 7:
                await feedback(5.0)
                await asyncio.sleep(0.05)
                await ws.close()
            else:
                await result(0, "Action /navigate_to_pose does not exist", ok=False)
        except ConnectionClosed:
            pass

    # ROS 1 move_base over topics ---------------------------------------------------------------

    async def publish(self, topic: str, msg: dict) -> None:
        data = json.dumps({"op": "publish", "topic": topic, "msg": msg})
        for ws in list(self.subs.get(topic, ())):
            try:
                await ws.send(data)
            except ConnectionClosed:
                self.subs[topic].discard(ws)

    async def status_loop(self, ws: ServerConnection) -> None:
        while True:
            status_list = [
                {
                    "goal_id": {"id": gid, "stamp": {"secs": 0, "nsecs": 0}},
                    "status": st,
                    "text": text,
                }
                for gid, (st, text) in self.r1_status.items()
            ]
            await self.publish("/move_base/status", {"status_list": status_list})
            await asyncio.sleep(0.05)

    async def on_publish(self, topic: str, msg: dict) -> None:
        if topic == "/move_base/goal":
            asyncio.create_task(self.ros1_goal(msg))
        elif topic == "/move_base/cancel":
            ev = self.cancels.get(msg.get("id", ""))
            if ev:
                ev.set()

    async def ros1_goal(self, msg: dict) -> None:
        gid = msg["goal_id"]["id"]
        x = int(msg["goal"]["target_pose"]["pose"]["position"]["x"])
        cancel = self.cancels[gid] = asyncio.Event()  # ids restart with each client
        self.r1_status[gid] = (R1_ACTIVE, "")
        ref = {"goal_id": {"id": gid, "stamp": {"secs": 0, "nsecs": 0}}}
        await self.publish(
            "/move_base/feedback",
            {
                "status": {**ref, "status": R1_ACTIVE, "text": ""},
                "feedback": {"base_position": {"pose": {"position": {"x": 0.5, "y": 0.0}}}},
            },
        )
        if x == 1:
            final, text = R1_SUCCEEDED, "Goal reached."
        elif x == 2:
            final, text = R1_ABORTED, "Failed to find a valid plan."
        elif x == 4:
            final, text = R1_REJECTED, "Goal rejected."
        else:
            await cancel.wait()
            final, text = R1_PREEMPTED, "Goal canceled."
        self.r1_status[gid] = (final, text)
        await asyncio.sleep(0.06)  # the terminal status goes out on the status topic first
        await self.publish(
            "/move_base/result", {"status": {**ref, "status": final, "text": text}, "result": {}}
        )


async def main(args: argparse.Namespace) -> None:
    bridge = Bridge(args.log, args.variant)
    async with serve(bridge.handle, args.host, args.port) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        print(f"PORT {port}", flush=True)
        await server.serve_forever()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--log", default=None)
    p.add_argument("--variant", choices=["suite", "rs", "old"], default="suite")
    try:
        asyncio.run(main(p.parse_args()))
    except KeyboardInterrupt:
        sys.exit(0)
