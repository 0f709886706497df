"""Storage that does not surprise (issue #9 item 11): a finished game's Redis memory, the compact game stream (and
the streams stored before it), souk:events trimmed behind every projector group, a finished game's outcomes and
history kept only as far as they cannot be derived."""

from __future__ import annotations

import json
import random
from pathlib import Path

import msgspec
import pytest
import redis.asyncio as aioredis

from contracts.envelope import GENESIS_HASH, CommandEnvelope, EventEnvelope, chain_hash
from contracts.table import CreateGame, JoinSeat
from domain import table as tbl
from services.engine.service import Engine
from services.projector.history import read_history
from services.projector.service import Projector
from services.store import keys
from services.store.codec import encoder, event_envelope_decoder, stored_envelopes, stored_forms
from services.store.events import RedisEventStore
from services.store.streams import ensure_group, trim_read
from tests.services.tally import Add
from tests.services.test_engine import cmd, started, th

pytestmark = pytest.mark.anyio
FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "yspahan_stream_2026-11-22.json").read_text())


def _without_transport(env: EventEnvelope) -> EventEnvelope:
    """What the game stream keeps of an envelope: all but the command's sent_at and traceparent."""
    return msgspec.structs.replace(env, sent_at=0.0, traceparent="")


async def played_tally(redis, game_id: str = "g1") -> tuple[Engine, list]:
    """A two-seat tally game played to its end; returns the engine and every command with its first reply."""
    engine = Engine(redis, RedisEventStore(redis))
    sent = [cmd(game_id, CreateGame("tally", "t", 2, {}, "00ff" * 16, unfair=True), cid="create")] + [
        cmd(game_id, JoinSeat(f"p{s}", th(s), s), seat=s, cid=f"join{s}") for s in range(2)]
    replies = await engine.handle(sent)
    while (slot := await engine.load(game_id)).table.status == "playing":
        turn = slot.table.state.turn
        sent.append(cmd(game_id, Add(3), seat=turn, token=th(turn), cid=f"c{slot.table.version}"))
        replies += await engine.handle(sent[-1:])
    assert all(r.status == "accepted" for r in replies)
    return engine, list(zip(sent, replies))


async def test_a_stream_stored_in_the_json_form_of_2026_11_22_reads_as_it_was_and_its_game_goes_on(redis):
    game_id = FIXTURE["game_id"]
    for entry_id, raw in FIXTURE["entries"]:
        await redis.xadd(keys.game_stream(game_id), {"e": raw.encode()}, id=entry_id)
    await redis.set(keys.head(game_id), FIXTURE["head"])
    await redis.set(keys.seed(game_id), bytes.fromhex(FIXTURE["seed"]))
    store = RedisEventStore(redis)
    read = await store.read(game_id)
    assert read == [event_envelope_decoder.decode(raw.encode()) for _, raw in FIXTURE["entries"]]
    # the engine folds it and appends after it in the compact form; the chain goes on unbroken
    engine = Engine(redis, store)
    table = (await engine.load(game_id)).table
    for n in range(6):
        seat = tbl.flow(table).awaiting[0]
        command = random.Random(n).choice(tbl.game_of(table).legal_commands(table.state, seat))
        [reply] = await engine.handle([CommandEnvelope(f"after-{n}", game_id, msgspec.Raw(encoder.encode(command)),
                                                       seat=seat, token_hash=FIXTURE["tokens"][str(seat)])])
        assert reply.status == "accepted", reply
        table = (await engine.load(game_id)).table
    raw = [f[b"e"] for _, f in await redis.xrange(keys.game_stream(game_id))]
    assert raw[:40] == [r.encode() for _, r in FIXTURE["entries"]] and raw[-1][:1] != b"{"  # old kept, new compact
    envelopes = await store.read(game_id)
    prev = GENESIS_HASH
    for env in envelopes:
        assert env.prev_hash == prev and chain_hash(env) == env.hash
        prev = env.hash
    assert prev == (await redis.get(keys.head(game_id))).decode() and len(envelopes) == table.version


