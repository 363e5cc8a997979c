"""The embedded model's runtime choice: native llama-server found / not found / broken.

Process handling is tested on tests/fake_llama_server.py, a FAKE llama-server with no model;
the real native build is tested when this machine has one (`robomemory native --build`).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Literal

import httpx
import pytest
from pydantic import BaseModel

from robomemory import local_model
from robomemory.config import ModelConfig
from robomemory.models import make_llm
from robomemory.native_runtime import (
    SOURCE_VERSION,
    NativeModelServer,
    NativeRuntimeError,
    choose_runtime,
    compact_gbnf,
    cpu_tag,
    find_llama_server,
    gbnf_converter,
    native_dir,
    requested_runtime,
)
from robomemory.testing.openai_server import FakeOpenAIServer

FAKE = Path(__file__).with_name("fake_llama_server.py")


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    """An empty model cache and no runtime settings from the environment."""
    monkeypatch.setenv("ROBOMEMORY_MODEL_CACHE", str(tmp_path / "cache"))
    for name in ("ROBOMEMORY_LLAMA_SERVER", "ROBOMEMORY_RUNTIME", "ROBOMEMORY_SPECULATIVE"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "cache"


def _install_fake(cache: Path) -> Path:
    """The fake server where this CPU's build would be, with a grammar converter beside it."""
    folder = native_dir(cache)
    (folder / "bin").mkdir(parents=True)
    binary = folder / "bin" / "llama-server"
    binary.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE} "$@"\n')
    binary.chmod(0o755)
    (folder / "json_schema_to_gbnf.py").write_text(
        "import json\n\ndef json_schema_to_gbnf(schema):\n"
        "    return 'root ::= ' + json.dumps(sorted(json.loads(schema)))\n"
    )
    return binary


class FakeWheel:
    """Stands in for the xllamacpp server (no model is loaded)."""

    runtime = "wheel"
    grammar_of = None

    def __init__(self, model_path, context_size, threads, n_parallel):
        self.threads = threads

    def start(self) -> str:
        return "http://wheel/v1"


@pytest.fixture()
def fake_wheel(monkeypatch):
    monkeypatch.setattr(local_model, "LocalModelServer", FakeWheel)


def test_auto_takes_native_when_found_else_the_wheel():
    assert choose_runtime("auto", Path("/x/llama-server")) == "native"
    assert choose_runtime("auto", None) == "wheel"
    assert choose_runtime("wheel", Path("/x/llama-server")) == "wheel"
    with pytest.raises(NativeRuntimeError, match="robomemory native --build"):
        choose_runtime("native", None)


def test_requested_runtime_reads_the_environment(monkeypatch):
    monkeypatch.setenv("ROBOMEMORY_RUNTIME", "wheel")
    assert requested_runtime() == "wheel"
    assert requested_runtime("native") == "native"
    monkeypatch.setenv("ROBOMEMORY_RUNTIME", "gpu")
    with pytest.raises(ValueError, match="ROBOMEMORY_RUNTIME must be one of"):
        requested_runtime()


def test_each_cpu_gets_its_own_build_folder():
    avx2 = "flags\t: fpu sse2 avx2\n"
    assert cpu_tag(avx2) == cpu_tag("flags\t: avx2 sse2 fpu\n")  # order does not matter
    assert cpu_tag(avx2) != cpu_tag("flags\t: fpu sse2 avx2 avx512f\n")


def test_found_in_the_cache_or_named_by_the_environment(cache, monkeypatch, tmp_path):
    assert find_llama_server() is None
    binary = _install_fake(cache)
    assert find_llama_server() == binary
    not_executable = tmp_path / "llama-server"
    not_executable.write_text("")
    monkeypatch.setenv("ROBOMEMORY_LLAMA_SERVER", str(not_executable))
    with pytest.raises(NativeRuntimeError, match="is not an executable file"):
        find_llama_server()


def test_native_found_is_started_with_the_slots_and_threads(cache, fake_wheel, monkeypatch):
    _install_fake(cache)
    args_file = cache / "args.json"
    monkeypatch.setenv("FAKE_LLAMA_ARGS", str(args_file))
    monkeypatch.setenv("ROBOMEMORY_SPECULATIVE", "ngram-mod")
    cfg = ModelConfig(threads=2, context_size=1024)
    server = local_model.start_server(cache / "model.gguf", cfg, n_parallel=3)
    try:
        assert server.runtime == "native"
        assert httpx.get(server.base_url.removesuffix("/v1") + "/health").status_code == 200
        args = json.loads(args_file.read_text())
        assert args[args.index("-np") + 1] == "3"
        assert args[args.index("-c") + 1] == "3072"  # context per slot x slots
        assert args[args.index("-t") + 1] == "2"
        assert args[args.index("--spec-type") + 1] == "ngram-mod"
        # GBNF for the native server; llguidance's options are not passed on
        grammar = server.grammar_of({"type": "object", "x-guidance": {}})
        assert grammar == 'root ::= ["type"]'
    finally:
        server.stop()


