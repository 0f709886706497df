"""``souk bench storage``: what a finished game costs in Redis memory, per title and per kind of key.

Plays ``--games`` finished games of each title (random legal commands, the command ids and trace context the
SDK and the gateway send) through the real engine and projector, in this process, on a fresh pair of embedded
Redis servers (the event store and the read store, as ``souk serve`` runs them), then runs what the workers'
upkeep runs (``souk:events`` trimmed behind every projector group) and measures each key with ``MEMORY USAGE
key SAMPLES 0`` (exact). Keys shared by every game (``souk:events``, the lobby and its indexes, ``souk:games``)
are charged to the games in equal shares. ``used_memory`` (INFO) before and after is printed too, as a check.

Keys that expire (caches of finished games) are counted apart, as ``cache``: a finished game costs ``steady``
once they are gone, ``total`` before. ``souk bench storage`` (services/cli/bench/storage.py) prints the figures.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
import secrets
import tempfile
import time
import uuid
from collections import defaultdict
from typing import Any

import msgspec
import redis.asyncio as aioredis

from contracts.envelope import CommandEnvelope
from contracts.table import CreateGame, JoinSeat
from domain import table as tbl
from domain.kernel import bot_command
from services.store import keys
from services.store.codec import encoder

DEFAULT_SEATS = {"samarkand": 5, "yspahan": 4}  # the games of issue #9's measurement


def _traceparent() -> str:
    return f"00-{secrets.token_hex(16)}-{secrets.token_hex(8)}-01"


def _kind(key: str, game_id: str) -> str:
    """The kind of a game's key: its prefix with the game id and its partition's tag taken out (``souk:game``,
    ``souk:views``...)."""
    return re.sub(r"^souk:\{p\d+\}:", "souk:", key.replace(f":{game_id}", ""))


async def play(engine, projector, events: aioredis.Redis, title: str, seats: int, count: int,
               rng: random.Random, seed: str | None = None) -> list[str]:
    """Plays ``count`` games of ``title`` to their end, in lockstep (one command of each game per engine batch,
    then the projector reads what the engine appended, as the workers do). Returns their ids. ``seed`` (hex): the
    games' server seed, chosen (they are then ``unfair``): with ``rng``, the same games every time."""
    from services.store.streams import ensure_group

    await ensure_group(events, keys.events(0), keys.PROJECTOR_GROUP)
    ids = [uuid.uuid4().hex[:12] for _ in range(count)]

    def envelope(game_id: str, body: Any, seat: int | None, token: str | None = None) -> CommandEnvelope:
        return CommandEnvelope(secrets.token_hex(16), game_id, msgspec.Raw(encoder.encode(body)), seat=seat,
                               token_hash=token, sent_at=time.time(), traceparent=_traceparent())

    def token(game_id: str, seat: int) -> str:
        return f"{hash((game_id, seat)) & (2**256 - 1):064x}"

    first = [envelope(g, CreateGame(title, f"{title} bench", seats, seed=seed, unfair=seed is not None), None)
             for g in ids]
    # each seat gives its entropy, as the SDK's players do (README, Fair chance)
    first += [envelope(g, JoinSeat(f"player {s}", token(g, s), entropy=rng.randbytes(32).hex()), None)
              for g in ids for s in range(seats)]
    await engine.handle(first)
    await project_all(events, projector)
    running = list(ids)
    while running:
        batch = []
        for game_id in running:
            table = (await engine.load(game_id)).table
            seat = rng.choice(tbl.flow(table).awaiting)
            command = bot_command(tbl.game_of(table), table.state, seat, rng)
            batch.append(envelope(game_id, command, seat, token(game_id, seat)))
        replies = await engine.handle(batch)
        assert all(r.status == "accepted" for r in replies), [r for r in replies if r.status != "accepted"][:3]
        await project_all(events, projector)
        running = [g for g in running if (await engine.load(g)).table.status == tbl.PLAYING]
    return ids


async def project_all(events: aioredis.Redis, projector, consumer: str = "bench") -> None:
    """Projects what the projector group has not read of ``souk:events`` yet (as a projector worker would), then
    returns."""
    while True:
        read = await events.xreadgroup(keys.PROJECTOR_GROUP, consumer, {keys.events(0): ">"}, count=1000)
        if not read:
            return
        entries = read[0][1]
        await projector.handle([fields for _, fields in entries])
        await events.xack(keys.events(0), keys.PROJECTOR_GROUP, *[i for i, _ in entries])