async def test_the_compact_stream_reads_back_every_envelope_the_engine_published(redis):
    await played_tally(redis)
    published = [_without_transport(event_envelope_decoder.decode(f[b"e"]))
                 for _, f in await redis.xrange(keys.events(0))]
    stored = [f[b"e"] for _, f in await redis.xrange(keys.game_stream("g1"))]
    assert await RedisEventStore(redis).read("g1") == published
    assert [s[:1] == b"{" for s in stored] == [e.type.startswith("table.") for e in published]
    whole = [f[b"e"] for _, f in await redis.xrange(keys.events(0))]
    game_events = [i for i, e in enumerate(published) if not e.type.startswith("table.")]
    assert sum(len(stored[i]) for i in game_events) < sum(len(whole[i]) for i in game_events) / 3
    assert await RedisEventStore(redis).read("g1", after=4) == published[4:]


def test_an_envelope_the_compact_form_cannot_hold_exactly_is_stored_whole():
    odd = EventEnvelope("g", 1, "x.Odd", msgspec.Raw(b'{"type":"x.Odd"}'), "c", 0, 1.5, GENESIS_HASH, chain=2)
    sealed = msgspec.structs.replace(odd, hash=chain_hash(odd))
    upper = msgspec.structs.replace(sealed, hash=sealed.hash.upper())  # not what sha256's hexdigest writes
    spaced = msgspec.structs.replace(sealed, payload=msgspec.Raw(b'{ "type":"x.Odd"}'))
    for env in (upper, spaced):
        [form] = stored_forms([env], GENESIS_HASH)
        assert form[:1] == b"{" and stored_envelopes("g", [(b"1-0", form)]) == [env]
    [form] = stored_forms([sealed], GENESIS_HASH)
    assert form[:1] != b"{" and stored_envelopes("g", [(b"1-0", form)]) == [sealed]


async def test_a_finished_games_accepted_commands_get_their_first_answer_when_resent(redis):
    engine, commands = await played_tally(redis)
    # only the last command's outcome is still recorded: the others come from the stream
    last = commands[-1][0]
    assert list(await redis.hgetall(keys.outcomes("g1"))) == [f"{last.seat}:{last.command_id}".encode()]
    again = await Engine(redis, engine.store).handle([env for env, _ in commands])
    assert again == [reply for _, reply in commands]
    assert await redis.xlen(keys.game_stream("g1")) == commands[-1][1].version  # nothing appended
    [unknown] = await engine.handle([cmd("g1", Add(1), seat=0, token=th(0), cid="never-sent")])
    assert unknown.status == "rejected"


async def test_a_refusal_before_the_end_keeps_its_outcome_after_it(redis):
    engine = Engine(redis, RedisEventStore(redis))
    turn = await started(engine)
    wrong = cmd("g1", Add(1), seat=1 - turn, token=th(1 - turn), cid="out-of-turn")
    [refused] = await engine.handle([wrong])
    assert refused.status == "rejected"
    while (slot := await engine.load("g1")).table.status == "playing":
        t = slot.table.state.turn
        await engine.handle([cmd("g1", Add(3), seat=t, token=th(t), cid=f"c{slot.table.version}")])
    assert await engine.handle([wrong]) == [refused]
    assert await redis.hexists(keys.outcomes("g1"), f"{1 - turn}:out-of-turn")


