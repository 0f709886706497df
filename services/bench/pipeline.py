"""Benchmarks. Figures come from these commands only (see the README for what was measured); their click commands
are in services/cli/bench/, which call the functions here.

``souk bench pipeline``: many concurrent games driven with random legal commands through the gateway-less
path: the driver XADDs commands to ``souk:commands``; ``souk engine`` and ``souk projector`` run as separate
processes; latency is command published -> the projector's notice that the game's views reached the command's
last event (the version in the engine's accepted reply). Closed loop per game (one command in flight per game);
``--rate`` paces the offered load. ``cpu_us_per_command``: the CPU time each process spent per command while
measuring (/proc for the driver and the workers, INFO cpu for each Redis). ``machine_domain_games_per_s``: a
2-second ``souk bench domain`` run first, to place the machine (they differ a lot).

``souk bench domain``: random playouts of the pure domain (no Redis): games and commands per second.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from contracts.envelope import CommandEnvelope
from contracts.readmodels import ViewsUpdated
from contracts.table import CreateGame, JoinSeat
from services.store import keys
from services.runtime import progress
from services.runtime import tracing
from services.store.codec import encoder, reply_decoder
from services.store import clients
from services.store.resp import ClusterResp, Resp

DEFAULT_SEATS = {"samarkand": 4, "yspahan": 3, "istanbul": 3, "karawane": 3}  # every game the benchmarks play, and its seats


# --- pure domain ----------------------------------------------------------------------------------------

GAME_BOUND = 20_000  # commands a domain game may take before the bench leaves it (a bot going round in circles)


def started_table(game_name: str, seats: int, secret: bytes):
    """A game of ``seats`` created and every seat joined (seat s's token hash ``h{s}``), through the pure domain: the
    table its first seat's command is decided on."""
    from domain import table as tbl
    from domain.chance import Chance

    table = tbl.EMPTY
    for command in [tbl.newest_rules(CreateGame(game_name, "bench", seats))] + [
            JoinSeat(f"p{s}", f"h{s}") for s in range(seats)]:
        for e in tbl.decide(table, None, None, command, Chance(secret, table.version)):
            table = tbl.evolve(table, e)
    return table


def bench_domain(game_name: str, seats: int, seconds: float, seed: int) -> dict:
    from domain import table as tbl
    from domain.chance import Chance
    from domain.kernel import bot_command, get_game

    game = get_game(game_name)
    rng = random.Random(seed)
    games = commands = unfinished = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        secret = rng.randbytes(16)
        table = started_table(game_name, seats, secret)
        for _ in range(GAME_BOUND):
            if table.status == tbl.OVER or time.perf_counter() >= deadline:
                break
            seat = rng.choice(tbl.flow(table).awaiting)
            command = bot_command(game, table.state, seat, rng)
            origin = tbl.Origin(seat, str(commands))  # as the engine folds: each event with its command's origin
            for e in tbl.decide(table, seat, f"h{seat}", command, Chance(secret, table.version)):
                table = tbl.evolve(table, e, origin)
            commands += 1
        games += table.status == tbl.OVER
        unfinished += table.status != tbl.OVER and time.perf_counter() < deadline
    elapsed = time.perf_counter() - start
    return {"game": game_name, "seats": seats, "seconds": round(elapsed, 2), "games": games,
            "unfinished": unfinished,  # games the bot had not ended after GAME_BOUND commands (left, not counted)
            "games_per_s": round(games / elapsed, 2), "commands_per_s": round(commands / elapsed, 1),
            "command": f"souk bench domain --game {game_name} --seats {seats} --seconds {seconds:g}"}


# --- the pipeline ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Pipeline:
    """What ``souk bench pipeline`` is asked to run (its options)."""

    game: str = "samarkand"
    seconds: float = 20.0
    games: int = 300  # concurrent games
    rate: float = 0.0  # offered commands/s (0: as fast as it goes)
    senders: int = 256  # concurrent sender tasks
    projectors: int = 1  # projector processes, sharing the partitions (each owns its share)
    engines: int = 1  # engine processes sharing the partitions (each owning some: services/store/leases.py)
    fsync: str = "always"  # the embedded event store's appendfsync
    seed: int = 1
    progress: bool | None = None  # a progress bar of the measuring run on stderr (None: on a terminal)
    cluster: bool = False  # the event store on a local Redis Cluster (three primaries, a replica each)


@dataclass
class Driven:
    game_id: str
    seats: int
    version: int = 0
    in_flight: bool = False
    sent_at: float = 0.0
    target: int = 0  # the version the command in flight reached (from its accepted reply)
    over: bool = False
    status: str = "open"
    awaiting: tuple[int, ...] = ()


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    rejected: int = 0
    codes: dict[str, int] = field(default_factory=dict)
    measuring: bool = False


class _LeanView(msgspec.Struct):
    version: int
    status: str
    seat: int | None
    legal: list[msgspec.Raw]


def _token_hash(game_id: str, seat: int) -> str:
    return hashlib.sha256(f"bench-{game_id}-{seat}".encode()).hexdigest()


async def _xadd_rate(redis: Resp, seconds: float = 2.0) -> float:
    """A plain XADD loop from one client, one command at a time, for comparison with the pipeline's figures."""
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        await redis.call("XADD", "souk:bench:xadd", "*", "c", b"x" * 200)
        n += 1
    await redis.call("DEL", "souk:bench:xadd")
    return n / (time.perf_counter() - start)


def _stat(pid: int) -> list[str]:
    """A process's /proc/PID/stat fields after its name (state, ppid, ...; Linux)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def _process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far (Linux /proc)."""
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _redis_cpu(redis: Resp | ClusterResp) -> float:
    """CPU seconds a Redis has used; on a cluster, its primaries' (the replicas are counted apart)."""
    infos = await redis.on_every_primary("INFO", "cpu") if isinstance(redis, ClusterResp) \
        else [await redis.call("INFO", "cpu")]
    used = 0.0
    for info in infos:
        values = dict(line.split(":", 1) for line in info.decode().splitlines() if ":" in line)
        used += float(values["used_cpu_sys"]) + float(values["used_cpu_user"])
    return used


async def bench_pipeline(args: Pipeline, seats: int, check: Callable[[str, str], None] | None = None) -> dict:
    """``check(events_url, views_url)``: the stores checked as every `souk` command does (``services.cli.stores``,
    given by the CLI: bench does not import it), so that a new event store records SOUK_PARTITIONS and the driver
    queues each game's commands on its partition's stream, as the gateway does."""
    from services.embedded.redis import die_with_parent, embedded_redis, free_port

    # The machine's Python speed, before anything else runs: pipeline figures from different machines compare
    # only through it (the same code has measured 49.5 and 145 games/s here on different days).
    gauge = bench_domain("samarkand", 4, 2.0, 1)["games_per_s"]
    url, views_url = os.environ.get("REDIS_URL"), os.environ.get("SOUK_VIEWS_REDIS_URL")
    servers, tmp, cluster = [], None, None
    if not url and args.cluster:  # the events on a local cluster (AOF on every node), the read models in memory
        from services.embedded.cluster import LocalCluster
        from services.embedded.redis import RedisServer

        tmp = tempfile.TemporaryDirectory(prefix="souk-bench-")
        cluster = LocalCluster(Path(tmp.name) / "cluster", appendonly=True, fsync=args.fsync).start()
        servers = [RedisServer(Path(tmp.name) / "views", appendonly=False).start()]
        url = "redis+cluster://" + ",".join(f"{h}:{p}" for h, p in cluster.addresses())
        views_url = servers[0].url
    elif not url:  # the same two stores as `souk serve`: events with AOF, read models in memory
        tmp = tempfile.TemporaryDirectory(prefix="souk-bench-")
        servers = embedded_redis(tmp.name, args.fsync)
        url, views_url = servers[0].url, servers[1].url
    views_url = views_url or url
    if check is not None:
        check(url, views_url)
    redis, views = clients.lean(url), clients.lean(views_url)
    replicas = [] if cluster is None else [n.pid for p in cluster.primaries() for n in cluster.replicas_of(p)]
    env = {**os.environ, "REDIS_URL": url, "SOUK_VIEWS_REDIS_URL": views_url, "SOUK_LOG_LEVEL": "warning"}
    # Each engine names its consumer, so that the run can say which engines held commands (``_engine_holders``),
    # and serves its metrics, so that the run counts its conflicts (``_engine_conflicts``). The projectors own the
    # partitions as the engines do (group ``projector``), not a partition i/N of every event each.
    metrics_ports = [free_port() for _ in range(args.engines)]
    roles = [("engine", {**env, "SOUK_CONSUMER": f"bench-engine-{i}", "SOUK_METRICS_PORT": str(port)})
             for i, port in enumerate(metrics_ports)] + [
        ("projector", {**env, "SOUK_CONSUMER": f"bench-projector-{i}"}) for i in range(args.projectors)]
    # The workers' logs go to files, shown only if the run fails or a worker stops on its own (their shutdown
    # chatter would bury the figures).
    outputs = [tempfile.TemporaryFile() for _ in roles]
    procs = [subprocess.Popen([sys.executable, "-m", "services.cli", role], env=role_env, preexec_fn=die_with_parent,
                              stdout=out, stderr=subprocess.STDOUT)
             for (role, role_env), out in zip(roles, outputs)]
    failed = True
    try:
        xadd_per_s = await _xadd_rate(redis)

        async def cpu() -> dict[str, float]:
            """CPU seconds used so far by each part of the pipeline (the driver is this process)."""
            usage = resource.getrusage(resource.RUSAGE_SELF)
            engines = [_process_cpu(p.pid) for p in procs[:args.engines]]
            out = {"driver": usage.ru_utime + usage.ru_stime, "engine": sum(engines),
                   "projector": sum(_process_cpu(p.pid) for p in procs[args.engines:]),
                   "redis_events": await _redis_cpu(redis)}
            if args.engines > 1:  # each engine's share: whether its partitions spread the commands evenly
                out.update({f"engine_{i}": used for i, used in enumerate(engines)})
            if replicas:
                out["redis_replicas"] = sum(_process_cpu(pid) for pid in replicas)
            if views_url != url:
                out["redis_views"] = await _redis_cpu(views)
            return out

        async def conflicts() -> float:
            return sum([await asyncio.to_thread(_engine_conflicts, port) for port in metrics_ports])

        result = await _drive(redis, views, url, views_url, args, seats, cpu, conflicts)
        result["redis_xadd_per_s"] = round(xadd_per_s)
        result["machine_domain_games_per_s"] = gauge  # souk bench domain --game samarkand --seats 4, for 2 s
        result["command"] = ("souk bench pipeline " + " ".join(
            f"--{k} {v}" for k, v in (("game", args.game), ("seats", seats), ("seconds", f"{args.seconds:g}"),
                                        ("games", args.games), ("rate", f"{args.rate:g}"),
                                        ("senders", args.senders), ("engines", args.engines),
                                        ("projectors", args.projectors),
                                        ("fsync", args.fsync))) + (" --cluster" if args.cluster else "") + " --json")
        result["partitions"] = len(keys.PARTITIONS)
        failed = False
        return result
    finally:
        stopped = [p.poll() is not None for p in procs]
        for p in procs:
            p.terminate()
        for p in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=10)
        for (role, _), p, out, early in zip(roles, procs, outputs, stopped):
            if failed or early:
                out.seek(0)
                print(f"--- souk {role} (exit {p.returncode}):\n{out.read()[-8000:].decode(errors='replace')}",
                      file=sys.stderr)
            out.close()
        await redis.aclose()
        await views.aclose()
        for server in servers:
            server.stop()
        if cluster is not None:
            cluster.stop()
        if tmp:
            tmp.cleanup()


