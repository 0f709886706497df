"""The engine's snapshots (issue #18, item 12): a game not in the engine's cache is loaded from its latest snapshot
and the events after it, and decides exactly as the same game folded from its first event; a snapshot of other
code, a damaged one or one that is not this stream's is ignored (the game is folded from the start)."""

from __future__ import annotations

import itertools
import random

import msgspec
import pytest

from contracts.table import DeclineUndo
from domain import table as tbl
from domain.chance import Chance
from domain.kernel import get_game
from services.engine import snapshots
from services.engine.service import Engine
from services.store import keys
from services.store.events import RedisEventStore
from tests.services.test_engine import cmd, th
from tests.services.test_undo_services import a_move_or_an_undo, chosen

pytestmark = pytest.mark.anyio
SAMARKAND = get_game("samarkand")
EVERY = 20


async def played(redis, events: int, seed: int = 5) -> Engine:
    """Samarkand with_consent (3 seats) played by random seats through an engine snapshotting every ``EVERY``
    events, undos asked, accepted and declined on the way, until it has at least ``events`` events."""
    rng = random.Random(seed)
    engine = Engine(redis, RedisEventStore(redis), snapshot_every=EVERY)
    await chosen(engine, "with_consent")
    ids = itertools.count()
    while (table := (await engine.load("g1")).table).version < events:
        assert table.status == tbl.PLAYING
        seat, body = a_move_or_an_undo(table, rng, accept=0.7)
        [reply] = await engine.handle([cmd("g1", body, seat=seat, token=th(seat), cid=f"c{next(ids)}")])
        assert reply.status == "accepted", (body, reply)
    return engine


def decisions(slot) -> list:
    """What the table decides for every legal command of every awaited seat, and each seat's undo targets."""
    table = slot.table
    out: list = [tbl.encode_table(table), slot.since, slot.head, slot.seed]
    for seat in range(table.seats):
        out.append(tbl.undo_targets(table, seat))
        if seat in tbl.flow(table).awaiting:
            for command in SAMARKAND.legal_commands(table.state, seat):
                events = tbl.decide(table, seat, th(seat), command, Chance(slot.seed, table.version))
                out.append(msgspec.json.encode(events))
    return out


async def from_the_start(redis) -> list:
    engine = Engine(redis, RedisEventStore(redis), snapshot_every=0)
    saved = await redis.get(keys.engine_snapshot("g1"))
    await redis.delete(keys.engine_snapshot("g1"))
    try:
        return decisions(await engine.load("g1"))
    finally:
        if saved is not None:
            await redis.set(keys.engine_snapshot("g1"), saved)


class NoWholeRead(RedisEventStore):
    """A store whose whole-stream read fails: a load that uses it did not start from the snapshot."""

    async def read(self, game_id: str, after: int = 0):
        raise AssertionError("the whole stream was read")


async def test_a_game_loaded_from_its_snapshot_decides_exactly_as_one_folded_from_the_start(redis):
    await played(redis, 130)
    raw = await redis.get(keys.engine_snapshot("g1"))
    snapshot = msgspec.msgpack.decode(raw, type=snapshots.Snapshot)
    assert 120 <= snapshot.version <= await redis.xlen(keys.game_stream("g1"))  # the latest, at a command's end
    cold = await Engine(redis, NoWholeRead(redis)).load("g1")
    assert decisions(cold) == await from_the_start(redis)


async def test_every_position_loaded_from_a_snapshot_equals_the_fold_from_the_start(redis):
    """After each command of a game with undos: the cold load (from the snapshot when there is one) is the fold."""
    engine = await played(redis, 40)
    for _ in range(60):
        table = (await engine.load("g1")).table
        seat = SAMARKAND.flow(table.state).awaiting[0]
        if table.request is not None:
            seat, body = table.request.seat, DeclineUndo()
        else:
            body = SAMARKAND.legal_commands(table.state, seat)[0]
        await engine.handle([cmd("g1", body, seat=seat, token=th(seat))])
        cold = await Engine(redis, RedisEventStore(redis)).load("g1")
        assert decisions(cold) == await from_the_start(redis)


async def test_a_snapshot_of_other_code_is_ignored(redis, monkeypatch):
    await played(redis, 60)
    right = await from_the_start(redis)
    # a snapshot of what was the game at an earlier version, written by other code, claiming the current position
    slot = await Engine(redis, RedisEventStore(redis)).load("g1")
    wrong = msgspec.structs.replace(tbl.fold([]), game="samarkand")  # nothing like the game
    monkeypatch.setattr(snapshots, "code", lambda: "another build")
    await redis.set(keys.engine_snapshot("g1"), snapshots.encode(
        msgspec.structs.replace(slot.table, state=wrong.state, version=slot.table.version), slot.since, slot.head))
    monkeypatch.undo()
    assert decisions(await Engine(redis, RedisEventStore(redis)).load("g1")) == right


