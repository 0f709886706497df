"""A store of the layout of before partitions: refused by the services, named by its command; `souk store migrate`
renames its keys, and its games go on, their history and records whole."""

from __future__ import annotations

import pytest
import redis as sync_redis

from contracts.table import CreateGame, JoinSeat
from services.cli.stores import ROLE, StoreError, check
from services.engine.service import Engine
from services.history import record as records
from services.runtime.config import Settings
from services.store import keys
from services.store.events import RedisEventStore
from tests.cli.test_stores import one_line_refusal
from tests.embedded.support import clean_env, souk
from tests.services.tally import Add
from tests.services.test_clock_worker import cmd, th

pytestmark = pytest.mark.anyio

# The old layout, written out here as the old code named its keys (not taken from the code under test).
OLD_PARTITION = {"souk:commands": keys.commands, "souk:events": keys.events, "souk:games": keys.games,
                 "souk:refusals": keys.refusals, "souk:deadlines": keys.deadlines}
OLD_GAME = {"souk:game:{}": keys.game_stream, "souk:outcomes:{}": keys.outcomes,
            "souk:outcomes:order:{}": keys.outcome_order, "souk:head:{}": keys.head, "souk:seed:{}": keys.seed,
            "souk:order:{}": keys.order, "souk:engine:snapshot:{}": keys.engine_snapshot}


async def play(engine: Engine, game_id: str, moves: int, first: int = 0) -> None:
    """``moves`` Add(1) by the seats in turn (fewer if the game ends), after ``first`` already played."""
    for n in range(first, first + moves):
        table = (await engine.load(game_id)).table
        if table.status == "over":
            return
        seat = table.state.turn
        [reply] = await engine.handle([cmd(game_id, Add(1), seat=seat, token=th(seat), cid=f"add{n}")])
        assert reply.status == "accepted", reply


async def test_an_old_layout_store_is_refused_then_migrated_and_its_game_goes_on(redis, redis_url):
    store = RedisEventStore(redis)
    engine = Engine(redis, store, snapshot_every=2)
    replies = await engine.handle([cmd("g1", CreateGame("tally", "t", 2, {"target": 30}, "00ff" * 16, unfair=True),
                                       cid="create")]
                                  + [cmd("g1", JoinSeat(f"p{s}", th(s), s), seat=s, cid=f"join{s}") for s in (0, 1)])
    assert [r.status for r in replies] == ["accepted"] * 3
    await play(engine, "g1", 4)
    before = await store.read("g1")
    await redis.xadd(keys.commands(0), {"c": b"a command still queued"})
    # Now as an old store would hold it: the same keys under their old names, a role hash with no partitions.
    for old, new in OLD_PARTITION.items():
        if await redis.exists(new(0)):
            await redis.rename(new(0), old)
    for old, new in OLD_GAME.items():
        if await redis.exists(new("g1")):
            await redis.rename(new("g1"), old.format("g1"))
    await redis.hset(ROLE, mapping={"id": "an-old-store", "role": "events"})
    assert not [k for k in await redis.keys("souk:{*")]

    with pytest.raises(StoreError) as refused:
        check(Settings(redis_url=redis_url), views=False)
    assert refused.value.code == "old_layout" and "souk store migrate" in str(refused.value)
    line = one_line_refusal(souk("engine", env=clean_env(REDIS_URL=redis_url)))
    assert "old_layout" in line and "souk store migrate" in line

    done = souk("store", "migrate", env=clean_env(REDIS_URL=redis_url))
    assert done.returncode == 0, done.stderr
    assert "game keys" in done.stdout
    assert await redis.hget(ROLE, "partitions") == b"1"
    assert not [k for k in await redis.keys("souk:*") if not k.startswith((b"souk:{p0}:", ROLE.encode()))]
    assert (await redis.xrange(keys.commands(0)))[-1][1] == {b"c": b"a command still queued"}
    again = souk("store", "migrate", env=clean_env(REDIS_URL=redis_url))
    assert again.returncode == 0 and "nothing to migrate" in again.stdout
    check(Settings(redis_url=redis_url), views=False)  # the services now run on it

    fresh = Engine(redis, store)  # a new engine: loads the game from the renamed keys (snapshot, stream, head)
    assert await store.read("g1") == before
    [dup] = await fresh.handle([cmd("g1", Add(1), seat=0, token=th(0), cid="add0")])  # an old id: its outcome
    assert dup.status == "accepted" and await store.version("g1") == len(before)
    await play(fresh, "g1", 100, first=4)  # to its end
    after = await store.read("g1")
    assert after[:len(before)] == before and len(after) > len(before)
    made = records.make("g1", after, await redis.get(keys.seed("g1")))
    assert records.verify(made) == []
    assert [g async for g in store.game_ids()] == ["g1"]
    await store.aclose()


def test_a_bad_number_of_partitions_is_refused_with_its_code(redis_url):
    done = souk("engine", env=clean_env(REDIS_URL=redis_url, SOUK_PARTITIONS="0"))
    assert "bad_partitions" in one_line_refusal(done)
    sync_redis.Redis.from_url(redis_url).flushdb()
    check(Settings(redis_url=redis_url, partitions=3), views=False)  # a new store records its partitions
    assert sync_redis.Redis.from_url(redis_url).hget(ROLE, "partitions") == b"3"
    check(Settings(redis_url=redis_url, partitions=5), views=False)  # the setting applies at creation only
    assert keys.PARTITIONS == (0, 1, 2)
