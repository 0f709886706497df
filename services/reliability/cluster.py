"""The processes of a chaos run, as production runs them: two embedded Redis (the event store with AOF fsynced on
every write, the read store in memory), ``souk engine`` (one or two), ``souk projector`` and ``souk gateway``, each
a child process, and the faults done to them: kill -9 and restart, the event store's Redis killed and restarted
on its port and data directory, restarted and loading its data for a while (LOADING), or out of memory (OOM) for a
few seconds, the read store flushed. ``OnRedisCluster``: the same with the event store on a local Redis Cluster, and
the faults a cluster has (a primary killed and failed over, then back as a replica; a replica killed; a primary out
of memory).

Child processes are started from the thread that runs the event loop, and each Redis from one long-lived thread
of its own: ``die_with_parent`` ties a child's life to the *thread* that started it, so none is started from a
short-lived worker thread.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import redis.asyncio as aioredis

from services.embedded.cluster import LocalCluster, Node
from services.embedded.redis import RedisServer, die_with_parent, free_port
from services.store import keys as store_keys

ENGINE, PROJECTOR, GATEWAY = "engine", "projector", "gateway"


@dataclass
class Proc:
    """One ``souk <role>`` child process; its output goes to ``log_path`` (appended across restarts)."""

    role: str
    argv: list[str]
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen | None = None
    killed: bool = False  # by the chaos run (an exit it caused is not a crash)
    started_at: float = 0.0

    def start(self) -> Proc:
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(self.argv, env=self.env, stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT, preexec_fn=die_with_parent)
        self.started_at = time.monotonic()
        return self

    @property
    def pid(self) -> int:
        return self.process.pid if self.process else 0

    def exited(self) -> int | None:
        """The exit code if the process ended by itself (not killed by the run), else None."""
        if self.process is None or self.killed:
            return None
        return self.process.poll()

    def kill(self) -> None:
        """SIGKILL, as a crash or the OOM killer would."""
        self.killed = True
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self, timeout: float = 10.0) -> None:
        self.killed = True
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)

    def tail(self, size: int = 3000) -> str:
        try:
            data = self.log_path.read_bytes()
        except OSError:
            return ""
        return data[-size:].decode(errors="replace")


@dataclass
class Crash:
    """A process that ended without being killed by the run (it was restarted)."""

    role: str
    exit_code: int
    tail: str
    at: float = field(default_factory=time.monotonic)


class Cluster:
    def __init__(self, data_dir: Path, engines: int = 1, reclaim_idle_ms: int = 2000,
                 log_level: str = "warning") -> None:
        self.data_dir = Path(data_dir)
        self.logs = self.data_dir / "logs"
        self.events = self._event_store()
        self.views = RedisServer(self.data_dir / "views", appendonly=False)
        self.port = free_port()
        self.engines_wanted = engines
        self.reclaim_idle_ms = reclaim_idle_ms
        self.log_level = log_level
        self.procs: dict[str, list[Proc]] = {ENGINE: [], PROJECTOR: [], GATEWAY: []}
        self.crashes: list[Crash] = []
        # Held while a fault stops and starts a Redis itself: the supervisor must not take that stop for a crash
        # and start a second server on the same port (seen once: "Address already in use", counted as crashes).
        self.redis_fault = asyncio.Lock()
        self.redis_restarts = 0
        self.struck_at: float | None = None  # when the fault under way really began (after what prepared it)
        self._spawned = 0
        # One thread starts (and restarts) both Redis for the whole run: see the module docstring.
        self._redis_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="souk-chaos-redis")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _event_store(self) -> RedisServer:
        return RedisServer(self.data_dir / "events", appendonly=True, fsync="always")

    @property
    def events_url(self) -> str:
        return self.events.url

    def redis_servers(self) -> list[RedisServer]:
        """Every redis-server of the run, which the supervisor restarts if one ends by itself."""
        return [self.events, self.views]

    async def _start_event_store(self) -> None:
        await self._in_redis_thread(self.events.start)

    async def _stop_event_store(self) -> None:
        await self._in_redis_thread(self.events.stop)

    def env(self) -> dict[str, str]:
        # Every simulated client comes from 127.0.0.1: limits per client address would throttle the whole load
        # as one client (they are off unless the environment sets them); the limit per seat token stays.
        limits = {"SOUK_RATE_PER_CLIENT": "0", "SOUK_OPEN_GAMES_PER_CLIENT": "0", "SOUK_CONNECTIONS_PER_CLIENT": "0"}
        return {**limits, **os.environ, "REDIS_URL": self.events_url, "SOUK_VIEWS_REDIS_URL": self.views.url,
                "SOUK_RECLAIM_IDLE_MS": str(self.reclaim_idle_ms), "SOUK_LOG_LEVEL": self.log_level,
                # a killed engine's, projector's or clock's partitions wait as long for another as its pending
                # entries waited for a reclaim
                "SOUK_ENGINE_LEASE_MS": str(self.reclaim_idle_ms), "SOUK_PROJECTOR_LEASE_MS": str(self.reclaim_idle_ms),
                "SOUK_CLOCK_LEASE_MS": str(self.reclaim_idle_ms),
                "SOUK_LOG_FORMAT": "json", "PYTHONUNBUFFERED": "1"}

    async def _in_redis_thread(self, fn):
        return await asyncio.get_running_loop().run_in_executor(self._redis_thread, fn)

    def spawn(self, role: str) -> Proc:
        self._spawned += 1
        argv = [sys.executable, "-m", "services.cli", role]
        if role == GATEWAY:
            argv += ["--host", "127.0.0.1", "--port", str(self.port)]
        proc = Proc(role, argv, self.env(), self.logs / f"{role}.log").start()
        self.procs[role].append(proc)
        return proc

    async def start(self, timeout: float = 60.0) -> None:
        self.logs.mkdir(parents=True, exist_ok=True)
        await self._start_event_store()
        await self._in_redis_thread(self.views.start)
        for _ in range(self.engines_wanted):
            self.spawn(ENGINE)
        self.spawn(PROJECTOR)
        self.spawn(GATEWAY)
        await self.wait_gateway(timeout)

    async def wait_gateway(self, timeout: float) -> None:
        """Until the gateway answers HTTP (any status: /health is 503 while a listener reconnects)."""
        from services.reliability.http import Client, TransportError

        deadline = time.monotonic() + timeout
        client = Client(self.url, timeout=2.0, connect_timeout=1.0)
        try:
            while time.monotonic() < deadline:
                try:
                    await client.get("/health")
                    return
                except TransportError:
                    await asyncio.sleep(0.1)
        finally:
            await client.aclose()
        gateway = self.procs[GATEWAY][-1]
        raise RuntimeError(f"souk gateway did not answer within {timeout} s:\n{gateway.tail()}")

    def running(self, role: str) -> list[Proc]:
        return [p for p in self.procs[role] if not p.killed]

    # --- faults -------------------------------------------------------------------------------------------

    async def kill_and_restart(self, role: str, rng: random.Random) -> str:
        """kill -9 one process of the role; a supervisor starts a new one shortly after (0 to 0.5 s)."""
        victim = rng.choice(self.running(role))
        victim.kill()
        await asyncio.sleep(rng.uniform(0.0, 0.5))
        self.spawn(role)
        return f"{role} pid {victim.pid}"

    async def kill_event_store(self, rng: random.Random) -> str:
        """kill -9 the event store's Redis; it starts again on the same port and data directory (its AOF)."""
        async with self.redis_fault:
            process = self.events.process
            assert process is not None
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
            self.events.process = None
            await asyncio.sleep(rng.uniform(0.2, 1.0))
            await self._in_redis_thread(self.events.start)
        self.redis_restarts += 1
        return f"event store redis pid {process.pid}"

    async def event_store_loading(self, rng: random.Random, load_s: float = 2.0) -> str:
        """The event store's Redis restarted, and loading its data for about ``load_s`` seconds (each key slowed by
        Redis's ``key-load-delay``, clients answered meanwhile: ``-LOADING``): its AOF is rewritten first, so that
        the data is in the AOF's RDB part, which is where Redis applies the delay."""
        client = aioredis.Redis.from_url(self.events.url)
        try:
            await client.bgrewriteaof()
            deadline = time.monotonic() + 30
            while (await client.info("persistence"))["aof_rewrite_in_progress"] and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            keys = max(1, await client.dbsize())
        finally:
            await client.aclose()
        async with self.redis_fault:
            await self._in_redis_thread(self.events.stop)
            self.struck_at = time.monotonic()  # down: a command sent before this may have been taken
            # Redis slows each key of the RDB part and each command of the AOF's incremental part alike
            entries = keys + sum(f.read_bytes().count(b"\r\n*") + 1
                                 for f in (self.events.data_dir / "appendonlydir").glob("*.incr.aof"))
            delay_us = max(10, min(100_000, int(load_s * 1e6 / entries)))
            self.events.options = ("--key-load-delay", str(delay_us), "--loading-process-events-interval-bytes",
                                   "1024")
            try:
                await self._in_redis_thread(lambda: self.events.start(loading=True))
            finally:
                self.events.options = ()  # the next start (a kill's, the supervisor's) loads at full speed
        self.redis_restarts += 1
        started, client = time.monotonic(), aioredis.Redis.from_url(self.events.url, socket_timeout=30)
        try:
            while (await client.info("persistence"))["loading"] and time.monotonic() < started + 60:
                await asyncio.sleep(0.05)
        finally:
            await client.aclose()
        return (f"event store restarted, LOADING {keys} keys and {entries - keys} AOF commands for "
                f"{time.monotonic() - started:.1f} s")

    async def event_store_out_of_memory(self, rng: random.Random) -> str:
        """The event store's Redis at its ``maxmemory`` under ``noeviction`` for 2 to 4 s (every write refused:
        OOM), then as it was."""
        held = await self._out_of_memory(aioredis.Redis.from_url(self.events.url), rng)
        return f"event store out of memory (maxmemory 1 byte, noeviction) for {held:.1f} s"

    async def _out_of_memory(self, client: aioredis.Redis, rng: random.Random) -> float:
        """``client``'s Redis at ``maxmemory`` 1 byte under ``noeviction`` for 2 to 4 s, then as it was; returns how
        long it held (``client`` is closed)."""
        try:
            before = await client.config_get("maxmemory*")
            await client.config_set("maxmemory-policy", "noeviction")
            await client.config_set("maxmemory", 1)
            self.struck_at = time.monotonic()  # a command sent before this was taken
            held = rng.uniform(2.0, 4.0)
            try:
                await asyncio.sleep(held)
            finally:
                await client.config_set("maxmemory", before.get("maxmemory", "0"))
                await client.config_set("maxmemory-policy", before.get("maxmemory-policy", "noeviction"))
        finally:
            await client.aclose()
        return held

    async def flush_read_store(self) -> str:
        client = aioredis.Redis.from_url(self.views.url)
        try:
            await client.flushdb()
        finally:
            await client.aclose()
        return "read store FLUSHDB"

    async def toggle_second_engine(self, rng: random.Random) -> str:
        """One engine running: a second one starts. Two: one of them is killed (-9) and not replaced."""
        running = self.running(ENGINE)
        if len(running) < 2:
            self.spawn(ENGINE)
            return "second engine started"
        victim = rng.choice(running)
        victim.kill()
        return f"engine pid {victim.pid} killed, one left"

    # --- supervision --------------------------------------------------------------------------------------

    async def supervise(self) -> None:
        """Restarts a process that ended by itself, and records it: a crash is a finding."""
        while True:
            await asyncio.sleep(0.5)
            for role, procs in self.procs.items():
                for proc in list(procs):
                    code = proc.exited()
                    if code is not None:
                        self.crashes.append(Crash(role, code, proc.tail()))
                        proc.killed = True
                        self.spawn(role)
            for server in self.redis_servers():
                if self.redis_fault.locked():
                    continue
                if server.process is not None and server.process.poll() is not None:
                    self.crashes.append(Crash(f"redis {server.data_dir.name}", server.process.returncode,
                                              _read_tail(server.data_dir / "redis.log")))
                    server.process = None
                    await self._in_redis_thread(server.start)

    async def stop(self) -> None:
        for role in (GATEWAY, PROJECTOR, ENGINE):
            for proc in self.procs[role]:
                proc.stop()
        await self._stop_event_store()
        await self._in_redis_thread(self.views.stop)
        self._redis_thread.shutdown(wait=True)

    def process_counts(self) -> dict[str, int]:
        return {role: len(procs) for role, procs in self.procs.items()}


