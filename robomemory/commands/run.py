"""`robomemory run`: play one task with live progress, a summary and a JSON trace."""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import uuid
from pathlib import Path

from pydantic import ValidationError
from rich.console import Console

from robomemory.commands.home import add_home_argument, home_of
from robomemory.commands.progress import RunProgress, phase, summary_table
from robomemory.commands.trace import TraceRecorder, trace_payload, write_trace
from robomemory.config import (
    AgentConfig,
    ModelConfig,
    check_thread_id,
    config_error_line,
    robot_thread,
)
from robomemory.diskspace import check_free_space
from robomemory.episode import EpisodeIdError
from robomemory.errors import print_error
from robomemory.factory import build_checkpointer
from robomemory.inputs import out_folder
from robomemory.local_model import LocalModelUnavailable, ensure_model_file, get_local_server
from robomemory.locks import LockFileError, RobotBusyError, acquire_robot
from robomemory.memory.damage import DamagedStoreError
from robomemory.memory.stores.vector_store import MemoryServerError
from robomemory.models import ModelConfigError
from robomemory.structured import ModelUnavailableError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--env", choices=["textworld", "robot"], default="textworld")
    p.add_argument("--game", help="TextWorld game: a .z8/.ulx path or a bundled game name")
    p.add_argument(
        "--model",
        choices=["local", "openai", "fake"],
        default="local",
        help="local: the embedded model; openai: an OpenAI-compatible endpoint; fake: no "
        "weights, the first candidate every step (a dry run)",
    )
    p.add_argument("--model-name", help="model name at the OpenAI-compatible endpoint")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)")
    p.add_argument("--task", help="the task (robot: required; a world: overrides its objective)")
    p.add_argument("--max-steps", type=int, default=30)
    p.add_argument(
        "--plan-len",
        type=int,
        metavar="N",
        help="the planner names N actions a plan; the critic checks the later ones "
        "(default: 1 to 3, the model's choice)",
    )
    p.add_argument("--robot", default="default", help="robot id: whose memories to use")
    p.add_argument("--robot-id", dest="robot", help=argparse.SUPPRESS)  # the old name
    p.add_argument(
        "--world",
        help="whose spatial map to keep: a site's name (default: the game's name, or the "
        "robot's single map)",
    )
    add_home_argument(p, "data folder: memories, checkpoints, traces ($ROBOMEMORY_HOME)")
    p.add_argument("--thread", help="thread id (checkpoint key); printed at start")
    p.add_argument(
        "--checkpoints",
        help="checkpoint store: a postgresql:// URL (a fleet) or a SQLite file "
        "(default: HOME/memory/checkpoints.sqlite)",
    )
    p.add_argument("--resume", action="store_true", help="continue --thread from its checkpoint")
    p.add_argument("--ablate", default="", help="comma list: critic,spatial,longterm,...")
    p.add_argument("--trace", type=Path, help="JSON trace file (default: HOME/runs/THREAD.json)")
    p.add_argument("--policy", help="robot: π0 policy server, ws://HOST:8000")
    p.add_argument("--rosbridge", help="robot: rosbridge, ws://HOST:9090")
    p.add_argument("--waypoints", type=Path, help="robot: waypoint map YAML")
    p.add_argument("--arm", help="robot: arm driver factory 'module:function' (or $ROBOMEMORY_ARM)")
    p.add_argument("--ros-version", type=int, choices=[1, 2], default=2, help="robot: ROS 1 or 2")
    p.add_argument("--objects", help="robot: comma list of known objects, each NAME or NAME@POINT")
    p.add_argument(
        "--policy-layout", help="robot: aloha, droid, libero or a layout file (default: metadata)"
    )