async def test_trimming_keeps_every_entry_a_group_has_not_acknowledged(redis):
    for i in range(1, 11):
        await redis.xadd("s", {"n": i}, id=f"{i}-0")
    assert await trim_read(redis, "s") == 0  # no group reads it: nothing is known to be read
    await ensure_group(redis, "s", "a")
    await ensure_group(redis, "s", "b")
    assert await trim_read(redis, "s") == 0  # neither read anything
    read_a = (await redis.xreadgroup("a", "x", {"s": ">"}, count=6))[0][1]
    await redis.xack("s", "a", *[i for i, _ in read_a[:2]])  # a: 1-2 acknowledged, 3-6 pending
    read_b = (await redis.xreadgroup("b", "x", {"s": ">"}, count=8))[0][1]
    await redis.xack("s", "b", *[i for i, _ in read_b])  # b: 1-8 acknowledged
    assert await trim_read(redis, "s") == 2
    assert (await redis.xrange("s", count=1))[0][0] == b"3-0"  # a's oldest pending stays
    await redis.xack("s", "a", *[i for i, _ in read_a[2:]])
    assert await trim_read(redis, "s") == 3  # up to a's last delivered (6), which stays
    assert [i for i, _ in await redis.xrange("s")] == [b"6-0", b"7-0", b"8-0", b"9-0", b"10-0"]
    await ensure_group(redis, "s", "late")  # a group created now (at 0) has read nothing: nothing more goes
    await redis.xack("s", "a", *[i for i, _ in (await redis.xreadgroup("a", "x", {"s": ">"}))[0][1]])
    assert await trim_read(redis, "s") == 0


async def test_the_projector_trims_souk_events_behind_its_groups_and_a_rebuild_needs_none_of_it(redis):
    store = RedisEventStore(redis)
    engine = Engine(redis, store)
    turn = await started(engine)
    await engine.handle([cmd("g1", Add(2), seat=turn, token=th(turn))])
    await ensure_group(redis, keys.events(0), keys.PROJECTOR_GROUP)
    projector = Projector(redis, store, trim_every_s=0)
    read = (await redis.xreadgroup(keys.PROJECTOR_GROUP, "p", {keys.events(0): ">"}))[0][1]
    await projector.handle([f for _, f in read])  # pending while handled: nothing trimmed yet
    assert await redis.xlen(keys.events(0)) == len(read)
    await redis.xack(keys.events(0), keys.PROJECTOR_GROUP, *[i for i, _ in read])
    await projector.handle([])
    assert await redis.xlen(keys.events(0)) == 1  # the last delivered entry stays
    names = [keys.views("g1"), keys.history("g1")]
    before = [await redis.hgetall(names[0]), await redis.lrange(names[1], 0, -1), await redis.hgetall(keys.lobby(0))]
    await redis.delete(*names, keys.lobby(0), keys.position("g1"))
    assert await Projector(redis, store).rebuild() == 1
    after = [await redis.hgetall(names[0]), await redis.lrange(names[1], 0, -1), await redis.hgetall(keys.lobby(0))]
    assert after == before
    await projector.aclose()


async def test_a_finished_games_history_expires_and_reads_the_same_from_the_game_stream(redis):
    engine, _ = await played_tally(redis)
    projector = Projector(redis, engine.store, finished_ttl_s=600)
    await projector.handle([f for _, f in await redis.xrange(keys.events(0))])
    await projector.aclose()
    assert 0 < await redis.ttl(keys.history("g1")) <= 600
    pages = {}
    for seat in (0, 1, None):
        pages[seat] = [await read_history(redis, redis, "g1", seat, after, 4) for after in (0, 4, 8, 100)]
        assert pages[seat][0].entries and not pages[seat][-1].entries
    await redis.delete(keys.history("g1"))  # expired
    for seat, kept in pages.items():
        derived = [await read_history(redis, redis, "g1", seat, after, 4) for after in (0, 4, 8, 100)]
        assert encoder.encode(derived) == encoder.encode(kept)
    assert not await redis.exists(keys.history("g1"))  # derived on read, not written back


async def test_a_running_games_history_does_not_expire(redis):
    engine = Engine(redis, RedisEventStore(redis))
    await started(engine)
    projector = Projector(redis, engine.store)
    await projector.handle([f for _, f in await redis.xrange(keys.events(0))])
    await projector.aclose()
    assert await redis.ttl(keys.history("g1")) == -1


