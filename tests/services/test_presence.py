"""The gateways' presence record (services/gateway/presence.py) on real Redis: several gateways agree, a lease nobody
renews runs out, a seat's state is published only when it changes, and a view's bytes get the presence spliced in
as a decoding would put it."""

from __future__ import annotations

import asyncio
import time

import msgspec
import pytest

from contracts.readmodels import LobbyEntry, SeatInfo, TableView
from contracts.table import Flow, SeatPresence
from services.gateway import presence as seen
from services.gateway.listeners import Follower
from services.gateway.presence import Presence
from services.store import keys
from services.store.codec import encoder
from services.store.resp import Resp

pytestmark = pytest.mark.anyio


@pytest.fixture
async def gateways(redis):
    """Two gateways' presence on the same read store (each its own connection and holder), not yet beating."""
    made = [Presence(Resp.like(redis), window_s=1.0, lease_s=0.6) for _ in range(2)]
    yield made
    for p in made:
        await p.stop()
        await p.hot.aclose()


async def test_gateways_agree_on_a_seat_held_by_sockets_on_both_until_the_last_one_closes(gateways):
    a, b = gateways
    before = time.time()
    async with a.socket("g", 0):
        [held, _] = await b.of("g", 2)
        assert held.connected and before <= held.since <= time.time()
        async with b.socket("g", 0):
            pass  # a second gateway's socket, closed: the first one still holds the seat
        assert (await a.of("g", 2))[0] == held
        assert (await b.of("g", 2)) == (held, SeatPresence(1, False, 0.0))
    left = (await b.of("g", 2))[0]
    assert not left.connected and held.since <= left.since <= time.time()


async def test_a_lease_nobody_renews_runs_out_and_one_renewed_does_not(gateways):
    killed, alive = gateways
    alive.start()  # beats every third of the lease
    async with alive.socket("g", 1):
        await killed._hold("g", 0)  # a socket of a gateway that will never renew it nor let it go (kill -9)
        assert [p.connected for p in await alive.of("g", 2)] == [True, True]
        await asyncio.sleep(killed.lease_s + 0.2)
        [gone, kept] = await alive.of("g", 2)
        assert not gone.connected and kept.connected
        assert time.time() - killed.lease_s - 0.3 <= gone.since <= time.time() - 0.2  # it left when its lease ended


async def test_a_request_counts_for_the_window_and_is_written_at_most_once_a_tenth_of_it(gateways, redis):
    a, _ = gateways
    await a.seen("g", 0)
    first = await redis.hget(keys.presence("g"), "0|http")
    await a.seen("g", 0)  # at once: nothing written
    assert await redis.hget(keys.presence("g"), "0|http") == first
    await asyncio.sleep(0.15)
    await a.seen("g", 0)
    assert float(await redis.hget(keys.presence("g"), "0|http")) > float(first)
    assert (await a.of("g", 1))[0].connected
    await asyncio.sleep(1.1)
    assert not (await a.of("g", 1))[0].connected
    assert 0 < await redis.ttl(keys.presence("g")) <= seen.KEY_TTL_S


async def test_a_seats_coming_and_going_are_published_and_nothing_else(gateways, redis):
    a, b = gateways
    pubsub = redis.pubsub()
    await pubsub.subscribe(keys.presence_updates("g"))
    await pubsub.get_message(timeout=1)  # the subscription's confirmation
    async with a.socket("g", 0):
        await a._hold("g", 0)  # a renewal
        await a.seen("g", 0)  # a request while connected
        async with b.socket("g", 0):
            pass
    heard = []
    while (message := await pubsub.get_message(timeout=0.3)) is not None:
        heard.append(message["data"])
    await pubsub.aclose()
    assert heard == [b"0"]  # it came; the request's window keeps it connected after the sockets closed
    assert (await a.of("g", 1))[0].connected


async def test_the_fields_of_gateways_gone_for_good_are_removed_when_the_seat_comes_back(gateways, redis):
    a, b = gateways
    await b._hold("g", 0)
    await redis.hset(keys.presence("g"), "0|ws:dead", repr(time.time() - 5))  # a gateway killed long ago
    async with a.socket("g", 0):
        fields = await redis.hkeys(keys.presence("g"))
        assert sorted(fields) == sorted([b"0", f"0|{a.holder}".encode(), f"0|{b.holder}".encode()])


def a_view(presence: tuple[SeatPresence, ...] = ()) -> TableView:
    return TableView("g", "yspahan", "t", 3, "playing", None, (SeatInfo(0, "a"), SeatInfo(1, "b")),
                     Flow("play", (0,)), (), {"x": 1}, presence=presence)