def test_native_not_found_uses_the_wheel(cache, fake_wheel):
    server = local_model.start_server(cache / "model.gguf", ModelConfig(threads=1))
    assert server.runtime == "wheel"


def test_broken_native_falls_back_with_one_line(cache, fake_wheel, monkeypatch, caplog):
    _install_fake(cache)
    monkeypatch.setenv("FAKE_LLAMA_MODE", "crash")
    with caplog.at_level(logging.WARNING):
        server = local_model.start_server(cache / "model.gguf", ModelConfig(threads=1))
    assert server.runtime == "wheel"
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert "illegal instruction" in warnings[0] and "using the xllamacpp wheel" in warnings[0]


def test_broken_native_asked_for_by_name_is_an_error(cache, fake_wheel, monkeypatch):
    _install_fake(cache)
    monkeypatch.setenv("FAKE_LLAMA_MODE", "crash")
    with pytest.raises(local_model.LocalModelUnavailable, match="exited with 1"):
        local_model.start_server(cache / "model.gguf", ModelConfig(runtime="native", threads=1))


def test_a_server_slower_than_its_start_limit_is_stopped(cache, monkeypatch):
    binary = _install_fake(cache)
    monkeypatch.setenv("FAKE_LLAMA_LOAD_S", "60")
    server = NativeModelServer(binary, cache / "m.gguf", 512, 1, 1, start_timeout_s=1.0)
    with pytest.raises(NativeRuntimeError, match="was not ready in 1 s"):
        server.start()
    assert server._proc is None and not server.running


def test_the_server_dies_with_a_killed_parent(cache, tmp_path):
    binary = _install_fake(cache)
    pid_file = tmp_path / "pid"
    script = textwrap.dedent(
        f"""
        import pathlib, time
        from robomemory.native_runtime import NativeModelServer
        s = NativeModelServer(pathlib.Path({str(binary)!r}), pathlib.Path("m"), 512, 1, 1)
        s.start()
        pathlib.Path({str(pid_file)!r}).write_text(str(s._proc.pid))
        time.sleep(60)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 30
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    child = int(pid_file.read_text())
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.1)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, reaped by nobody here, counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ", 1)[1].startswith("Z"))


@pytest.mark.skipif(
    gbnf_converter() is None,
    reason="llama.cpp's converter not installed (robomemory native --grammar)",
)
def test_the_real_converter_writes_compact_gbnf():
    convert = gbnf_converter()
    assert convert is not None
    schema = {
        "type": "object",
        "properties": {"next": {"enum": ["go(north)"]}, "n": {"type": "integer"}},
    }
    grammar = convert(schema)
    assert "go(north)" in grammar and '": "' in grammar
    assert 'space ::= ""' in grammar and '" "?' not in grammar


class Pick(BaseModel):
    next: Literal["go(north)", "open(fridge)"]


@pytest.mark.parametrize("owned_by, grammar", [("llamacpp", True), ("vllm", False)])
def test_a_served_llama_cpp_gets_the_compact_grammar(cache, monkeypatch, owned_by, grammar):
    folder = native_dir(cache).with_name(f"llama.cpp-{SOURCE_VERSION}-grammar")
    folder.mkdir(parents=True)
    (folder / "json_schema_to_gbnf.py").write_text(
        "def json_schema_to_gbnf(schema):\n    return 'root ::= \"fake\"'\n"
    )
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    answer = {"next": "open(fridge)"}
    with FakeOpenAIServer(responder=lambda *_: answer, owned_by=owned_by) as srv:
        llm = make_llm(ModelConfig(provider="openai", base_url=srv.base_url))
        result = llm.for_node("planner").call(Pick, "You plan.", "Get milk.", fallback=None)
    assert result.ok and result.value == Pick(**answer)
    body = srv.requests[0]
    assert ("grammar" in body) is grammar
    assert ("response_format" in body) is not grammar
    if grammar:
        assert body["grammar"] == 'root ::= "fake"'


def test_the_grammar_keeps_the_compact_separators_and_no_other_whitespace():
    loose = "\n".join(
        [
            'root ::= "{" space a-kv "," space b-kv "}" space',
            'a-kv ::= "\\"a\\"" space ":" space "[" space item ("," space item)? "]" space',
            'space ::= " "?',
        ]
    )
    tight = compact_gbnf(loose).splitlines()
    assert tight[0] == 'root ::= "{" a-kv ", " b-kv "}" space'
    assert tight[1] == 'a-kv ::= "\\"a\\"" ": " "[" item (", " item)? "]" space'
    assert tight[2] == 'space ::= ""'
