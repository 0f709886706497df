"""The embedded Redis of a data folder: started and supervised by ``souk serve``, found by every other command.

``souk serve`` without REDIS_URL holds the folder's lock (``serve.lock``) while it runs, starts two redis-servers
(``events/``: the event store, AOF; ``views/``: the read store, in memory) and records them in
``embedded.json`` (ports, pids, binary). Another command without REDIS_URL reads that record (``find``); the lock
tells whether the record is live: a record whose ``souk serve`` is gone is stale, and the command says so. A
child that exits (killed, crashed) is started again on its port and data folder by the supervisor thread: the
event store's AOF brings back everything it acknowledged; the read store comes back empty and the projector
rebuilds it.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import structlog

from services.embedded.redis import RedisServer, RedisServerError

log = structlog.get_logger("souk.embedded")

RECORD = "embedded.json"
LOCK = "serve.lock"


class EmbeddedError(RuntimeError):
    """An operator's mistake or a missing server, said in one line."""


@dataclass(frozen=True)
class Found:
    """The stores of a running ``souk serve``."""

    events_url: str
    views_url: str
    serve_pid: int


def _answers(port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def read_record(data_dir: str | Path) -> dict | None:
    try:
        return json.loads((Path(data_dir) / RECORD).read_text())
    except (OSError, ValueError):
        return None


def _serving(data_dir: Path) -> bool:
    """Whether a ``souk serve`` holds the folder's lock (it is released when that process ends, however)."""
    path = data_dir / LOCK
    if not path.exists():
        return False
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f, fcntl.LOCK_UN)
        return False


def find(data_dir: str | Path) -> Found:
    """The embedded stores of the ``souk serve`` running on ``data_dir``, or EmbeddedError saying why not."""
    folder = Path(data_dir)
    record = read_record(folder)
    if record is None or not _serving(folder):
        raise EmbeddedError(f"REDIS_URL is unset and no `souk serve` runs on the data folder {folder} "
                            "(SOUK_DATA_DIR): start one there, or set REDIS_URL")
    for role in ("events", "views"):
        if not _answers(record[role]["port"]):
            raise EmbeddedError(f"the embedded {role} Redis of {folder} ({record[role]['url']}, started by souk serve "
                                f"pid {record['pid']}) does not answer; it is restarted by souk serve: try again")
    return Found(record["events"]["url"], record["views"]["url"], record["pid"])


class Embedded:
    """The two redis-servers of a data folder, recorded there and supervised: ``start()``, ``stop()``."""

    def __init__(self, data_dir: str | Path, fsync: str = "always", check_s: float = 0.2,
                 on_restart: Callable[[RedisServer], None] | None = None) -> None:
        self.folder = Path(data_dir)
        self.fsync = fsync
        self.check_s = check_s
        self.on_restart = on_restart
        self.events: RedisServer | None = None
        self.views: RedisServer | None = None
        self.restarts = 0
        self._lock_file = None
        self._stopping = threading.Event()
        self._guard = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def servers(self) -> list[RedisServer]:
        return [s for s in (self.events, self.views) if s is not None]

    def start(self) -> Embedded:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._take_lock()
        try:
            previous = read_record(self.folder) or {}

            def port(role: str) -> int | None:  # the same ports as last time when they are free: stable URLs
                known = previous.get(role, {}).get("port")
                return known if isinstance(known, int) and _port_free(known) else None

            self.events = RedisServer(self.folder / "events", port("events"), appendonly=True,
                                      fsync=self.fsync).start()
            self.views = RedisServer(self.folder / "views", port("views"), appendonly=False).start()
            self._record()
        except BaseException:
            self.stop()
            raise
        binary = self.events.binary
        log.info("embedded_redis_started", events=self.events.url, views=self.views.url, data_dir=str(self.folder),
                 redis_server=binary.path, redis_version=binary.version_text, source=binary.source)
        self._thread = threading.Thread(target=self._supervise, name="souk-embedded-redis", daemon=True)
        self._thread.start()
        return self

    def _take_lock(self) -> None:
        self._lock_file = open(self.folder / LOCK, "a+")
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_file.close()
            self._lock_file = None
            owner = (read_record(self.folder) or {}).get("pid", "?")
            raise EmbeddedError(f"a souk serve (pid {owner}) already runs on the data folder {self.folder}; stop it "
                                "or choose another SOUK_DATA_DIR") from None

    def _record(self) -> None:
        binary = self.events.binary
        record = {
            "pid": os.getpid(), "redis_server": binary.path, "redis_version": binary.version_text,
            **{role: {"url": s.url, "port": s.port, "pid": s.process.pid if s.process else None}
               for role, s in (("events", self.events), ("views", self.views))},
        }
        tmp = self.folder / f".{RECORD}.tmp"
        tmp.write_text(json.dumps(record, indent=2) + "\n")
        tmp.replace(self.folder / RECORD)

    def _supervise(self) -> None:
        """Starts again, on its port and folder, a child that exited; tries again every second if it cannot."""
        retry_at: dict[str, float] = {}
        while not self._stopping.wait(self.check_s):
            for role in ("events", "views"):
                with self._guard:
                    if self._stopping.is_set():
                        return
                    server: RedisServer = getattr(self, role)
                    if server.process is not None and server.process.poll() is None:
                        continue
                    if time.monotonic() < retry_at.get(role, 0.0):
                        continue
                    log.warning("embedded_redis_exited", role=role, url=server.url,
                                exit_code=server.process.returncode if server.process else None)
                    try:
                        server.start(timeout=60.0)  # a long AOF takes a while to load
                    except RedisServerError as exc:
                        log.error("embedded_redis_restart_failed", role=role, url=server.url, error=str(exc))
                        retry_at[role] = time.monotonic() + 1.0
                        continue
                    self.restarts += 1
                    self._record()
                    log.warning("embedded_redis_restarted", role=role, url=server.url, pid=server.process.pid)
                if self.on_restart is not None:
                    try:
                        self.on_restart(server)
                    except Exception as exc:  # noqa: BLE001 - the supervisor must keep watching
                        log.warning("embedded_redis_restart_hook_failed", role=role, error=str(exc))

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=15)
        with self._guard:
            for server in self.servers:
                server.stop()
            if self._lock_file is not None:
                (self.folder / RECORD).unlink(missing_ok=True)
                fcntl.flock(self._lock_file, fcntl.LOCK_UN)
                self._lock_file.close()
                self._lock_file = None