def test_the_presence_spliced_into_a_stored_view_is_what_encoding_the_view_with_it_gives():
    present = (SeatPresence(0, True, 12.5), SeatPresence(1, False, 0.0))
    stored = encoder.encode(a_view())
    assert stored.endswith(b'"presence":[]}')
    assert seen.with_presence(stored, seen.encoded(present)) == encoder.encode(a_view(present))
    assert seen.seats_in(stored) == 2
    # a view stored before presence existed (no such field): decoded, given it, encoded again
    older = msgspec.json.encode({k: v for k, v in msgspec.to_builtins(a_view()).items() if k != "presence"})
    decoded = msgspec.json.decode(seen.with_presence(older, seen.encoded(present)), type=TableView)
    assert decoded == a_view(present)


def test_a_seat_the_servers_bot_plays_is_connected_in_a_stored_view_and_a_lobby_entry_whatever_the_hash_says():
    nobody = seen.encoded((SeatPresence(0, True, 12.5), SeatPresence(1, False, 0.0)))
    with_bot = msgspec.structs.replace(a_view(), seats=(SeatInfo(0, "a"), SeatInfo(1, "bot 2", bot="greedy")))
    served = msgspec.json.decode(seen.with_presence(encoder.encode(with_bot), nobody), type=TableView)
    assert served.presence == (SeatPresence(0, True, 12.5), SeatPresence(1, True, 0.0))
    # no bot: the presence as read (a name with "bot" in it changes nothing)
    named = msgspec.structs.replace(a_view(), seats=(SeatInfo(0, "a"), SeatInfo(1, "bot")))
    served = msgspec.json.decode(seen.with_presence(encoder.encode(named), nobody), type=TableView)
    assert served.presence == (SeatPresence(0, True, 12.5), SeatPresence(1, False, 0.0))
    entry = LobbyEntry("g", "yspahan", "t", with_bot.seats, "playing", 1.0)
    served = msgspec.json.decode(seen.with_presence(encoder.encode(entry), nobody), type=LobbyEntry)
    assert [p.connected for p in served.presence] == [True, True]
    assert seen.with_bots(seen.decoded(nobody), seen.bot_seats(entry.seats))[1] == SeatPresence(1, True, 0.0)


def test_a_follower_is_offered_the_same_version_again_only_with_another_presence():
    follower = Follower(since=3)
    follower.offer(3, "v3", present=b"[p1]")  # the client has version 3: not sent
    assert follower._text is None
    follower.offer(3, "v3 p2", present=b"[p2]")  # a seat came: sent again
    assert follower._text == "v3 p2"
    follower._text = None
    follower.offer(3, "v3 p2", present=b"[p2]")  # the same again: not sent
    follower.offer(2, "v2", present=b"[p3]")  # an older version: never
    assert follower._text is None
    follower.offer(4, "v4", present=b"[p2]")
    assert follower._text == "v4"


async def test_a_gateway_keeps_a_games_presence_until_a_seat_comes_or_goes_or_it_may_run_out(gateways, redis):
    from services.gateway.listeners import Updates

    a, b = gateways
    updates = Updates(redis, a)  # a's notices: it keeps a game's presence only while it hears them
    flat = await redis.hgetall(keys.presence("g"))
    assert a.present("g", [x for kv in flat.items() for x in kv], 1, a.generation)[0]
    assert a.cached("g", time.time()) is None  # not listening yet: nothing kept
    await updates.start()
    try:
        async def read() -> bytes:
            flat = await a.hot.call("HGETALL", keys.presence("g"))
            return a.present("g", flat, 1, a.generation)[0]

        nobody = await read()
        assert a.cached("g", time.time()) == nobody
        await b._hold("g", 0)  # another gateway's socket: its notice makes a forget the game's
        for _ in range(50):
            if a.cached("g", time.time()) is None:
                break
            await asyncio.sleep(0.02)
        assert a.cached("g", time.time()) is None
        held = await read()
        assert held != nobody and a.cached("g", time.time()) == held
        assert a.cached("g", time.time() + b.lease_s) is None  # the lease may have run out by then: read again
        begun = a.generation
        a.forget("other")
        assert a.present("g", [], 1, begun)[0] != held and a.cached("g", time.time()) == held  # a read begun
        # before a forgetting is not kept
    finally:
        await updates.stop()


async def test_requests_while_a_socket_of_the_seat_is_open_here_are_written_once_when_it_closes(gateways, redis):
    a, _ = gateways
    async with a.socket("g", 0):
        await a.seen("g", 0)
        asked = time.time()
        assert await redis.hget(keys.presence("g"), "0|http") is None  # the socket holds the seat: nothing written
    until = float(await redis.hget(keys.presence("g"), "0|http"))
    assert asked - 0.1 <= until - a.window_s <= asked  # its last request's window, from when it was made
    [still] = await a.of("g", 1)
    assert still.connected  # the socket closed, its request's minute is not over
    await asyncio.sleep(until - time.time() + 0.05)
    assert not (await a.of("g", 1))[0].connected
