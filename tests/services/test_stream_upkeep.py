"""The engine's upkeep of the streams (issue #8 items 14 and 15): souk:commands no longer grows without bound,
and consumers of stopped processes do not pile up in the groups."""

from __future__ import annotations

import msgspec
import pytest

from contracts.table import CreateGame
from services.store import keys
from services.store.streams import drop_stale_consumers, ensure_group, idle_consumers, trim_acknowledged
from tests.services.test_engine import cmd

pytestmark = pytest.mark.anyio


async def add_commands(redis, n: int) -> list[bytes]:
    return [await redis.xadd(keys.commands(0), {"c": msgspec.json.encode(cmd(f"g{i}", CreateGame("tally", "t", 2)))})
            for i in range(n)]


async def test_acknowledged_commands_are_trimmed_and_pending_ones_kept(redis):
    await ensure_group(redis, keys.commands(0), keys.ENGINE_GROUP)
    ids = await add_commands(redis, 10)
    delivered = await redis.xreadgroup(keys.ENGINE_GROUP, "e1", {keys.commands(0): ">"}, count=6)
    got = [entry_id for entry_id, _ in delivered[0][1]]
    await redis.xack(keys.commands(0), keys.ENGINE_GROUP, *got[:2], *got[3:])  # the third stays pending
    await trim_acknowledged(redis, keys.commands(0), keys.ENGINE_GROUP)
    left = [entry_id for entry_id, _ in await redis.xrange(keys.commands(0))]
    assert left == ids[2:]  # from the pending one on: it, the acknowledged after it, and the undelivered

    await redis.xack(keys.commands(0), keys.ENGINE_GROUP, got[2])
    await trim_acknowledged(redis, keys.commands(0), keys.ENGINE_GROUP)
    assert [entry_id for entry_id, _ in await redis.xrange(keys.commands(0))] == ids[5:]  # the last delivered on


async def test_a_stream_read_by_another_group_too_is_not_trimmed(redis):
    await ensure_group(redis, keys.commands(0), keys.ENGINE_GROUP)
    await ensure_group(redis, keys.commands(0), "audit")
    await add_commands(redis, 3)
    delivered = await redis.xreadgroup(keys.ENGINE_GROUP, "e1", {keys.commands(0): ">"})
    await redis.xack(keys.commands(0), keys.ENGINE_GROUP, *[i for i, _ in delivered[0][1]])
    assert await trim_acknowledged(redis, keys.commands(0), keys.ENGINE_GROUP) == 0
    assert await redis.xlen(keys.commands(0)) == 3


async def test_idle_consumers_with_nothing_pending_are_dropped_and_those_holding_entries_kept(redis):
    await ensure_group(redis, keys.commands(0), keys.ENGINE_GROUP)
    await add_commands(redis, 2)
    await redis.xreadgroup(keys.ENGINE_GROUP, "holds", {keys.commands(0): ">"}, count=1)
    await redis.xgroup_createconsumer(keys.commands(0), keys.ENGINE_GROUP, "gone")
    assert {c["consumer"] for c in await idle_consumers(redis, keys.commands(0), 0)} == {"holds", "gone"}
    assert await drop_stale_consumers(redis, keys.commands(0), idle_ms=0) == [f"{keys.ENGINE_GROUP}/gone"]
    names = [c["name"] for c in await redis.xinfo_consumers(keys.commands(0), keys.ENGINE_GROUP)]
    assert names == [b"holds"]
    assert await drop_stale_consumers(redis, keys.commands(0), idle_ms=3_600_000) == []


async def test_the_engine_keeps_the_commands_stream_short_while_it_runs(redis, redis_url):
    import asyncio

    from services.runtime.config import Settings
    from services.cli.workers import ENGINE, Workers

    workers = Workers(Settings(redis_url=redis_url, upkeep_s=0.1), roles=(ENGINE,))
    await workers.start()
    try:
        await add_commands(redis, 50)
        for _ in range(100):
            if await redis.xlen(keys.commands(0)) <= 1:
                break
            await asyncio.sleep(0.05)
        assert await redis.xlen(keys.commands(0)) <= 1
    finally:
        await workers.stop()


async def test_games_nobody_filled_in_time_are_cancelled_once_and_started_ones_kept(redis):
    import time

    from services.engine.service import Engine
    from services.store.events import RedisEventStore
    from services.engine.upkeep import expire_open_games
    from tests.services.test_engine import started

    engine = Engine(redis, RedisEventStore(redis))
    await started(engine, "full")  # its seats are all taken
    [reply] = await engine.handle([cmd("empty", CreateGame("tally", "t", 2), cid="create")])
    assert reply.status == "accepted"
    now = time.time()
    assert await expire_open_games(redis, ttl_s=3600, now=now) == 0  # not old enough
    assert await expire_open_games(redis, ttl_s=0, now=now + 1) == 2
    assert await expire_open_games(redis, ttl_s=0, now=now + 2) == 0  # each game is looked at once
    entries = await redis.xrange(keys.commands(0))
    from services.store.codec import command_envelope_decoder
    replies = await engine.handle([command_envelope_decoder.decode(f[b"c"]) for _, f in entries])
    by_game = {r.game_id: r for r in replies}
    assert by_game["empty"].status == "accepted" and by_game["full"].code == "game_started"
    assert (await engine.load("empty")).table.status == "cancelled"
    assert (await engine.load("full")).table.status == "playing"


async def test_a_refusals_outcome_is_forgotten_after_its_time_and_an_acceptance_never(redis):
    import time

    from services.engine.service import Engine
    from services.store.events import RedisEventStore
    from tests.services.tally import Add
    from tests.services.test_engine import started, th

    engine = Engine(redis, RedisEventStore(redis, refusal_ttl_s=60))
    turn = await started(engine)
    [refused] = await engine.handle([cmd("g1", Add(1), seat=1 - turn, token=th(1 - turn), cid="early")])
    [accepted] = await engine.handle([cmd("g1", Add(1), seat=turn, token=th(turn), cid="fine")])
    assert refused.code == "not_your_turn" and accepted.status == "accepted"
    assert await engine.store.forget_refusals(now=time.time() + 30) == 0  # not yet
    assert await engine.store.forget_refusals(now=time.time() + 61) == 1
    assert await engine.store.outcome("g1", f"{1 - turn}:early") is None
    assert await engine.store.outcome("g1", f"{turn}:fine") is not None
    assert await redis.zcard(keys.refusals(0)) == 0
