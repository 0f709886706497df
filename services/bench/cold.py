"""``souk bench cold``: what the engine's cold load of a game costs as the game grows (issue #18, item 12).

Grows one game (Samarkand, 3 seats, undo ``own_turn``) through the real engine on a fresh embedded Redis (the
event store, as ``souk serve`` runs it): random legal commands, most of them taken back at once by an undo, so
that the game keeps going to any length. When it reaches each ``--at`` length (100, 1,000 and 10,000 events by
default) and nearly a whole snapshot interval more (``--every`` - 5 events: about the most a load folds after its
snapshot), it times ``Engine.load`` of that game by an engine that does
not hold it (a fresh cache: what a restarted engine, or one whose cache let the game go, pays on its next command),
``--samples`` times: from the engine's snapshot (``services/engine/snapshots.py``, one every ``--every`` events),
then with the snapshot deleted (folded from the first event, as every load was before). Prints p50 / p99 ms each.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

from contracts.envelope import CommandEnvelope
from contracts.table import CreateGame, JoinSeat, RequestUndo
from domain import table as tbl
from services.store import keys
from services.store.codec import encoder

TITLE, SEATS = "samarkand", 3
UNDO_RATE = 0.97  # the share of moves taken back at once: the game grows without ending


def _token(seat: int) -> str:
    return f"{seat + 1:064x}"


async def _grow(engine: Any, game_id: str, rng: random.Random, until: int) -> int:
    """Plays until the game has at least ``until`` events; returns its length."""
    from domain.kernel import get_game

    game = get_game(TITLE)
    while True:
        table = (await engine.load(game_id)).table
        if table.version >= until:
            return table.version
        if table.status != tbl.PLAYING:
            raise RuntimeError(f"the game ended at {table.version} events, before {until}: try another --seed")
        undos = [(s, targets[0]) for s in range(SEATS) if (targets := tbl.undo_targets(table, s))]
        if undos and rng.random() < UNDO_RATE:
            seat, to = rng.choice(undos)
            body: Any = RequestUndo(to)
        else:
            seat = rng.choice(game.flow(table.state).awaiting)
            body = rng.choice(game.legal_commands(table.state, seat))
        [reply] = await engine.handle([_envelope(game_id, body, seat, _token(seat), rng)])
        if reply.status != "accepted":
            raise RuntimeError(f"{body!r} was refused: {reply.code} {reply.message}")


def _envelope(game_id: str, body: Any, seat: int | None, token: str | None, rng: random.Random) -> CommandEnvelope:
    return CommandEnvelope(rng.randbytes(16).hex(), game_id, msgspec.Raw(encoder.encode(body)), seat=seat,
                           token_hash=token)


async def _time_loads(redis: Any, store: Any, game_id: str, samples: int) -> dict[str, float]:
    from services.engine.service import Engine

    timings, cpu = [], []
    for i in range(samples + 3):
        engine = Engine(redis, store)  # nothing cached
        started, used = time.perf_counter(), time.process_time()
        await engine.load(game_id)
        if i >= 3:  # the first ones warm decoders and connections up
            timings.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - used) * 1000)
    timings.sort()
    return {"p50_ms": round(statistics.median(timings), 3),
            "p99_ms": round(timings[min(len(timings) - 1, int(len(timings) * 0.99))], 3),
            "cpu_p50_ms": round(statistics.median(cpu), 3), "samples": samples}


async def bench_cold(at: tuple[int, ...], every: int, samples: int, seed: int) -> dict[str, Any]:
    from services.embedded.redis import RedisServer
    from services.engine.service import Engine
    from services.gateway.stores import Stores
    from services.runtime.config import Settings
    from services.store.events import RedisEventStore

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="souk-bench-cold-") as tmp:
        server = RedisServer(Path(tmp) / "events", appendonly=True, fsync="everysec").start()
        stores = Stores(Settings(redis_url=server.url))
        store = RedisEventStore(stores.events)
        try:
            redis = stores.events
            engine = Engine(redis, store, snapshot_every=every)
            game_id = "bench-cold"
            create = CreateGame(TITLE, "cold load", SEATS, {"undo": "own_turn"})
            joins = [_envelope(game_id, JoinSeat(f"p{s}", _token(s), s), None, None, rng) for s in range(SEATS)]
            replies = await engine.handle([_envelope(game_id, create, None, None, rng), *joins])
            if {r.status for r in replies} != {"accepted"}:
                raise RuntimeError(f"the game was not created: {replies}")
            result: dict[str, Any] = {"snapshot_every": every, "lengths": []}
            started = time.perf_counter()
            for target in sorted(at):
                # nearly a whole interval past the snapshot taken at (or just after) the target: about the most a
                # cold load folds after its snapshot
                length = await _grow(engine, game_id, rng, target + max(every - 5, 0))
                figures: dict[str, Any] = {"target": target, "events": length}
                snapshot = await redis.get(keys.engine_snapshot(game_id))
                figures["snapshot_version"] = (msgspec.msgpack.decode(snapshot)[2] if snapshot else 0)
                figures["snapshot_bytes"] = len(snapshot or b"")
                # what idempotency keeps in the event store (SOUK_OUTCOME_WINDOW), by Redis's own count
                figures["outcomes"] = await redis.hlen(keys.outcomes(game_id))
                figures["outcomes_bytes"] = sum([await redis.memory_usage(k) or 0 for k in (
                    keys.outcomes(game_id), keys.outcome_order(game_id))])
                figures["from_snapshot"] = await _time_loads(redis, store, game_id, samples)
                await redis.delete(keys.engine_snapshot(game_id))
                figures["from_the_start"] = await _time_loads(redis, store, game_id, samples)
                if snapshot:
                    await redis.set(keys.engine_snapshot(game_id), snapshot)
                result["lengths"].append(figures)
            result["played_s"] = round(time.perf_counter() - started, 2)
            result["command"] = (f"souk bench cold --every {every} --samples {samples} --seed {seed} "
                                 + " ".join(f"--at {n}" for n in sorted(at)))
            return result
        finally:
            await store.aclose()
            await stores.aclose()
            server.stop()
