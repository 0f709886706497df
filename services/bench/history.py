"""``souk bench history``: what reading a game's past costs (issue #10).

Plays one finished game of each title (random legal commands, through the real engine and projector, the
projector writing a snapshot every ``--every`` events) on a fresh pair of embedded Redis servers (the event store
and the read store, as ``souk serve`` runs them), then times each measure below over it and prints p50 / p99 ms.

- ``view_at``: the view at a random version, for a random audience (a seat or the spectator), through the
  gateway's own function (``services.gateway.stores.Reads.view_at``: the nearest snapshot, the game stream's
  entries after it, the fold, the views) and the JSON the route answers; first with the projector's snapshots,
  then with none (the snapshots deleted: every answer folds from the game's first event).

- ``verify``: ``souk verify``'s speed on each game's record (``services.history.verify.verify_record``: the
  hash chain, the seed against its commitment, every command re-run by the rules and compared byte for byte), in
  events/s, best and median of ``VERIFY_RUNS`` runs, with the record's size.

Each measure in ``MEASURES`` takes the stores and the played games and returns its figures under its own name.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

from services.bench.storage import play
from services.store import keys
from services.store.codec import encoder


def _figures(samples_s: list[float], cpu_s: list[float]) -> dict[str, float]:
    """Wall-clock p50 / p99 / mean, and this process's CPU (p50: what a loaded machine's waiting does not inflate,
    the Redis servers' work apart)."""
    ms = sorted(s * 1000 for s in samples_s)
    return {"p50_ms": round(statistics.median(ms), 3), "p99_ms": round(ms[min(len(ms) - 1, int(len(ms) * 0.99))], 3),
            "mean_ms": round(statistics.fmean(ms), 3), "cpu_p50_ms": round(statistics.median(cpu_s) * 1000, 3),
            "samples": len(ms)}


async def view_at(bench: Bench, rng: random.Random) -> dict[str, Any]:
    """The view at a random version of each finished game, with snapshots and with none."""
    from services.gateway.stores import Reads

    reads = Reads(bench.stores, None)  # type: ignore[arg-type]  # view_at waits on no update
    out: dict[str, Any] = {}
    for title, game_id in bench.games.items():
        length = await bench.events.xlen(keys.game_stream(game_id))
        seats = bench.seats[title]
        asked = [(rng.randint(1, length), rng.choice([*range(seats), None])) for _ in range(bench.samples)]
        figures: dict[str, Any] = {"events": length,
                                   "snapshot_count": await bench.views.zcard(keys.snapshots(game_id))}
        for mode in ("snapshots", "none"):
            if mode == "none":
                await bench.views.delete(keys.snapshots(game_id))
            for version, audience in asked[:10]:  # warm up: decoders built, connections made
                await reads.view_at(game_id, audience, version)
            timings, cpu = [], []
            for version, audience in asked:
                started, used = time.perf_counter(), time.process_time()
                view, _ = await reads.view_at(game_id, audience, version)
                encoder.encode(view)
                timings.append(time.perf_counter() - started)
                cpu.append(time.process_time() - used)
            figures[mode] = _figures(timings, cpu)
        out[title] = figures
    return out


VERIFY_RUNS = 5


async def verify(bench: Bench, rng: random.Random) -> dict[str, Any]:
    """``souk verify``'s speed on each finished game's record (read as ``souk export`` reads it)."""
    from services.history import record as records
    from services.history.transfer import read_record
    from services.history.verify import verify_record

    out: dict[str, Any] = {}
    for title, game_id in bench.games.items():
        record = await read_record(bench.stores.event_store, bench.events, game_id)
        size = len(records.encode(record))
        rates, cpu = [], []
        for _ in range(VERIFY_RUNS):
            started, used = time.perf_counter(), time.process_time()
            verdict = verify_record(record)
            rates.append(len(record.events) / (time.perf_counter() - started))
            cpu.append(time.process_time() - used)
            if not verdict.ok:
                raise RuntimeError(f"{title}: the record of {game_id} does not verify: {verdict.summary}")
        out[title] = {"events": len(record.events), "commands": len(record.commands or ()), "record_bytes": size,
                      "events_per_s_best": round(max(rates)), "events_per_s_p50": round(statistics.median(rates)),
                      "cpu_s_p50": round(statistics.median(cpu), 4), "runs": VERIFY_RUNS}
    return out


# Each measure: (name, the coroutine giving its figures).
MEASURES: list[tuple[str, Callable[[Bench, random.Random], Awaitable[dict[str, Any]]]]] = [
    ("view_at", view_at), ("verify", verify)]


class Bench:
    """The stores of one run and the finished games played on them (one per title)."""

    def __init__(self, stores: Any, games: dict[str, str], seats: dict[str, int], samples: int) -> None:
        self.stores, self.games, self.seats, self.samples = stores, games, seats, samples
        self.events: aioredis.Redis = stores.events
        self.views: aioredis.Redis = stores.views


async def bench_history(titles: dict[str, int], every: int, samples: int, seed: int) -> dict[str, Any]:
    from services.embedded.redis import RedisServer
    from services.engine.service import Engine
    from services.gateway.stores import Stores
    from services.projector.service import Projector
    from services.runtime.config import Settings
    from services.store.events import RedisEventStore

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="souk-bench-history-") as tmp:
        servers = [RedisServer(Path(tmp) / "events", appendonly=True, fsync="everysec").start(),
                   RedisServer(Path(tmp) / "views", appendonly=False).start()]
        stores = Stores(Settings(redis_url=servers[0].url, views_redis_url=servers[1].url))
        store = RedisEventStore(stores.events)
        projector = Projector(stores.views, store, snapshot_every=every)
        try:
            engine = Engine(stores.events, store)
            started = time.perf_counter()
            games = {title: (await play(engine, projector, stores.events, title, seats, 1, rng))[0]
                     for title, seats in titles.items()}
            result: dict[str, Any] = {"played_s": round(time.perf_counter() - started, 2), "snapshot_every": every}
            bench = Bench(stores, games, titles, samples)
            for name, measure in MEASURES:
                result[name] = await measure(bench, rng)
            result["command"] = (f"souk bench history --every {every} --samples {samples} --seed {seed} "
                                 + " ".join(f"--title {t}:{s}" for t, s in titles.items()))
            return result
        finally:
            await projector.aclose()
            await store.aclose()
            await stores.aclose()
            for server in servers:
                server.stop()
