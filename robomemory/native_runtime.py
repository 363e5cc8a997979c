"""A native llama.cpp server for the embedded model, built for the CPU it runs on.

The PyPI runtime (``xllamacpp``) is one build for every x86-64 CPU. :func:`build_native` builds
llama.cpp's own ``llama-server`` from a pinned PyPI source (the ``llama-cpp-python`` sdist
vendors llama.cpp whole) with ``GGML_NATIVE=ON``, no network at build time, no SSL, into the
shared model cache; :class:`NativeModelServer` runs it as a child process speaking the same
OpenAI API. A build for one CPU may not run on another, so each CPU gets its own folder.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import json
import logging
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import httpx

from robomemory.config import default_model_cache

log = logging.getLogger(__name__)

SOURCE_PACKAGE = "llama-cpp-python"
SOURCE_VERSION = "0.3.36"
SOURCE_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
SOURCE_TREE = "vendor/llama.cpp"
# llama.cpp's JSON-schema-to-GBNF converter in Python (one space at most between tokens: the
# compact JSON the embedded path asks of llguidance), taken from the same pinned source.
GRAMMAR_MODULE = "llama_cpp/llama_grammar.py"
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=ON",  # for this CPU (AVX-512, ...), the reason for the build
    "-DBUILD_SHARED_LIBS=OFF",  # one self-contained binary in the cache
    "-DLLAMA_OPENSSL=OFF",  # a loopback server needs no TLS
    "-DLLAMA_USE_PREBUILT_UI=OFF",  # the web UI would be downloaded
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
)
# -march=native turns on AMX where the CPU has it, and llama.cpp's AMX kernels crashed at the
# first matrix product here (signal 11); AVX-512 and VNNI stay on.
X86_FLAGS = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
SERVER_ENV = "ROBOMEMORY_LLAMA_SERVER"  # an llama-server binary of the user's own
RUNTIME_ENV = "ROBOMEMORY_RUNTIME"  # auto | native | wheel
Runtime = Literal["auto", "native", "wheel"]
RUNTIMES: tuple[str, ...] = ("auto", "native", "wheel")
MARKER = "build.json"
CONVERTER = "json_schema_to_gbnf.py"


class NativeRuntimeError(RuntimeError):
    """The native server cannot be built, found or started."""


def cpu_tag(cpuinfo: str | None = None) -> str:
    """A short name for this CPU's instruction sets: a native build runs only where they match."""
    if cpuinfo is None:
        path = Path("/proc/cpuinfo")
        cpuinfo = path.read_text() if path.exists() else ""
    flags = next(
        (line.split(":", 1)[1] for line in cpuinfo.splitlines() if line.startswith("flags")), ""
    )
    key = f"{platform.machine()} {' '.join(sorted(flags.split()))}"
    return f"{platform.machine()}-{hashlib.sha256(key.encode()).hexdigest()[:10]}"


def native_dir(cache: Path | None = None) -> Path:
    """Where this CPU's build of the pinned source lives in the shared model cache."""
    root = Path(cache) if cache is not None else default_model_cache()
    return root / f"llama.cpp-{SOURCE_VERSION}-{cpu_tag()}"


def requested_runtime(value: str | None = None) -> Runtime:
    """The runtime asked for: ``value``, else ``$ROBOMEMORY_RUNTIME``, else ``auto``."""
    value = value or os.environ.get(RUNTIME_ENV) or "auto"
    if value not in RUNTIMES:
        raise ValueError(f"{RUNTIME_ENV} must be one of {', '.join(RUNTIMES)}, got {value!r}")
    return value  # type: ignore[return-value]


def find_llama_server(cache: Path | None = None) -> Path | None:
    """The native server binary: ``$ROBOMEMORY_LLAMA_SERVER`` if set, else this CPU's build in
    the cache, else None."""
    own = os.environ.get(SERVER_ENV)
    if own:
        path = Path(own)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise NativeRuntimeError(f"{SERVER_ENV}={own} is not an executable file")
        return path
    built = native_dir(cache) / "bin" / "llama-server"
    return built if built.is_file() and os.access(built, os.X_OK) else None


