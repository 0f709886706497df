"""Clock workers owning partitions (issue #22): a ``Leases`` with no stream, whose partitions mean only the deadline
indexes its owner polls (a clock has no consumer group to claim from)."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from services.clock import ClockWorker, Takeover
from services.engine.service import Engine
from services.store import keys
from services.store.codec import command_envelope_decoder
from services.store.events import RedisEventStore
from services.store.leases import Leases
from tests.services.test_clock_worker import started

pytestmark = pytest.mark.anyio
LEASE_MS = 600


async def test_leases_without_a_stream_take_and_release_only_the_leases(four_partitions, redis):
    """No consumer group exists on any stream: taking a partition claims nothing, releasing one leaves no group
    behind, and a clean stop frees every lease and the heartbeat at once."""
    leases = Leases(redis, "clock", "clock-x", lease_ms=2000, stream=None)
    await leases.tick()
    assert sorted(leases.owned) == list(keys.PARTITIONS)
    assert leases.catching_up == set()
    for p in keys.PARTITIONS:
        assert await redis.get(keys.lease("clock", p)) in (b"clock-x", "clock-x")
        assert not await redis.exists(keys.commands(p))
    await leases.stop()
    assert leases.owned == {}
    for p in keys.PARTITIONS:
        assert not await redis.exists(keys.lease("clock", p))
    assert await redis.zrange(keys.members("clock"), 0, -1) == []


async def test_two_clock_workers_share_the_partitions_and_one_that_dies_leaves_them_to_the_other(four_partitions,
                                                                                                  redis):
    """Two clock workers, each at its share (two partitions): a game's deadline is fired by the owner of its
    partition only; the other never polls it. One that stops renewing (killed -9) stops polling once its leases
    lapse by its own clock, and the other takes its partitions and fires their overdue deadlines."""
    store = RedisEventStore(redis)
    engine = Engine(redis, store)
    games = {p: next(g for g in (f"g{n}" for n in range(200)) if keys.partition(g) == p) for p in keys.PARTITIONS}
    for game_id in games.values():
        await started(engine, game_id, {"per_decision": 0.05, "on_timeout": "forfeit"})
    a = Leases(redis, keys.CLOCK_GROUP, "clock-a", lease_ms=LEASE_MS, stream=None)
    b = Leases(redis, keys.CLOCK_GROUP, "clock-b", lease_ms=LEASE_MS, stream=None)
    await a.tick()  # alone: every partition
    await b.tick()  # its share is 2, none free yet
    await a.tick()  # two of a's are surplus now...
    assert len(await a.held()) == 2  # ...given up between two passes
    await b.tick()
    owned = {"a": await a.held(), "b": await b.held()}
    assert sorted(owned["a"] + owned["b"]) == list(keys.PARTITIONS) and len(owned["b"]) == 2, owned
    workers = {name: ClockWorker(redis, store, retry_s=0.3, takeover=Takeover("greedy"), leases=leases)
               for name, leases in (("a", a), ("b", b))}
    await asyncio.sleep(0.1)  # every deadline is due
    assert await workers["a"].fire_due() == 2 and await workers["b"].fire_due() == 2
    for p, game_id in games.items():  # one Timeout each, sent by its partition's owner alone
        sent = [command_envelope_decoder.decode(f[b"c"]) for _, f in await redis.xrange(keys.commands(p))]
        assert [(e.game_id, msgspec.json.decode(e.body)["type"]) for e in sent] == [(game_id, "table.Timeout")]

    # a dies: nothing renews its leases. Its own clock tells it to stop polling once they lapsed...
    await asyncio.sleep(LEASE_MS / 1000 + 0.1)
    assert await a.held() == []
    await b.tick()  # ...and b, a's heartbeat gone too, takes every partition
    assert await b.held() == list(keys.PARTITIONS)
    # the Timeouts were not decided (no engine here): every game is due again after the retry delay, b fires them
    assert await workers["b"].fire_due() == 4
    for p in keys.PARTITIONS:
        assert await redis.xlen(keys.commands(p)) == 2  # the same command id again: the engine decides it once
    await b.stop()