async def _usage(client: aioredis.Redis, key: str | bytes) -> int:
    return int(await client.memory_usage(key, samples=0) or 0)


async def measure(events: aioredis.Redis, views: aioredis.Redis, by_title: dict[str, list[str]]) -> dict:
    """Bytes per finished game of each title, per kind of key (``MEMORY USAGE``)."""
    games = {g: title for title, ids in by_title.items() for g in ids}
    per_game: dict[str, dict[str, int]] = {g: defaultdict(int) for g in games}
    volatile: dict[str, set[str]] = {g: set() for g in games}
    shared: dict[str, int] = defaultdict(int)
    for store, client in (("events", events), ("views", views)):
        async for raw in client.scan_iter(count=1000):
            key = raw.decode()
            owner = next((g for g in (key.rsplit(":", 1)[-1], key.split(":")[2] if key.count(":") >= 2 else "")
                          if g in games), None)
            size = await _usage(client, raw)
            if owner is None:
                shared[f"{store}:{key}"] += size
                continue
            kind = _kind(key, owner)
            per_game[owner][kind] += size
            if await client.ttl(raw) > 0:
                volatile[owner].add(kind)
    result: dict[str, Any] = {}
    lengths = dict(zip(games, await asyncio.gather(*(events.xlen(keys.game_stream(g)) for g in games))))
    bus = shared.pop(f"events:{keys.events(0)}", 0)  # souk:events: charged to each game by its events
    shared_share = sum(shared.values()) / max(1, len(games))
    for title, ids in by_title.items():
        kinds: dict[str, float] = defaultdict(float)
        cache = 0.0
        for g in ids:
            for kind, size in per_game[g].items():
                kinds[kind] += size / len(ids)
                if kind in volatile[g]:
                    cache += size / len(ids)
            kinds[f"{keys.events(0)} (its entries' share)"] += bus * lengths[g] / max(1, sum(lengths.values())) / len(ids)
        kinds["lobby, indexes, souk:games... (an equal share)"] = shared_share
        total = sum(kinds.values())
        events_per_game = sum(lengths[g] for g in ids) / len(ids)
        result[title] = {"games": len(ids), "events_per_game": round(events_per_game),
                         "bytes_per_game": round(total), "cache_bytes": round(cache),
                         "steady_bytes_per_game": round(total - cache),
                         "by_kind": {k: round(v) for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])}}
    result["shared_keys"] = {f"events:{keys.events(0)}": bus, **dict(sorted(shared.items(), key=lambda kv: -kv[1]))}
    return result


async def bench_storage(games: int, titles: dict[str, int], seed: int, trim: bool = True) -> dict:
    from pathlib import Path

    from services.embedded.redis import RedisServer
    from services.engine.service import Engine
    from services.projector.service import Projector
    from services.store.events import RedisEventStore

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="souk-bench-storage-") as tmp:
        # the two stores of `souk serve` (the events with AOF; fsync does not change what is measured)
        servers = [RedisServer(Path(tmp) / "events", appendonly=True, fsync="everysec").start(),
                   RedisServer(Path(tmp) / "views", appendonly=False).start()]
        events = aioredis.Redis.from_url(servers[0].url)
        views = aioredis.Redis.from_url(servers[1].url)
        store = RedisEventStore(events)
        try:
            before = {"events": await _used(events), "views": await _used(views)}
            engine, projector = Engine(events, store), Projector(views, store)
            started = time.perf_counter()
            by_title = {title: await play(engine, projector, events, title, seats, games, rng)
                        for title, seats in titles.items()}
            played_s = time.perf_counter() - started
            if trim:
                await _upkeep(events)
            after = {"events": await _used(events), "views": await _used(views)}
            result = await measure(events, views, by_title)
            n = sum(len(ids) for ids in by_title.values())
            result["used_memory_per_game"] = {k: round((after[k] - before[k]) / n) for k in after}
            result["played_s"] = round(played_s, 2)
            result["command"] = (f"souk bench storage --games {games} "
                                 + " ".join(f"--title {t}:{s}" for t, s in titles.items()))
            return result
        finally:
            for client in (events, views):
                await client.aclose()
            await store.aclose()
            await projector.aclose()
            for server in servers:
                server.stop()


async def _upkeep(events: aioredis.Redis) -> None:
    """What the workers' upkeep would have done by now (the parts that exist in this version)."""
    with contextlib.suppress(ImportError):
        from services.store.streams import trim_read

        await trim_read(events, keys.events(0))


async def _used(client: aioredis.Redis) -> int:
    return int((await client.info("memory"))["used_memory"])
