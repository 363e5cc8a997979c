"""`robomemory bench local-model`: what this CPU gets from each embedded-model runtime.

For every runtime found (the ``xllamacpp`` wheel; the native llama-server when built, plain and
with each ``--speculative`` type) it starts the server and prints llama.cpp's own timings:
prompt tokens/s of a fresh prompt, generated tokens/s free and under a JSON grammar. With
``--prompts LOG`` (a ``$ROBOMEMORY_PROMPT_LOG`` file) it replays the logged calls instead, in
order, each to its node's slot, and prints per node: tokens, seconds, tokens/s, draft tokens
accepted, and how many answers equal the logged one. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx
from pydantic import BaseModel, Field
from rich.console import Console
from rich.table import Table

from robomemory.commands.json_out import add_json_flag, json_file, print_json, wants_json
from robomemory.local_model import (
    N_SLOTS,
    LocalModelServer,
    default_threads,
    ensure_model_file,
    slot_for,
)
from robomemory.native_runtime import NativeModelServer, find_llama_server
from robomemory.structured import compact_json_schema

SYSTEM = (
    "You are the planner of a robot. Read the task, the memory and the observation, then "
    "choose the next action from the actions possible now. "
) * 6
ROOMS = ["kitchen", "pantry", "corridor", "bathroom", "bedroom", "garden", "shed", "attic"]
THINGS = ["red apple", "knife", "cookbook", "fridge", "stove", "oven", "counter", "table"]
CANDIDATES = [f"go_to({r})" for r in ROOMS] + [f"pick_up({t})" for t in THINGS]
CANDIDATES += [f"examine({t})" for t in THINGS] + [f"open({t})" for t in THINGS]


class Choice(BaseModel):
    """A synthetic planner answer: one of 32 candidates and a short reason."""

    next: Literal[tuple(CANDIDATES)]  # type: ignore[valid-type]
    reason: str = Field(max_length=120)


def user_prompt(i: int) -> str:
    """A ~600-token observation, different per ``i`` so no prompt is reused from the cache."""
    lines = [f"Step {i}. Task: find the {THINGS[i % 8]} and bring it to the {ROOMS[i % 8]}."]
    for j in range(24):
        lines.append(
            f"Memory {j}: the {THINGS[(i + j) % 8]} was seen in the {ROOMS[(i * 3 + j) % 8]} "
            f"near the {THINGS[(j * 5) % 8]} at step {j + i}."
        )
    lines.append("Actions possible now: " + ", ".join(CANDIDATES))
    return "\n".join(lines)


@dataclass
class Figures:
    """Sums of llama.cpp's timings over calls."""

    calls: int = 0
    prompt_n: int = 0
    prompt_ms: float = 0.0
    cached_n: int = 0
    predicted_n: int = 0
    predicted_ms: float = 0.0
    draft_n: int = 0
    draft_accepted: int = 0
    wall_s: float = 0.0
    same_answer: int = 0
    answers: list[str] = field(default_factory=list)

    def add(self, timings: dict[str, Any], wall: float) -> None:
        self.calls += 1
        self.prompt_n += int(timings.get("prompt_n", 0))
        self.prompt_ms += float(timings.get("prompt_ms", 0.0))
        self.cached_n += int(timings.get("cache_n", 0))
        self.predicted_n += int(timings.get("predicted_n", 0))
        self.predicted_ms += float(timings.get("predicted_ms", 0.0))
        self.draft_n += int(timings.get("draft_n", 0))
        self.draft_accepted += int(timings.get("draft_n_accepted", 0))
        self.wall_s += wall

    def prompt_rate(self) -> float:
        return 1000 * self.prompt_n / self.prompt_ms if self.prompt_ms else 0.0

    def gen_rate(self) -> float:
        return 1000 * self.predicted_n / self.predicted_ms if self.predicted_ms else 0.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads")
    parser.add_argument(
        "--runtimes", default="wheel,native", help="comma list of wheel, native (those found)"
    )
    parser.add_argument(
        "--speculative",
        default="",
        help="comma list of llama.cpp draft-free speculative types, e.g. ngram-mod,ngram-simple "
        "(native only; each measured as its own runtime)",
    )
    parser.add_argument("--prompts", type=Path, default=None, help="replay a prompt log")
    parser.add_argument("--limit", type=int, default=0, help="replay at most this many calls")
    parser.add_argument("--calls", type=int, default=3, help="synthetic calls per measurement")
    add_json_flag(parser, to_file=True)


Server = LocalModelServer | NativeModelServer


def runtimes(args: argparse.Namespace, model: Path, threads: int) -> Iterator[tuple[str, Server]]:
    """(label, unstarted server) for each runtime asked for and found."""
    wanted = {w.strip() for w in args.runtimes.split(",") if w.strip()}
    if "wheel" in wanted:
        yield "wheel", LocalModelServer(model, threads=threads, n_parallel=N_SLOTS)
    binary = find_llama_server()
    if "native" in wanted and binary is None:
        print("native: not built (robomemory native --build); skipped", file=sys.stderr)
    if "native" in wanted and binary is not None:
        yield "native", NativeModelServer(binary, model, 4096, threads, N_SLOTS)
        for kind in (s.strip() for s in args.speculative.split(",") if s.strip()):
            spec = NativeModelServer(binary, model, 4096, threads, N_SLOTS, speculative=kind)
            yield f"native+{kind}", spec