def make_config(args: argparse.Namespace) -> AgentConfig:
    """The run's configuration; a bad value is a one-line ValueError, not a pydantic dump."""
    data = home_of(args)
    for folder in (data, data / "memory", data / "runs"):
        out_folder(folder)  # a file there: one line now, not an error deep in a store
    check_free_space(data)  # a full disk ends a store's mapped file with SIGBUS, no message
    try:
        model = ModelConfig(provider=args.model, base_url=args.base_url)
        if args.model_name:
            model.model = args.model_name
        cfg = AgentConfig(model=model, max_steps=args.max_steps, robot_id=args.robot)
        if args.plan_len is not None:
            cfg.plan_exactly(args.plan_len)
        cfg.memory.data_dir = Path(data) / "memory"
    except ValidationError as exc:
        raise ValueError(config_error_line(exc)) from None
    names = [n.strip() for n in args.ablate.split(",") if n.strip()]
    return cfg.ablate(names) if names else cfg


def make_executor(args: argparse.Namespace):
    if args.env == "robot":
        from robomemory.executors.robot import RobotExecutor  # robot extra (rosbridge, websockets)

        missing = [f for f in ("policy", "rosbridge", "waypoints", "task") if not getattr(args, f)]
        if missing:
            raise SystemExit(f"--env robot needs {', '.join('--' + m for m in missing)}")
        objects = [o.strip() for o in (args.objects or "").split(",") if o.strip()] or None
        return RobotExecutor.from_urls(
            args.policy,
            args.rosbridge,
            args.waypoints,
            arm=args.arm,
            ros_version=args.ros_version,
            task=args.task,
            objects=objects,
            policy_layout=args.policy_layout,
        )
    # loads textworld (heavy)
    from robomemory.executors.envs.textworld import TextWorldExecutor, resolve_game

    return TextWorldExecutor(resolve_game(args.game))


def quiet_loaders() -> None:
    """No third-party progress bars (``Loading weights: 100%|…``) over the live display."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # transformers (sentence-transformers brings it) reads that variable when imported; one
    # imported already is told directly (looked up, not imported: no dependency of its own)
    hf_logging = sys.modules.get("transformers.utils.logging")
    if hf_logging is not None:
        hf_logging.disable_progress_bar()


def world_of(args: argparse.Namespace) -> str | None:
    """The world whose spatial map the run keeps: ``--world``, else a game's name."""
    if args.world:
        return args.world
    if args.env == "textworld" and args.game:
        path = Path(args.game).expanduser()
        if not path.is_file():  # a bundled game's name
            return args.game
        # a file: its name and its content, so siteA/tw.z8 and siteB/tw.z8 keep two maps
        return f"{path.stem}@{hashlib.sha256(path.read_bytes()).hexdigest()[:12]}"
    return None


def build_with_phases(
    console: Console, cfg: AgentConfig, executor, checkpointer, world: str | None = None
):
    """Build the agent one visible phase at a time: model file, model start, embedder, memory."""
    with phase(console, "loading libraries"):  # imported in the phase: the console shows it
        from robomemory.graphs.agent import build_agent
        from robomemory.memory.system import MemorySystem
        from robomemory.models import make_embedder, make_llm, probe_endpoint

    if cfg.model.provider == "local":
        ensure_model_file()  # joins the parts on first use, with its own progress bar
        label = "starting the embedded model (llama.cpp)"
    elif cfg.model.provider == "fake":
        label = "the fake model: no weights, the first candidate every step"
    else:
        label = f"connecting to {cfg.model.provider} model {cfg.model.model}"
    with phase(console, label):
        if cfg.model.provider == "openai":
            probe_endpoint(cfg.model)  # nothing listens, or the key is refused: stop now
        llm = make_llm(cfg.model)
    if cfg.model.provider == "local":
        server = get_local_server(cfg.model)
        console.print(
            f"  {server.runtime} llama.cpp runtime, {server.threads} CPU threads "
            "(ROBOMEMORY_RUNTIME, ROBOMEMORY_THREADS set them)",
            style="dim",
        )
    quiet_loaders()
    with phase(console, "loading the embedder"):
        embedder = make_embedder(cfg.model)
    with phase(console, f"opening memory of robot {cfg.robot_id}"):
        memory = MemorySystem.open(cfg.memory, embedder, cfg.robot_id, world)
    return build_agent(
        cfg, executor, llm=llm, embedder=embedder, memory=memory, checkpointer=checkpointer
    )


def _fail(console: Console, message: str, status: int = 2) -> int:
    """The one error line on stderr; exit status 2, bad input (or ``status``)."""
    print_error(message)
    return status