class OnRedisCluster(Cluster):
    """The same processes with the event store on a local Redis Cluster (``LocalCluster``: three primaries and a
    replica each, AOF fsynced on every write on each node) holding ``partitions`` partitions, and the faults of a
    cluster besides the processes' (its read store stays one embedded Redis, so that flushing it is still a fault,
    one that cannot touch the event store). The partitions are given to every process (``SOUK_PARTITIONS``: the
    first to start creates the store with them), and must be at least the primaries so that each primary holds
    some; the run's own process uses them too (``keys.use``, by ``run_chaos``)."""

    def __init__(self, data_dir: Path, partitions: int, **options) -> None:
        super().__init__(data_dir, **options)
        self.partitions = partitions
        self.failovers: list[dict[str, object]] = []  # each primary killed: who took over, how long it took

    def _event_store(self) -> LocalCluster:
        return LocalCluster(self.data_dir / "events", appendonly=True, fsync="always")

    @property
    def events_url(self) -> str:
        """Every node, down ones too: a process (re)started while a node is down learns the cluster from another."""
        return "redis+cluster://" + ",".join(n.address for n in self.events.nodes)

    def redis_servers(self) -> list[RedisServer]:
        return [*(n.server for n in self.events.nodes), self.views]

    def env(self) -> dict[str, str]:
        return {**super().env(), "SOUK_PARTITIONS": str(self.partitions)}

    async def _start_event_store(self) -> None:
        await self._in_redis_thread(self.events.start)

    async def _stop_event_store(self) -> None:
        await self._in_redis_thread(self.events.stop)

    def _primaries_holding_partitions(self) -> list[Node]:
        """The primaries that serve a partition's slot: a fault on another would touch none of Souk's keys."""
        serving = {self.events.primary_for(store_keys.games(p)).port for p in store_keys.PARTITIONS}
        return [n for n in self.events.primaries() if n.port in serving]

    # --- faults -------------------------------------------------------------------------------------------

    async def kill_primary(self, rng: random.Random) -> str:
        """kill -9 a primary holding partitions; one of its replicas takes over (``LocalCluster.fail_over`` waits
        until every node agrees), and 0.5 to 2 s later the killed node starts again on its port and folder: it
        comes back as a replica of the node that took over (``LocalCluster.restart`` waits until it is in sync)."""
        async with self.redis_fault:
            victim = rng.choice(await self._in_redis_thread(self._primaries_holding_partitions))
            self.struck_at = time.monotonic()
            promoted = await self._in_redis_thread(lambda: self.events.fail_over(victim))
            took_over_s = round(time.monotonic() - self.struck_at, 2)
            await asyncio.sleep(rng.uniform(0.5, 2.0))
            back = time.monotonic()
            await self._in_redis_thread(lambda: self.events.restart(victim))
            replica_of = await self._in_redis_thread(lambda: [p.port for p in self.events.primaries()
                                                              if victim in self.events.replicas_of(p)])
        self.redis_restarts += 1
        self.failovers.append({"killed": victim.port, "promoted": promoted.port, "took_over_s": took_over_s,
                               "back_as_replica_of": replica_of[0] if replica_of else None})
        return (f"primary {victim.address} killed -9, its replica {promoted.address} took over in {took_over_s} s; "
                f"restarted, back as a replica of {replica_of} in {time.monotonic() - back:.1f} s")

    async def kill_replica(self, rng: random.Random) -> str:
        """kill -9 a replica of a primary holding partitions (its primary's answers then wait out the replica
        wait, ``REPLICA_WAIT_MS``), restarted 0.2 to 1 s later: it syncs again with its primary."""
        async with self.redis_fault:
            replicas = await self._in_redis_thread(
                lambda: [r for p in self._primaries_holding_partitions() for r in self.events.replicas_of(p)])
            victim = rng.choice(replicas)
            self.struck_at = time.monotonic()
            await self._in_redis_thread(victim.kill)
            await asyncio.sleep(rng.uniform(0.2, 1.0))
            await self._in_redis_thread(lambda: self.events.restart(victim))
        self.redis_restarts += 1
        return (f"replica {victim.address} killed -9, restarted and in sync after "
                f"{time.monotonic() - self.struck_at:.1f} s")

    async def primary_out_of_memory(self, rng: random.Random) -> str:
        """A primary holding partitions at its ``maxmemory`` under ``noeviction`` for 2 to 4 s (every write to its
        slots refused: OOM; the other primaries go on), then as it was."""
        victim = rng.choice(await self._in_redis_thread(self._primaries_holding_partitions))
        held = await self._out_of_memory(aioredis.Redis(host="127.0.0.1", port=victim.port), rng)
        return f"primary {victim.address} out of memory (maxmemory 1 byte, noeviction) for {held:.1f} s"

    async def health(self) -> list[str]:
        """Why the cluster is not whole (empty: every node up and agreeing, every primary with its replica)."""
        return await self._in_redis_thread(lambda: self.events.problems(replicas=self.events.replicas_count))


def _read_tail(path: Path, size: int = 3000) -> str:
    try:
        return path.read_bytes()[-size:].decode(errors="replace")
    except OSError:
        return ""
