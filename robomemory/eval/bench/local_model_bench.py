"""Benchmark of the embedded model: join+verify time, server start time, tokens/s of a short
structured call, and 4 concurrent calls. Prints figures; asserts nothing.

    python -m robomemory.eval.bench.local_model_bench [--fresh-cache] [--threads N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from robomemory.config import ModelConfig
from robomemory.local_model import LocalModelServer, default_threads, ensure_model_file
from robomemory.models import make_llm

SYSTEM = "You control a robot in a kitchen. Answer in JSON."
USER = "Goal: get the milk. The fridge is closed and in front of you. Pick the action."


class Choice(BaseModel):
    action: Literal["open fridge", "go east", "take knife"]
    reason: str = Field(max_length=60)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--fresh-cache", action="store_true", help="join into a temp cache dir")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--max-tokens", type=int, default=48)
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) if args.fresh_cache else None
        t = time.perf_counter()
        path = ensure_model_file(cache)
        print(f"join+verify: {time.perf_counter() - t:.2f}s ({path})")
        t = time.perf_counter()
        ensure_model_file(cache)
        print(f"second ensure_model_file: {time.perf_counter() - t:.4f}s")

        threads = args.threads or default_threads()
        server = LocalModelServer(path, context_size=1024, threads=threads, n_parallel=4)
        t = time.perf_counter()
        server.start()
        print(f"server start: {time.perf_counter() - t:.2f}s (threads={threads}, n_parallel=4)")
        try:
            _calls(server, args.max_tokens)
        finally:
            server.stop()
    return 0


def _calls(server: LocalModelServer, max_tokens: int) -> None:
    from langchain_openai import ChatOpenAI

    chat = ChatOpenAI(
        base_url=server.base_url,
        api_key="local",
        model="local",
        temperature=0.0,
        max_tokens=max_tokens,
        timeout=600,
    )
    llm = make_llm(ModelConfig(provider="local"), chat_model=chat)
    for i in range(3):
        node = llm.for_node("bench")
        r = node.call(Choice, SYSTEM, USER if i < 2 else USER + f" (try {i})", fallback=None)
        u = node.usage
        print(
            f"call {i}: ok={r.ok} {u.seconds:.2f}s prompt={u.prompt_tokens} "
            f"completion={u.completion_tokens} -> {u.completion_tokens / u.seconds:.2f} "
            f"completion tokens/s (end to end) value={r.value}"
        )
    node = llm.for_node("concurrent")
    t = time.perf_counter()
    with ThreadPoolExecutor(4) as pool:
        results = list(
            pool.map(lambda i: node.call(Choice, SYSTEM, f"{USER} ({i})", None), range(4))
        )
    wall = time.perf_counter() - t
    print(
        f"4 concurrent calls: ok={[r.ok for r in results]} wall={wall:.2f}s "
        f"completion={node.usage.completion_tokens} -> "
        f"{node.usage.completion_tokens / wall:.2f} tokens/s aggregate"
    )


if __name__ == "__main__":
    raise SystemExit(main())