def _chat(
    base: str, system: str, user: str, max_tokens: int, extra: dict[str, Any]
) -> tuple[str, dict[str, Any], float]:
    body = {
        "model": "local",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        "max_tokens": max_tokens,
        "temperature": 0.0,
        **extra,
    }
    t = time.perf_counter()
    r = httpx.post(f"{base}/chat/completions", json=body, timeout=600)
    wall = time.perf_counter() - t
    r.raise_for_status()
    data = r.json()
    return data["choices"][0]["message"]["content"] or "", data.get("timings", {}), wall


def synthetic(
    base: str, grammar_of: Callable[[dict], str] | None, calls: int
) -> dict[str, Figures]:
    """Fresh prompts (no cache), free generation, and generation under the Choice grammar."""
    out = {"prompt": Figures(), "free": Figures(), "grammar": Figures()}
    grammar = grammar_of(compact_json_schema(Choice)) if grammar_of else None
    for i in range(calls):
        _, timings, wall = _chat(base, SYSTEM, user_prompt(i), 1, {"cache_prompt": False})
        out["prompt"].add(timings, wall)
        free = {"id_slot": 0, "ignore_eos": True}
        _, timings, wall = _chat(base, SYSTEM, user_prompt(i), 64, free)
        out["free"].add(timings, wall)
        constrained: dict[str, Any] = {"id_slot": 0}
        if grammar:
            constrained["grammar"] = grammar
        else:
            schema = {"name": "Choice", "schema": compact_json_schema(Choice)}
            constrained["response_format"] = {"type": "json_schema", "json_schema": schema}
        _, timings, wall = _chat(base, SYSTEM, user_prompt(i) + " ", 64, constrained)
        out["grammar"].add(timings, wall)
    return out


def read_log(path: Path) -> list[dict[str, Any]]:
    """The calls of a prompt log (``.jsonl`` or ``.jsonl.gz``) that recorded their schema."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            lines = [json.loads(line) for line in f if line.strip()]
    except OSError as exc:
        raise ValueError(f"{path}: {exc.strerror or exc}") from None
    except ValueError as exc:  # not UTF-8, not JSON lines
        raise ValueError(f"{path} is not a prompt log: {exc}") from None
    kept = [c for c in lines if isinstance(c, dict) and c.get("json_schema")]
    if not kept:
        raise ValueError(f"{path}: no call records its json_schema (logged before it was kept)")
    return kept


def replay(
    base: str, grammar_of: Callable[[dict], str] | None, calls: list[dict[str, Any]]
) -> dict[str, Figures]:
    """Each logged call again, in order, to its node's slot; figures per node."""
    out: dict[str, Figures] = defaultdict(Figures)
    for call in calls:
        schema = call["json_schema"]
        extra: dict[str, Any] = {"id_slot": slot_for(call["schema"])}
        if grammar_of:
            extra["grammar"] = grammar_of(schema)
        else:
            wrapper = {"name": call["schema"], "schema": schema}
            extra["response_format"] = {"type": "json_schema", "json_schema": wrapper}
        answer, timings, wall = _chat(base, call["system"], call["user"], 400, extra)
        figures = out[call["node"]]
        figures.add(timings, wall)
        figures.same_answer += int(answer.strip() == str(call.get("answer") or "").strip())
    return dict(out)


def _table(label: str, figures: dict[str, Figures], replaying: bool) -> Table:
    table = Table(title=label)
    for col in ("measure", "calls", "prompt tok", "prompt tok/s", "cached", "gen tok"):
        table.add_column(col)
    for col in ("gen tok/s", "draft acc.", "wall s"):
        table.add_column(col)
    if replaying:
        table.add_column("same answer")
    for name, f in figures.items():
        acc = f"{f.draft_accepted}/{f.draft_n}" if f.draft_n else "-"
        row = [name, str(f.calls), str(f.prompt_n), f"{f.prompt_rate():.1f}", str(f.cached_n)]
        row += [str(f.predicted_n), f"{f.gen_rate():.1f}", acc, f"{f.wall_s:.1f}"]
        if replaying:
            row.append(f"{f.same_answer}/{f.calls}")
        table.add_row(*row)
    return table


def main(args: argparse.Namespace) -> int:
    console = Console(width=max(Console().width, 110), stderr=wants_json(args))
    calls = read_log(args.prompts) if args.prompts else []  # bad input: before the model
    model = ensure_model_file()
    threads = args.threads or default_threads()
    if args.limit:
        calls = calls[: args.limit]
    results: dict[str, Any] = {"threads": threads}
    for label, server in runtimes(args, model, threads):
        try:
            base = server.start()
            console.print(f"{label}: started in {server.start_seconds:.1f} s, {threads} threads")
            grammar_of = server.grammar_of
            if calls:
                figures = replay(base, grammar_of, calls)
            else:
                figures = synthetic(base, grammar_of, args.calls)
        finally:
            server.stop()
        if not wants_json(args):
            console.print(_table(label, figures, bool(calls)))
        results[label] = {
            name: {
                "calls": f.calls,
                "prompt_tokens_per_s": round(f.prompt_rate(), 1),
                "generated_tokens_per_s": round(f.gen_rate(), 1),
                "prompt_tokens": f.prompt_n,
                "cached_tokens": f.cached_n,
                "generated_tokens": f.predicted_n,
                "draft_tokens": f.draft_n,
                "draft_accepted": f.draft_accepted,
                "wall_s": round(f.wall_s, 2),
                "same_answer": f.same_answer,
            }
            for name, f in figures.items()
        }
    if wants_json(args):
        print_json(results)
    elif json_file(args) is not None:
        json_file(args).write_text(json.dumps(results, indent=1))
    return 0


def _main() -> int:  # `python -m robomemory.eval.bench.local_model_bench`
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    return main(parser.parse_args())


if __name__ == "__main__":
    raise SystemExit(_main())