def _thread_config(robot_id: str, thread: str) -> dict:
    return {"configurable": {"thread_id": robot_thread(robot_id, thread), "checkpoint_ns": ""}}


def main(args: argparse.Namespace) -> int:
    console = Console()
    if args.resume and not args.thread:
        return _fail(console, "--resume needs --thread ID")
    try:
        cfg = make_config(args)
    except ValueError as exc:  # bad input: say what, not a traceback
        return _fail(console, str(exc))
    thread = args.thread or uuid.uuid4().hex[:12]
    try:  # it names the trace file too: never a path out of the data folder
        check_thread_id(thread)
    except ValueError as exc:
        return _fail(console, str(exc))
    try:
        checkpointer = build_checkpointer(args.checkpoints, cfg.memory.data_dir)
        # before the model is loaded: an unknown thread must not cost a model start
        if args.resume and checkpointer.get_tuple(_thread_config(cfg.robot_id, thread)) is None:
            return _fail(console, f"no checkpoint for thread {thread!r}")
    except (DamagedStoreError, MemoryServerError) as exc:
        return _fail(console, str(exc))
    try:
        executor = make_executor(args)
    except (ValueError, FileNotFoundError) as exc:
        return _fail(console, str(exc))
    try:  # the same robot running elsewhere: one line, before the model is loaded
        acquire_robot(cfg.memory.data_dir, cfg.robot_id)
    except (RobotBusyError, LockFileError) as exc:
        executor.close()
        return _fail(console, str(exc))
    console.print(
        f"thread [bold]{thread}[/bold]  model {cfg.model.provider}  "
        f"max steps {cfg.max_steps}  memory {cfg.memory.data_dir}"
    )
    try:
        agent = build_with_phases(console, cfg, executor, checkpointer, world_of(args))
    except KeyboardInterrupt:
        executor.close()
        console.print("[yellow]interrupted before the run started[/yellow]")
        return 130
    except (LocalModelUnavailable, ModelConfigError) as exc:  # the model cannot be had
        executor.close()
        return _fail(console, str(exc))
    except (DamagedStoreError, MemoryServerError) as exc:  # one line: the store, what to do
        executor.close()
        return _fail(console, str(exc))
    except ModelUnavailableError as exc:  # nothing listens there, or the key is refused
        executor.close()
        return _fail(console, f"{exc}; nothing was run", ModelUnavailableError.exit_status)
    try:
        recorder = TraceRecorder(agent.context.memory.spatial)

        def on_event(node: str, update: dict) -> None:
            progress.on_event(node, update)
            recorder.on_event(node, update)

        with RunProgress(console, cfg.max_steps) as progress:
            result = agent.run(
                thread_id=thread,
                task=args.task,
                resume=args.resume,
                on_event=on_event,
                on_start=progress.on_start,
            )
    except KeyboardInterrupt:
        console.print(f"[yellow]interrupted; resume with --thread {thread} --resume[/yellow]")
        return 130
    except (DamagedStoreError, EpisodeIdError) as exc:  # refused before the run started
        return _fail(console, str(exc))
    except MemoryServerError as exc:  # the fleet's memory or checkpoints went away
        message = f"{exc}; the run stopped, resume with --thread {thread} --resume"
        return _fail(console, message, 1)
    except ModelUnavailableError as exc:  # stopped: nothing learned, the checkpoint kept
        message = f"{exc}; the run stopped, resume with --thread {thread} --resume"
        return _fail(console, message, ModelUnavailableError.exit_status)
    except Exception as exc:
        if getattr(args, "verbose", False):  # -v: the traceback
            raise
        message = f"run failed: {type(exc).__name__}: {exc}; resume with --thread {thread} --resume"
        return _fail(console, message, 1)
    finally:
        executor.close()
    console.print(summary_table(result))
    trace = args.trace or Path(cfg.memory.data_dir).parent / "runs" / f"{thread}.json"
    write_trace(trace, trace_payload(result, recorder))
    console.print(f"trace: {trace}")
    page = trace.with_suffix(".html")
    console.print(f"look at it: robomemory show {trace} --html {page}", soft_wrap=True)
    return 0