@pytest.fixture
async def views_redis(redis_url):
    """A second database of the same server, standing for the read store."""
    client = aioredis.Redis.from_url(redis_url.rsplit("/", 1)[0] + "/1")
    await client.flushdb()
    yield client
    await client.flushdb()
    await client.aclose()


async def test_a_finished_four_player_yspahan_game_costs_at_most_100_kb_once_its_caches_expired(redis, views_redis):
    from services.bench.storage import measure, play

    engine = Engine(redis, RedisEventStore(redis))
    projector = Projector(views_redis, engine.store)
    ids = await play(engine, projector, redis, "yspahan", 4, 2, random.Random(3))
    await trim_read(redis, keys.events(0))
    figures = (await measure(redis, views_redis, {"yspahan": ids}))["yspahan"]
    assert figures["events_per_game"] > 300
    assert figures["steady_bytes_per_game"] <= 100_000, figures
    kinds = figures["by_kind"]  # what expires is the history and the time-travel snapshots, nothing else
    assert kinds["souk:history"] + kinds["souk:snapshots"] == figures["cache_bytes"] and kinds["souk:snapshots"] > 0
    await projector.aclose()
    # and it stays fully readable: every audience's history, from the game stream
    for g in ids:
        await views_redis.delete(keys.history(g))
        for seat in (0, 3, None):
            page = await read_history(redis, views_redis, g, seat, 0, 1000)
            assert len(page.entries) == await redis.xlen(keys.game_stream(g)) == page.version


async def test_a_rebuild_writes_no_history_for_a_finished_game_and_it_reads_the_same(redis):
    engine, _ = await played_tally(redis)
    await started(engine, "g2")
    projector = Projector(redis, engine.store)
    await projector.handle([f for _, f in await redis.xrange(keys.events(0))])
    pages = {seat: await read_history(redis, redis, "g1", seat, 0, 100) for seat in (0, 1, None)}
    running = await redis.lrange(keys.history("g2"), 0, -1)
    assert await Projector(redis, engine.store).rebuild() == 2
    assert not await redis.exists(keys.history("g1")) and await redis.lrange(keys.history("g2"), 0, -1) == running
    for seat, page in pages.items():
        assert encoder.encode(await read_history(redis, redis, "g1", seat, 0, 100)) == encoder.encode(page)
    await projector.aclose()


async def test_the_history_records_derived_from_the_stream_are_the_bytes_the_projector_wrote(redis):
    from services.projector.history import history_records

    engine, _ = await played_tally(redis)
    projector = Projector(redis, engine.store)
    await projector.handle([f for _, f in await redis.xrange(keys.events(0))])
    await projector.aclose()
    assert await history_records(engine.store, "g1") == await redis.lrange(keys.history("g1"), 0, -1)


async def test_commands_sent_to_a_finished_game_read_its_stream_once_not_once_each(redis):
    """Answering a resent command from the stream must not make every late or bogus command to a finished game read
    and decode its whole stream (a client spamming a finished game cost the engine one full read per command)."""
    engine, commands = await played_tally(redis)
    fresh = Engine(redis, engine.store)
    reads = []
    real_read = fresh.store.read

    async def counted(game_id, *args, **kwargs):
        reads.append(game_id)
        return await real_read(game_id, *args, **kwargs)

    fresh.store.read = counted
    late = [cmd("g1", Add(1), seat=s % 2, token=th(s % 2), cid=f"late-{s}") for s in range(20)]
    replies = await fresh.handle(late)
    assert all(r.status == "rejected" for r in replies)
    again = await fresh.handle([env for env, _ in commands[:-1]])
    assert again == [reply for _, reply in commands[:-1]]  # still the first answers
    assert len(reads) <= 2, f"{len(reads)} reads of the stream for {len(late) + len(commands) - 1} commands"