def choose_runtime(requested: Runtime, native: Path | None) -> Literal["native", "wheel"]:
    """``native`` when asked for or found (auto), else the ``xllamacpp`` wheel."""
    if requested == "native" and native is None:
        raise NativeRuntimeError(
            "the native llama.cpp server is not built: run `robomemory native --build` "
            f"(or set {SERVER_ENV}), or use {RUNTIME_ENV}=auto"
        )
    if requested == "wheel" or native is None:
        return "wheel"
    return "native"


# --- build ---------------------------------------------------------------------------------


def _download_source(into: Path, echo: Callable[[str], None]) -> Path:
    """The pinned sdist, fetched by pip from the package index and checked against its sha256."""
    echo(f"fetching {SOURCE_PACKAGE}=={SOURCE_VERSION} (source, ~77 MB) from the package index")
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
    cmd += ["-d", str(into), f"{SOURCE_PACKAGE}=={SOURCE_VERSION}"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise NativeRuntimeError(f"pip download failed: {done.stderr.strip()[-500:]}")
    archive = into / f"{SOURCE_PACKAGE.replace('-', '_')}-{SOURCE_VERSION}.tar.gz"
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != SOURCE_SHA256:
        raise NativeRuntimeError(f"{archive.name} has sha256 {digest}, expected {SOURCE_SHA256}")
    return archive


def _extract(archive: Path, into: Path, only_converter: bool = False) -> Path:
    """Unpack the vendored llama.cpp tree and the grammar converter; return the sdist's root."""
    root = f"{SOURCE_PACKAGE.replace('-', '_')}-{SOURCE_VERSION}"
    wanted: tuple[str, ...] = (f"{root}/{GRAMMAR_MODULE}",)
    if not only_converter:
        wanted += (f"{root}/{SOURCE_TREE}/",)
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(wanted)]
        tar.extractall(into, members=members, filter="data")
    return into / root


def converter_dir(cache: Path | None = None) -> Path:
    """Where the grammar converter alone lives (for any CPU, and for served llama.cpp)."""
    root = Path(cache) if cache is not None else default_model_cache()
    return root / f"llama.cpp-{SOURCE_VERSION}-grammar"


def install_converter(
    cache: Path | None = None, echo: Callable[[str], None] = print, source: Path | None = None
) -> Path:
    """Fetch the pinned source and keep only its JSON-schema-to-GBNF converter; return its path."""
    target = converter_dir(cache)
    with tempfile.TemporaryDirectory(prefix="robomemory-llama-") as tmp:
        work = Path(tmp)
        archive = Path(source) if source is not None else _download_source(work, echo)
        tree = _extract(archive, work / "src", only_converter=True)
        _place_converter(tree, target)
    echo(f"grammar converter in {target}")
    return target / CONVERTER


