"""One contract for the event store, run against every implementation (eventsourcing's AggregateRecorderTestCase)."""

from __future__ import annotations

import asyncio

import msgspec
from msgspec.structs import replace
import pytest
import redis.asyncio as aioredis

from contracts.envelope import GENESIS_HASH, EventEnvelope, seal
from services.store import keys
from services.store.events import CONFLICT, DUPLICATE, OK, Append, InMemoryEventStore, RedisEventStore

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["memory", "redis"])
async def store(request):
    if request.param == "memory":
        yield InMemoryEventStore()
        return
    client = aioredis.Redis.from_url(request.getfixturevalue("redis_url"))
    yield RedisEventStore(client)
    await client.aclose()


def envelopes(game_id: str, first_seq: int, count: int, prev: str, command_id: str = "c") -> tuple[list[bytes], str]:
    out = []
    for seq in range(first_seq, first_seq + count):
        env = seal(EventEnvelope(game_id, seq, "test.Happened", msgspec.Raw(b'{"type":"test.Happened"}'),
                                 command_id, 0, 1.0, prev))
        prev = env.hash
        out.append(msgspec.json.encode(env))
    return out, prev


def append(game_id: str, version: int, count: int, prev: str, key: str, outcome: bytes = b"out") -> Append:
    encoded, head = envelopes(game_id, version + 1, count, prev, key)
    return Append(game_id, "test", version, encoded, key, outcome, prev_hash=prev, head=head)


async def test_an_append_at_the_expected_version_is_stored_and_read_back_in_order(store):
    first = append("g1", 0, 3, GENESIS_HASH, "k1")
    [result] = await store.append([first])
    assert result.status == OK and result.version == 3
    events = await store.read("g1")
    assert [e.seq for e in events] == [1, 2, 3]
    assert events[0].prev_hash == GENESIS_HASH and events[1].prev_hash == events[0].hash
    assert await store.version("g1") == 3


async def test_a_stale_writer_gets_a_conflict_and_nothing_is_written(store):
    first = append("g1", 0, 2, GENESIS_HASH, "k1")
    await store.append([first])
    [stale] = await store.append([append("g1", 0, 1, GENESIS_HASH, "k2")])
    assert stale.status == CONFLICT and stale.version == 2
    assert await store.version("g1") == 2
    assert await store.outcome("g1", "k2") is None


async def test_a_writer_with_the_right_version_but_another_chain_head_gets_a_conflict(store):
    await store.append([append("g1", 0, 2, GENESIS_HASH, "k1")])
    [result] = await store.append([append("g1", 2, 1, "f" * 64, "k2")])
    assert result.status == CONFLICT
    assert await store.version("g1") == 2


async def test_a_command_key_seen_before_returns_the_first_outcome_and_appends_nothing(store):
    await store.append([append("g1", 0, 1, GENESIS_HASH, "k1", b"first")])
    head = (await store.read("g1"))[-1].hash
    [again] = await store.append([append("g1", 1, 1, head, "k1", b"second")])
    assert again.status == DUPLICATE and again.outcome == b"first"
    assert await store.version("g1") == 1


async def test_reading_from_a_version_returns_only_later_events(store):
    a = append("g1", 0, 2, GENESIS_HASH, "k1")
    await store.append([a])
    b = append("g1", 2, 3, a.head, "k2")
    await store.append([b])
    assert [e.seq for e in await store.read("g1", after=2)] == [3, 4, 5]
    assert await store.read("g1", after=5) == []
    assert await store.read("nope") == []


async def test_a_batch_of_appends_is_applied_in_order_and_each_stands_alone(store):
    a = append("g1", 0, 1, GENESIS_HASH, "k1")
    b = append("g1", 1, 1, a.head, "k2")
    stale = append("g2", 5, 1, GENESIS_HASH, "k3")
    c = append("g2", 0, 2, GENESIS_HASH, "k4")
    results = await store.append([a, b, stale, c])
    assert [r.status for r in results] == [OK, OK, CONFLICT, OK]
    assert await store.version("g1") == 2 and await store.version("g2") == 2


async def test_concurrent_writers_at_the_same_version_never_lose_an_update(store):
    candidates = [append("g1", 0, 1, GENESIS_HASH, f"k{i}") for i in range(10)]
    results = await asyncio.gather(*(store.append([c]) for c in candidates))
    statuses = [r[0].status for r in results]
    assert statuses.count(OK) == 1 and statuses.count(CONFLICT) == 9
    assert await store.version("g1") == 1


async def test_an_append_without_events_records_its_outcome_only_at_the_expected_version(store):
    a = append("g1", 0, 1, GENESIS_HASH, "k1")
    await store.append([a])
    [stale] = await store.append([Append("g1", "test", 0, (), "no1", b"refused", GENESIS_HASH, GENESIS_HASH)])
    [fresh] = await store.append([Append("g1", "test", 1, (), "no2", b"refused", a.head, a.head)])
    assert stale.status == CONFLICT and await store.outcome("g1", "no1") is None
    assert fresh.status == OK and fresh.version == 1 and await store.outcome("g1", "no2") == b"refused"
    [again] = await store.append([Append("g1", "test", 1, (), "no2", b"other", a.head, a.head)])
    assert again.status == DUPLICATE and again.outcome == b"refused"
    assert await store.version("g1") == 1