@pytest.mark.parametrize("damage", ["flipped", "truncated", "garbage", "other_head", "ahead", "inside_a_command",
                                    "other_format"])
async def test_a_damaged_or_foreign_snapshot_is_ignored(redis, damage):
    await played(redis, 60)
    right = await from_the_start(redis)
    raw = await redis.get(keys.engine_snapshot("g1"))
    snapshot = msgspec.msgpack.decode(raw, type=snapshots.Snapshot)
    table = tbl.decode_table(__import__("zlib").decompress(snapshot.table))
    if damage == "flipped":  # a byte of the table changed: its digest no longer matches
        packed = bytearray(snapshot.table)
        packed[len(packed) // 2] ^= 0xFF
        raw = msgspec.msgpack.encode(msgspec.structs.replace(snapshot, table=bytes(packed)))
    elif damage == "truncated":
        raw = raw[: len(raw) // 2]
    elif damage == "garbage":
        raw = b"\x93not a snapshot"
    elif damage == "other_head":  # another stream's (the same id archived and imported again, say)
        raw = snapshots.encode(table, snapshot.since, "ab" * 32)
    elif damage == "ahead":  # a position the stream does not have
        envelopes = await RedisEventStore(redis).read("g1")
        raw = snapshots.encode(msgspec.structs.replace(table, version=len(envelopes) + 5), snapshot.since,
                               envelopes[-1].hash)
    elif damage == "inside_a_command":  # claims a version where a command's events go on
        envelopes = await RedisEventStore(redis).read("g1")
        inside = next(a for a, b in zip(envelopes, envelopes[1:])
                      if a.command_id == b.command_id and a.recorded_at == b.recorded_at)
        raw = snapshots.encode(msgspec.structs.replace(table, version=inside.seq), snapshot.since, inside.hash)
    else:
        raw = msgspec.msgpack.encode(msgspec.structs.replace(snapshot, format=snapshots.FORMAT + 1))
    await redis.set(keys.engine_snapshot("g1"), raw)
    assert decisions(await Engine(redis, RedisEventStore(redis)).load("g1")) == right


async def test_a_game_that_ends_leaves_no_snapshot(redis):
    engine = await played(redis, 30)
    assert await redis.exists(keys.engine_snapshot("g1"))
    rng = random.Random(1)
    for n in itertools.count():
        table = (await engine.load("g1")).table
        if table.status != tbl.PLAYING:
            break
        assert n < 5_000, "the game does not end"
        await a_random_move(engine, table, rng, f"end{n}")
    assert not await redis.exists(keys.engine_snapshot("g1"))


async def a_random_move(engine: Engine, table: tbl.Table, rng: random.Random, command_id: str):
    """An awaited seat's random legal command (an undo asked: declined), accepted; returns its reply."""
    if table.request is not None:
        seat, body = table.request.seat, DeclineUndo()
    else:
        seat = rng.choice(SAMARKAND.flow(table.state).awaiting)
        body = rng.choice(SAMARKAND.legal_commands(table.state, seat))
    [reply] = await engine.handle([cmd("g1", body, seat=seat, token=th(seat), cid=command_id)])
    assert reply.status == "accepted", reply
    return reply


async def test_a_batch_that_crosses_no_snapshot_makes_no_pipeline_and_one_that_crosses_writes_it(redis, monkeypatch):
    engine = await played(redis, 3)  # the game and its first commands (their loads read through pipelines)
    made = []
    real = engine.redis.pipeline
    monkeypatch.setattr(engine.redis, "pipeline", lambda **kw: made.append(kw) or real(**kw))
    rng = random.Random(2)
    for n in itertools.count():
        table = (await engine.load("g1")).table
        assert n < 200, "no snapshot crossed"
        reply = await a_random_move(engine, table, rng, f"b{n}")
        if reply.version // EVERY > table.version // EVERY:  # this batch crossed a snapshot: written
            assert len(made) == 1
            raw = await redis.get(keys.engine_snapshot("g1"))
            assert msgspec.msgpack.decode(raw, type=snapshots.Snapshot).version == reply.version
            return
        assert made == [], f"a pipeline at version {reply.version}"