def _place_converter(tree: Path, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    staged = folder / f".{CONVERTER}.{os.getpid()}"
    shutil.copy2(tree / GRAMMAR_MODULE, staged)
    os.replace(staged, folder / CONVERTER)


def build_native(
    cache: Path | None = None,
    jobs: int | None = None,
    echo: Callable[[str], None] = print,
    source: Path | None = None,
) -> Path:
    """Build ``llama-server`` for this CPU into the cache and return its path.

    ``source`` is an already downloaded sdist (else pip fetches the pinned one). The binary and
    the grammar converter are moved into place only when the build succeeded, so an
    interrupted build leaves nothing a later start would take for a build.
    """
    for tool in ("cmake", "c++"):
        if shutil.which(tool) is None:
            raise NativeRuntimeError(
                f"{tool} is not installed; the native build needs cmake and a C++ compiler "
                "(Debian: apt-get install cmake g++ ninja-build)"
            )
    target = native_dir(cache)
    jobs = jobs or os.cpu_count() or 1
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="robomemory-llama-") as tmp:
        work = Path(tmp)
        archive = Path(source) if source is not None else _download_source(work, echo)
        tree = _extract(archive, work / "src")
        build = work / "build"
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        flags = list(CMAKE_FLAGS)
        if platform.machine() in ("x86_64", "AMD64"):
            flags += [f"-DCMAKE_C_FLAGS={X86_FLAGS}", f"-DCMAKE_CXX_FLAGS={X86_FLAGS}"]
        echo(f"configuring llama.cpp ({' '.join(flags)})")
        _run(["cmake", "-S", str(tree / SOURCE_TREE), "-B", str(build), *generator, *flags])
        echo(f"compiling llama-server with {jobs} jobs (several minutes on two cores)")
        _run(["cmake", "--build", str(build), "-j", str(jobs), "--target", "llama-server"])
        staged = target.with_name(f".{target.name}.{os.getpid()}")
        shutil.rmtree(staged, ignore_errors=True)
        (staged / "bin").mkdir(parents=True)
        shutil.copy2(build / "bin" / "llama-server", staged / "bin" / "llama-server")
        shutil.copy2(tree / GRAMMAR_MODULE, staged / CONVERTER)
        _place_converter(tree, converter_dir(cache))
        seconds = time.perf_counter() - started
        info = {
            "source": f"{SOURCE_PACKAGE}=={SOURCE_VERSION}",
            "sha256": SOURCE_SHA256,
            "cmake": flags,
            "cpu": cpu_tag(),
            "jobs": jobs,
            "seconds": round(seconds, 1),
        }
        (staged / MARKER).write_text(json.dumps(info, indent=1))
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staged, target)
    echo(f"built {target / 'bin' / 'llama-server'} in {seconds / 60:.1f} min")
    return target / "bin" / "llama-server"


def _run(cmd: list[str]) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip()[-1500:]
        raise NativeRuntimeError(f"{cmd[0]} {cmd[1]} failed (exit {done.returncode}):\n{tail}")


# --- grammar -------------------------------------------------------------------------------


_converters: dict[Path, Callable[[str], str]] = {}
_converter_lock = threading.Lock()


