"""The workers acknowledge their stream entries themselves, when they are done with them (FastStream's
acknowledgement middleware is off for the engine and the projector: ``AckPolicy.MANUAL``). The engine's entries
are acknowledged by the append script that records their commands' outcomes (one step, no XACK of their own); the
projector's once their batch's read models are written. An entry whose work is not done stays pending, for the
reclaimer."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import msgspec
import pytest
from faststream.redis import RedisBroker

from contracts.table import CreateGame, JoinSeat
from services.cli.workers import ENGINE, PROJECTOR, Workers
from services.engine.service import Contended
from services.runtime.config import Settings
from services.store import keys
from services.store.resp import Resp
from services.store.streams import IdentifiedEntries, batch_subscription, ensure_group
from tests.services.tally import Add
from tests.services.test_engine import cmd, th

pytestmark = pytest.mark.anyio


async def read_group(redis, stream: str, group: str) -> IdentifiedEntries:
    """What a consumer of ``group`` is delivered now (as FastStream hands it to the handler)."""
    delivered = await redis.xreadgroup(group, "test", {stream: ">"})
    return IdentifiedEntries([(entry, fields) for entry, fields in delivered[0][1]] if delivered else [], stream)


async def pending_ids(redis, stream: str, group: str) -> list[bytes]:
    return [p["message_id"] for p in await redis.xpending_range(stream, group, "-", "+", 100)]


async def send(redis, *envelopes) -> list[bytes]:
    return [await redis.xadd(keys.commands(0), {"c": msgspec.json.encode(e)}) for e in envelopes]


@contextlib.asynccontextmanager
async def lean_reader(redis_url: str, streams: str | tuple[str, ...], handle, **broker_options):
    """The engine's and the projector's kind of reader, running for the block: group "g"'s consumer "c" reads
    ``streams`` on a lean connection and hands each batch with its ids to ``handle``, which acknowledges it."""
    lean = Resp(redis_url)
    broker = RedisBroker(redis_url, apply_types=False, **broker_options)
    batch_subscription(broker, streams, "g", "c", handle, with_ids=True, acknowledges=True, lean=lean)
    await broker.start()
    try:
        yield
    finally:
        await broker.stop()
        await lean.aclose()


async def until(done: Callable[[], bool]) -> None:
    """Waits up to 2 s for ``done()`` (the test's asserts then say what did not come)."""
    for _ in range(100):
        if done():
            return
        await asyncio.sleep(0.02)


@pytest.fixture
async def workers(redis, redis_url):
    workers = Workers(Settings(redis_url=redis_url, views_redis_url=redis_url), roles=(ENGINE, PROJECTOR))
    await ensure_group(redis, keys.commands(0), keys.ENGINE_GROUP)
    await ensure_group(redis, keys.events(0), keys.PROJECTOR_GROUP)
    yield workers
    await workers.stop()


async def test_the_engines_batch_is_acknowledged_by_the_appends_that_answer_it(redis, workers):
    await send(redis, cmd("g1", CreateGame("tally", "t", 2, {}, "00ff" * 16, unfair=True), cid="create"),
               cmd("g1", JoinSeat("p0", th(0), 0), seat=0, cid="join0"),
               cmd("g1", JoinSeat("p0", th(0), 0), seat=0, cid="join0"),  # the same command again: a duplicate
               cmd("nope", Add(1), seat=0, token=th(0), cid="missing"))  # refused, recorded nowhere
    entries = await read_group(redis, keys.commands(0), keys.ENGINE_GROUP)
    assert len(entries) == 4
    await workers.on_commands(entries)
    assert await pending_ids(redis, keys.commands(0), keys.ENGINE_GROUP) == []
    assert await redis.xlen(keys.game_stream("g1")) == 2


async def test_a_command_whose_game_keeps_conflicting_stays_pending_and_the_rest_of_its_batch_does_not(
        redis, workers, monkeypatch):
    await send(redis, cmd("g1", CreateGame("tally", "t", 2, {}, "00ff" * 16, unfair=True), cid="create1"))
    await workers.on_commands(await read_group(redis, keys.commands(0), keys.ENGINE_GROUP))
    busy, _ = await send(redis, cmd("g1", JoinSeat("p0", th(0), 0), seat=0, cid="join"),
                            cmd("g2", CreateGame("tally", "t", 2, {}, "00ff" * 16, unfair=True), cid="create2"))
    real_append = workers.store.append

    async def g1_moved_on(appends, *acks):  # another engine keeps appending to g1 first (the real script says so)
        moved = [msgspec.structs.replace(a, expected_version=99) if a.game_id == "g1" else a for a in appends]
        return await real_append(moved, *acks)

    monkeypatch.setattr(workers.store, "append", g1_moved_on)
    with pytest.raises(Contended):
        await workers.on_commands(await read_group(redis, keys.commands(0), keys.ENGINE_GROUP))
    assert await pending_ids(redis, keys.commands(0), keys.ENGINE_GROUP) == [busy]
    assert await redis.xlen(keys.game_stream("g2")) == 1


async def test_unreadable_envelopes_are_parked_and_acknowledged(redis, workers):
    await redis.xadd(keys.commands(0), {"c": b"[" * 3000 + b"]" * 3000})
    await redis.xadd(keys.commands(0), {"x": b"no c field"})
    await workers.on_commands(await read_group(redis, keys.commands(0), keys.ENGINE_GROUP))
    assert [f[b"reason"] for _, f in await redis.xrange(keys.PARKED)] == [b"envelope_unreadable"] * 2
    assert await pending_ids(redis, keys.commands(0), keys.ENGINE_GROUP) == []


async def test_the_projectors_batch_is_acknowledged_once_projected_and_stays_pending_when_projecting_fails(
        redis, workers, monkeypatch):
    await send(redis, cmd("g1", CreateGame("tally", "t", 2, {}, "00ff" * 16, unfair=True), cid="create"),
               cmd("g1", JoinSeat("p0", th(0), 0), seat=0, cid="join0"))
    await workers.on_commands(await read_group(redis, keys.commands(0), keys.ENGINE_GROUP))
    entries = await read_group(redis, keys.events(0), keys.PROJECTOR_GROUP)
    assert len(entries) == 2

    async def store_away(by_game):
        raise ConnectionError("the read store is away")

    monkeypatch.setattr(workers.projector, "project", store_away)
    with pytest.raises(ConnectionError):
        await workers.on_events(entries)
    assert await pending_ids(redis, keys.events(0), keys.PROJECTOR_GROUP) == [e for e, _ in entries]
    monkeypatch.undo()
    await workers.on_events(entries)  # the batch again (reclaimed)
    assert await pending_ids(redis, keys.events(0), keys.PROJECTOR_GROUP) == []
    assert await redis.hget(keys.views("g1"), keys.audience(None))


async def test_running_workers_leave_nothing_pending_in_either_group(redis, redis_url):
    workers = Workers(Settings(redis_url=redis_url, views_redis_url=redis_url))
    await workers.start()
    try:
        await send(redis, cmd("g1", CreateGame("tally", "t", 2, {}, "00ff" * 16, unfair=True), cid="create"),
                   *[cmd("g1", JoinSeat(f"p{s}", th(s), s), seat=s, cid=f"join{s}") for s in range(2)])
        for _ in range(200):
            groups = {g: (await redis.xpending(stream, g))["pending"]
                      for stream, g in ((keys.commands(0), keys.ENGINE_GROUP), (keys.events(0), keys.PROJECTOR_GROUP))}
            if await redis.xlen(keys.events(0)) >= 5 and await redis.exists(keys.views("g1")) and not any(
                    groups.values()):
                break
            await asyncio.sleep(0.05)
        assert groups == {keys.ENGINE_GROUP: 0, keys.PROJECTOR_GROUP: 0}
        assert await redis.xlen(keys.game_stream("g1")) == 5
    finally:
        await workers.stop()


async def test_a_lean_read_gives_the_handler_what_redis_py_gives(redis, redis_url):
    """The readers' XREADGROUP on their lean connection (``streams.lean_reads``): the same entries, ids and fields
    as redis-py's for the same read, through the same FastStream subscriber; nothing but a read when none come."""
    for n in range(3):
        await redis.xadd("s", {"c": f"body {n}".encode(), "x": b"\x00\xff"})
    for group in ("lean", "plain"):
        await ensure_group(redis, "s", group)
    got: dict[str, list] = {"lean": [], "plain": []}
    lean = Resp(redis_url)
    brokers = []

    def handler(group: str):
        async def handle(entries):
            got[group].extend(entries)
        return handle

    for group in got:
        brokers.append(broker := RedisBroker(redis_url, apply_types=False))
        batch_subscription(broker, "s", group, "c", handler(group), with_ids=True,
                           lean=lean if group == "lean" else None)
    for broker in brokers:
        await broker.start()
    try:
        await until(lambda: len(got["lean"]) == len(got["plain"]) == 3)
        await asyncio.sleep(0.3)  # more reads, with nothing to read (BLOCK 100 ms): nothing more handled
        assert lean._proto is not None  # the lean reader's reads went on it
    finally:
        for broker in brokers:
            await broker.stop()
        await lean.aclose()
    assert got["lean"] == got["plain"] and len(got["lean"]) == 3
    assert got["lean"][0][1] == {b"c": b"body 0", b"x": b"\x00\xff"}


async def test_a_batch_bigger_than_luas_unpack_is_acknowledged_whole(redis):
    """Lua's unpack takes a few thousand values at most: the script acknowledges a big batch in parts."""
    from services.store.events import Acks, Append, RedisEventStore

    store = RedisEventStore(redis)
    await ensure_group(redis, "s", "g")
    ids = [(await redis.xadd("s", {"c": b"x"})).decode() for _ in range(8200)]
    await redis.xreadgroup("g", "c", {"s": ">"})
    appends = [Append(f"g{n}", "tally", 0, (), "") for n in range(8200)]  # nothing recorded: ok, acknowledged
    try:
        results = await store.append(appends, Acks("g", ids, streams=lambda partition: "s"))
        assert {r.status for r in results} == {"ok"}
        assert (await redis.xpending("s", "g"))["pending"] == 0
    finally:
        await store.aclose()


async def test_a_readers_batches_go_to_its_handler_straight_from_the_lean_read(redis, redis_url, monkeypatch):
    """The engine's and the projector's reader (a lean read, and the handler acknowledging): each stream's batch
    is handed to the handler as it was read, with its entries' ids and its stream's name, without FastStream's
    per-message processing (its context scopes, middlewares, parser, decoder and call wrappers: about a third of a
    worker's CPU a batch when batches are small, docs/performance-changes.md section 9)."""
    from faststream._internal.endpoint.subscriber.usecase import SubscriberUsecase

    processed = []
    real = SubscriberUsecase.process_message

    async def counted(self, msg):
        processed.append(msg)
        return await real(self, msg)

    monkeypatch.setattr(SubscriberUsecase, "process_message", counted)
    ids = {s: [await redis.xadd(s, {"c": f"{s} {n}".encode()}) for n in range(2)] for s in ("s0", "s1")}
    for stream in ids:
        await ensure_group(redis, stream, "g")
    got: list[IdentifiedEntries] = []

    async def handle(entries):
        got.append(entries)

    async with lean_reader(redis_url, ("s0", "s1"), handle):
        await until(lambda: len(got) == 2)
    assert sorted((batch.stream, [entry for entry, _ in batch]) for batch in got) == [
        ("s0", ids["s0"]), ("s1", ids["s1"])]
    assert all(isinstance(batch, IdentifiedEntries) for batch in got)
    assert got[0][0][1] == {b"c": f"{got[0].stream} 0".encode()}
    assert processed == []


async def test_a_batch_whose_handler_raises_is_logged_stays_pending_and_the_reader_goes_on(redis, redis_url, caplog):
    """A handler that raises (the read store away, a game that keeps conflicting): its error is logged as FastStream
    logged it (``souk.lib``, ERROR, with the exception), its entries stay pending for the reclaimer, and the reader
    reads on."""
    import logging

    from services.runtime.logs import LIBRARIES

    await ensure_group(redis, "s", "g")
    first = await redis.xadd("s", {"c": b"first"})
    got: list[list] = []

    async def handle(entries):
        ids = [entry for entry, _ in entries]
        if not got:
            got.append(ids)
            raise ConnectionError("the read store is away")
        await redis.xack("s", "g", *ids)
        got.append(ids)  # after its XACK: the test stops the reader once it sees the second batch

    caplog.set_level(logging.ERROR, logger=LIBRARIES)
    async with lean_reader(redis_url, "s", handle, logger=logging.getLogger(LIBRARIES)):
        await until(lambda: bool(got))
        second = await redis.xadd("s", {"c": b"second"})
        await until(lambda: len(got) == 2)
    assert got == [[first], [second]]
    assert await pending_ids(redis, "s", "g") == [first]
    [record] = [r for r in caplog.records if r.name == LIBRARIES and r.levelno == logging.ERROR]
    assert "ConnectionError: the read store is away" in record.getMessage() and record.exc_info