def _engine_conflicts(port: int) -> float:
    """An engine's ``souk_engine_conflicts_total`` so far, from its metrics endpoint (SOUK_METRICS_PORT)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
        for line in answer.read().decode().splitlines():
            if line.startswith("souk_engine_conflicts_total "):
                return float(line.split()[1])
    return 0.0


async def _engine_holders(redis: Resp | ClusterResp, seen: dict[str, int], every_s: float = 0.05) -> None:
    """Counts, in ``seen``, the samples (one every ``every_s``, until cancelled) in which each engine consumer held
    delivered, unanswered commands (XPENDING's summary, every partition's command stream): that several engines
    really shared the work, which their consumer group alone does not show (an answered command leaves no trace of
    who decided it)."""
    while True:
        holding: set[str] = set()
        for p in keys.PARTITIONS:
            summary = await redis.call("XPENDING", keys.commands(p), keys.ENGINE_GROUP)
            for consumer, _ in summary[3] or ():
                holding.add(consumer.decode())
        for consumer in holding:
            seen[consumer] = seen.get(consumer, 0) + 1
        await asyncio.sleep(every_s)


async def _drive(redis: Resp, views: Resp, url: str, views_url: str, args: Pipeline,
                 seats: int, cpu, conflicts) -> dict:
    rng = random.Random(args.seed)
    run_id = uuid.uuid4().hex[:8]
    channel = keys.replies(f"bench-{run_id}")
    games: dict[str, Driven] = {}
    ready: asyncio.Queue[Driven | None] = asyncio.Queue()
    stats = Stats()
    view_decoder = msgspec.json.Decoder(_LeanView)  # the fields the driver reads; the rest is skipped
    notice_decoder = msgspec.json.Decoder(ViewsUpdated)
    sent = [0]

    async def send(game_id: str, body, seat: int | None, token_hash: str | None,
                   expected_version: int | None = None) -> None:
        raw = body if isinstance(body, msgspec.Raw) else msgspec.Raw(encoder.encode(body))
        sent[0] += 1
        env = CommandEnvelope(f"{run_id}-{sent[0]}", game_id, raw, seat=seat, token_hash=token_hash,
                              reply_to=channel, sent_at=time.time(), expected_version=expected_version,
                              traceparent=tracing.child())  # as the gateway sends every command
        await redis.call("XADD", keys.commands(keys.partition(game_id)), "*", "c", encoder.encode(env))

    async def new_game() -> None:
        game_id = uuid.uuid4().hex[:12]
        games[game_id] = Driven(game_id, seats, in_flight=True)
        await send(game_id, CreateGame(args.game, "bench", seats, {}, rng.randbytes(32).hex(), unfair=True), None, None)
        for s in range(seats):
            await send(game_id, JoinSeat(f"p{s}", _token_hash(game_id, s), s), s, None)

    prefix = len(keys.view_updates(""))

    def complete(g: Driven) -> None:
        if stats.measuring and g.sent_at:
            stats.latencies.append(time.perf_counter() - g.sent_at)
        g.in_flight, g.target = False, 0
        ready.put_nowait(g)

    def on_notice(channel_name: bytes, data: bytes) -> None:
        g = games.get(channel_name[prefix:].decode())
        notice = notice_decoder.decode(data)
        if g is None or notice.version <= g.version:
            return
        g.version, g.status, g.awaiting = notice.version, notice.status, notice.awaiting
        if g.in_flight and (g.target and g.version >= g.target or not g.sent_at and g.version >= seats + 2):
            complete(g)  # the command's last event is projected (or the game is created, joined and started)

    def on_reply(_: bytes, data: bytes) -> None:
        reply = reply_decoder.decode(data)
        g = games.get(reply.game_id)
        if g is None or not g.sent_at or not g.in_flight:
            return
        if reply.status == "accepted":
            g.target = reply.version
            if g.version >= g.target:  # its views' notice came first
                complete(g)
        else:
            stats.rejected += stats.measuring
            stats.codes[reply.code] = stats.codes.get(reply.code, 0) + 1
            g.in_flight = False
            ready.put_nowait(g)

    next_slot = [time.perf_counter()]

    running = [True]

    async def sender() -> None:
        while running[0]:
            g = await ready.get()
            if g is None:  # shutdown sentinel
                return
            if args.rate:
                next_slot[0] = max(next_slot[0] + 1 / args.rate, time.perf_counter())  # even pacing, no bursts
                delay = next_slot[0] - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
            if g.status == "over":
                g.over = True
                await new_game()
                continue
            seat = rng.choice(g.awaiting)  # from the projector's notice: only that seat's view is read
            raw = await views.call("HGET", keys.views(g.game_id), str(seat))
            view = view_decoder.decode(raw) if raw is not None else None
            if view is None or view.version < g.version or not view.legal:  # not there yet: look again shortly
                await asyncio.sleep(0.001)
                ready.put_nowait(g)
                continue
            command = rng.choice(view.legal)
            g.in_flight, g.sent_at = True, time.perf_counter()
            # decided on this view: a bot says so, and the engine refuses it (stale) if the game moved on
            await send(g.game_id, command, seat, _token_hash(g.game_id, seat), view.version)

    updates, replies = clients.subscriber(views_url, on_notice), clients.subscriber(url, on_reply)
    await updates.start(patterns=(keys.view_updates("*"),))
    await replies.start(channels=(channel,))
    for _ in range(args.games):
        await new_game()
    senders = [asyncio.create_task(sender()) for _ in range(args.senders)]
    # Warm-up: the workers answer and every game is created, joined and playing, then a short settling time. A
    # fixed wait measured the workers' start-up on a loaded machine, and a short run then measured nothing.
    deadline = time.perf_counter() + 60.0
    while time.perf_counter() < deadline and not all(g.version >= seats + 2 for g in games.values()):
        await asyncio.sleep(0.05)
    await asyncio.sleep(min(5.0, 1.0 + args.games / 200))
    cpu_before, conflicts_before = await cpu(), await conflicts()
    stats.measuring = True
    start = time.perf_counter()
    holders: dict[str, int] = {}
    watching = asyncio.create_task(_engine_holders(redis, holders))
    await progress.wait(args.seconds, "measuring", args.progress)
    stats.measuring = False
    elapsed = time.perf_counter() - start
    watching.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await watching
    cpu_after, conflicts_after = await cpu(), await conflicts()
    running[0] = False
    for _ in senders:
        ready.put_nowait(None)
    await asyncio.wait(senders, timeout=10)
    for subscriber in (updates, replies):
        await subscriber.aclose()
    lat = sorted(stats.latencies)

    def pct(p: float) -> float:
        return round(lat[min(len(lat) - 1, int(p * len(lat)))] * 1000, 2) if lat else 0.0

    return {
        "game": args.game, "seats": seats, "games": args.games, "seconds": round(elapsed, 2),
        "offered_rate": args.rate or None, "commands": len(lat),
        "commands_per_s": round(len(lat) / elapsed, 1), "p50_ms": pct(0.50), "p99_ms": pct(0.99),
        "max_ms": round(lat[-1] * 1000, 2) if lat else 0.0, "rejected": stats.rejected, "rejected_codes": stats.codes,
        "games_finished": sum(g.over for g in games.values()),
        # CPU time per command of each process while measuring (µs): where a command's cost goes.
        "cpu_us_per_command": {k: round((cpu_after[k] - cpu_before[k]) / max(1, len(lat)) * 1e6)
                               for k in cpu_after},
        "cpu_cores_busy": round(sum(cpu_after[k] - cpu_before[k] for k in cpu_after if not k.startswith("engine_"))
                                / elapsed, 2),
        # commands the engines decided again while measuring, their append having found the game moved on under
        # the engine's cached state (souk_engine_conflicts_total): the cost of engines sharing a game's commands
        "engine_conflicts": round(conflicts_after - conflicts_before),
        "engine_holders": dict(sorted(holders.items())),
    }