def gbnf_converter(folder: Path | None = None) -> Callable[[dict[str, Any]], str] | None:
    """llama.cpp's JSON-schema-to-GBNF converter saved in ``folder`` (a build), else the one
    installed alone (:func:`install_converter`); None when there is none."""
    path = folder / CONVERTER if folder is not None else None
    if path is None or not path.is_file():
        path = converter_dir() / CONVERTER
    if not path.is_file():
        return None
    with _converter_lock:
        if path not in _converters:
            spec = importlib.util.spec_from_file_location("robomemory_json_schema_to_gbnf", path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            _converters[path] = module.json_schema_to_gbnf
    convert = _converters[path]

    def grammar(schema: dict[str, Any]) -> str:
        # llguidance's options mean nothing to GBNF: compact_gbnf does what they ask
        return compact_gbnf(
            convert(json.dumps({k: v for k, v in schema.items() if k != "x-guidance"}))
        )

    return grammar


def compact_gbnf(grammar: str) -> str:
    """The converter's grammar with the separators of the embedded path's compact JSON: ``": "``
    and ``", "`` exactly, no other whitespace (its ``space`` rule lets a model write ``{ "``,
    a token more at every bracket)."""
    for loose, tight in (
        ('space ":" space', '": "'),
        ('"," space', '", "'),
        ('"{" space', '"{"'),
        ('"[" space', '"["'),
    ):
        grammar = grammar.replace(loose, tight)
    return re.sub(r"(?m)^space ::= .*$", 'space ::= ""', grammar)


def is_llama_cpp(base_url: str, api_key: str | None = None) -> bool:
    """Whether an OpenAI-compatible endpoint is a llama.cpp server (its model list says so)."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        r = httpx.get(f"{base_url.rstrip('/')}/models", headers=headers, timeout=5)
        models = r.json().get("data", []) if r.status_code == 200 else []
    except (httpx.HTTPError, ValueError) as exc:
        log.info("could not list the models of %s (%s): sending json_schema", base_url, exc)
        return False
    return any(isinstance(m, dict) and m.get("owned_by") == "llamacpp" for m in models)


# --- server --------------------------------------------------------------------------------


_LISTENING = re.compile(r"listening on (http://[\w.\[\]:-]+)")


def _die_with_parent() -> None:
    """In the child: SIGTERM when the parent dies (kill -9 included), so no server is orphaned."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class NativeModelServer:
    """``llama-server`` as a child process with the embedded server's slots and threads.

    ``speculative`` names llama.cpp's draft-free speculative decoding (e.g. ``ngram-mod``),
    None for plain decoding.
    """

    runtime = "native"

    def __init__(
        self,
        binary: Path,
        model_path: Path,
        context_size: int,
        threads: int,
        n_parallel: int,
        speculative: str | None = None,
        start_timeout_s: float = 180.0,
    ):
        self.binary = Path(binary)
        self.model_path = Path(model_path)
        self.context_size = context_size
        self.threads = threads
        self.n_parallel = n_parallel
        self.speculative = speculative
        self.start_timeout_s = start_timeout_s
        self.start_seconds: float | None = None
        self.grammar_of = gbnf_converter(self.binary.parent.parent)
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: Any = None
        self._base_url: str | None = None
        self._lock = threading.Lock()

    def command(self) -> list[str]:
        """The server's command line."""
        cmd = [str(self.binary), "-m", str(self.model_path), "-a", "local"]
        cmd += ["--host", "127.0.0.1", "--port", "0", "--no-webui", "--no-warmup"]
        cmd += ["-np", str(self.n_parallel), "-c", str(self.context_size * self.n_parallel)]
        cmd += ["--no-kv-unified", "-t", str(self.threads), "-tb", str(self.threads)]
        cmd += ["--threads-http", str(self.n_parallel + 2)]
        if self.speculative:
            cmd += ["--spec-type", self.speculative]
        return cmd

    @property
    def base_url(self) -> str:
        return self.start()

    @property
    def running(self) -> bool:
        return self._base_url is not None

    def start(self) -> str:
        """Start the server and wait until the model is loaded; return the OpenAI base URL."""
        with self._lock:
            if self._base_url is not None:
                return self._base_url
            started = time.perf_counter()
            self._log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log")
            try:
                self._proc = subprocess.Popen(
                    self.command(),
                    stdout=self._log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    preexec_fn=_die_with_parent,
                )
            except OSError as exc:
                self._close_log()
                raise NativeRuntimeError(f"{self.binary} did not start: {exc}") from exc
            try:
                self._base_url = f"{self._wait_ready()}/v1"
            except NativeRuntimeError:
                self._kill()
                raise
            self.start_seconds = time.perf_counter() - started
            log.info("native model served at %s (%.1fs)", self._base_url, self.start_seconds)
            return self._base_url

    def _log_text(self) -> str:
        return Path(self._log.name).read_text(errors="replace") if self._log else ""

    def _wait_ready(self) -> str:
        """The server's address once ``/health`` answers 200 (the model is loaded)."""
        assert self._proc is not None
        deadline = time.monotonic() + self.start_timeout_s
        address: str | None = None
        while time.monotonic() < deadline:
            code = self._proc.poll()
            if code is not None:
                tail = self._log_text().strip().splitlines()[-3:]
                raise NativeRuntimeError(
                    f"{self.binary} exited with {code} while starting: {' | '.join(tail)}"
                )
            if address is None and (found := _LISTENING.search(self._log_text())):
                address = found.group(1)
            if address is not None:
                try:
                    if httpx.get(f"{address}/health", timeout=2).status_code == 200:
                        return address
                except httpx.TransportError:
                    pass  # not accepting yet
            time.sleep(0.1)
        raise NativeRuntimeError(f"{self.binary} was not ready in {self.start_timeout_s:.0f} s")

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def stop(self) -> None:
        """Stop the server process."""
        with self._lock:
            self._base_url = None
            self._kill()