async def test_the_redis_store_copies_every_event_to_the_global_stream_in_commit_order(redis_url):
    client = aioredis.Redis.from_url(redis_url)
    store = RedisEventStore(client)
    a = append("g1", 0, 2, GENESIS_HASH, "k1")
    b = append("g2", 0, 1, GENESIS_HASH, "k2")
    c = append("g1", 2, 1, a.head, "k3")
    await store.append([a, b, c])
    entries = await client.xrange(keys.events(0))
    assert [(f[b"g"], msgspec.json.decode(f[b"e"])["seq"]) for _, f in entries] == [
        (b"g1", 1), (b"g1", 2), (b"g2", 1), (b"g1", 3)]
    assert await client.zcard(keys.games(0)) == 2
    await client.aclose()


async def test_the_redis_store_survives_a_server_that_forgot_its_script(redis_url):
    client = aioredis.Redis.from_url(redis_url)
    store = RedisEventStore(client)
    a = append("g1", 0, 1, GENESIS_HASH, "k1")
    await store.append([a])
    await client.script_flush()
    b = append("g1", 1, 1, a.head, "k2")
    c = append("g2", 0, 1, GENESIS_HASH, "k3")
    assert [r.status for r in await store.append([b, c])] == [OK, OK]
    assert await store.version("g1") == 2 and await store.version("g2") == 1
    await client.aclose()


async def test_the_append_that_ends_a_game_drops_its_accepted_outcomes_but_its_own_and_the_refusals(store):
    accepted = b'{"command_id":"k1","game_id":"g1","status":"accepted","version":1}'
    refused = b'{"command_id":"k2","game_id":"g1","status":"rejected","code":"not_your_turn"}'
    first = append("g1", 0, 1, GENESIS_HASH, "k1", accepted)
    await store.append([first])
    await store.append([Append("g1", "test", 1, (), "k2", refused, prev_hash=first.head, head=first.head)])
    last = append("g1", 1, 2, first.head, "k3", b'{"status":"accepted","version":3}')
    [result] = await store.append([replace(last, final=True)])
    assert result.status == OK
    assert await store.outcome("g1", "k1") is None
    assert await store.outcome("g1", "k2") == refused and await store.outcome("g1", "k3") is not None


async def test_an_applied_append_records_its_seats_newest_command_entry_and_a_refused_one_does_not(store):

    first = replace(append("g1", 0, 1, GENESIS_HASH, "0:a"), seat_entry=(0, "100-0"))
    [ok] = await store.append([first])
    assert ok.status == OK and await store.order("g1") == {0: "100-0"}
    second = replace(append("g1", 1, 1, first.head, "1:b"), seat_entry=(1, "101-0"))
    stale = replace(append("g1", 0, 1, GENESIS_HASH, "0:c"), seat_entry=(0, "102-0"))
    again = replace(first, seat_entry=(0, "103-0"))  # a duplicate: its first outcome, nothing else
    results = await store.append([second, stale, again])
    assert [r.status for r in results] == [OK, CONFLICT, DUPLICATE]
    assert await store.order("g1") == {0: "100-0", 1: "101-0"}
    final = replace(append("g1", 2, 1, second.head, "0:d"), seat_entry=(0, "104-0"), final=True)
    [ended] = await store.append([final])
    assert ended.status == OK and await store.order("g1") == {}  # a finished game applies no more commands


async def test_only_a_window_of_the_latest_accepted_outcomes_is_kept(store):
    """(issue #18, item 13: every accepted command's outcome was kept until the game's end, 2 MB at 5,000.) The
    older ones are answered from the game stream (the engine); refusals keep their own lifetime."""
    store.outcome_window = 3
    head, version = GENESIS_HASH, 0
    refused = b'{"status":"rejected","code":"not_your_turn"}'
    for n in range(1, 7):
        a = append("g1", version, 1, head, f"k{n}", b'{"status":"accepted","n":%d}' % n)
        [result] = await store.append([a])
        assert result.status == OK
        head, version = a.head, version + 1
        if n == 2:
            [r] = await store.append([Append("g1", "test", version, (), "r", refused, prev_hash=head, head=head)])
            assert r.status == OK
    assert [await store.outcome("g1", f"k{n}") is not None for n in range(1, 7)] == [False] * 3 + [True] * 3
    assert await store.outcome("g1", "r") == refused
    [again] = await store.append([append("g1", version, 1, head, "k6")])  # within the window: still a duplicate
    assert again.status == DUPLICATE


async def test_an_accepted_append_writes_the_games_next_deadline_and_a_later_one_without_takes_it_out(store):

    first = replace(append("g1", 0, 2, GENESIS_HASH, "k1"), next_due=1700000000.25)
    await store.append([first])
    assert await store.deadline("g1") == 1700000000.25
    later = replace(append("g1", 2, 1, first.head, "k2"), next_due=1700000005.5)
    await store.append([later])
    assert await store.deadline("g1") == 1700000005.5
    await store.append([append("g1", 3, 1, later.head, "k3")])  # next_due None: no clock now, or the game ended
    assert await store.deadline("g1") is None


async def test_a_refused_or_conflicting_append_leaves_the_deadline_as_it_was(store):

    first = replace(append("g1", 0, 1, GENESIS_HASH, "k1"), next_due=10.0)
    await store.append([first])
    refusal = Append("g1", "test", 1, (), "k2", b"no", prev_hash=first.head, head=first.head, next_due=None)
    stale = replace(append("g1", 0, 1, GENESIS_HASH, "k3"), next_due=99.0)
    assert [r.status for r in await store.append([refusal, stale])] == [OK, CONFLICT]
    assert await store.deadline("g1") == 10.0
