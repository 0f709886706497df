"""The gateway's pub/sub listeners against a real Redis that goes away: they reconnect, subscribe again and catch
up on what they missed (issue #8 item 9); and one notice costs one read per game and audience, however many
clients wait on it (item 12)."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import Callable, Iterator

import msgspec
import pytest
import redis.asyncio as aioredis
from litestar.testing import AsyncTestClient
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from contracts.envelope import CommandEnvelope, Reply
from contracts.readmodels import ViewsUpdated
from services.store import keys, pushes
from services.store.codec import encoder
from services.runtime.config import Settings
from services.gateway import create_app
from services.gateway.listeners import Replies, Updates
from services.embedded.redis import RedisServer
from services.engine.service import Engine
from services.gateway.presence import Presence
from services.projector.service import Projector
from services.store.events import RedisEventStore
from services.store.resp import Resp
from tests.services.tally import Add
from tests.services.test_engine import cmd, started, th

pytestmark = pytest.mark.anyio


def redis_client(url: str) -> aioredis.Redis:
    """The test's own client: a command that finds its connection closed by a restart is sent again."""
    return aioredis.Redis.from_url(url, retry=Retry(NoBackoff(), 1))


@pytest.fixture
def server(tmp_path) -> Iterator[RedisServer]:
    """A Redis of the test's own, with AOF, to restart at will."""
    server = RedisServer(tmp_path / "redis", appendonly=True).start()
    yield server
    server.stop()


async def eventually(check: Callable[[], object], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not await _value(check()):
        assert time.monotonic() < deadline, "not within the deadline"
        await asyncio.sleep(0.01)


async def listener_cut_off(redis: aioredis.Redis) -> None:
    """Closes every pub/sub connection and forbids new subscriptions: a listener is down, Redis answers."""
    await redis.execute_command("ACL", "SETUSER", "default", "resetchannels")
    await redis.execute_command("CLIENT", "KILL", "TYPE", "pubsub")


async def listener_let_back(redis: aioredis.Redis) -> None:
    await redis.execute_command("ACL", "SETUSER", "default", "allchannels")


def view(version: int) -> bytes:
    return msgspec.json.encode({"version": version, "status": "playing", "flow": {}, "legal": [], "view": "x" * 100})


async def project(redis: aioredis.Redis, game_id: str, version: int, audiences, notify: bool = True,
                  pushed: bool = False) -> None:
    """What the projector does: the views and the position, then the notice (unless it is to be missed); with
    ``pushed``, the views' push before the notice (``services.store.pushes``; without: as a projector from before
    them, or with views too big to push)."""
    await redis.hset(keys.views(game_id), mapping={a: view(version) for a in audiences})
    await redis.set(keys.position(game_id), version)
    if notify:
        for a in audiences if pushed else ():
            await redis.publish(pushes.channel(game_id, version, a), view(version))
        await redis.publish(keys.view_updates(game_id), encoder.encode(ViewsUpdated(version, "playing", ())))


async def test_a_command_answered_while_the_replies_listener_was_away_is_answered_from_its_recorded_outcome(server):
    redis = redis_client(server.url)
    replies = Replies(redis, timeout=5)
    await replies.start()
    try:
        sending = asyncio.create_task(replies.send(CommandEnvelope("c1", "g1", msgspec.Raw(b"{}"), seat=0)))
        await eventually(lambda: commands_queued(redis, 1))
        await listener_cut_off(redis)
        await eventually(lambda: not replies.state.connected)
        # The engine answers meanwhile: it records the outcome; what it publishes reaches nobody.
        reply = Reply("c1", "g1", "accepted", version=7, events=1, seat=0)
        await redis.hset(keys.outcomes("g1"), "0:c1", encoder.encode(reply))
        await asyncio.sleep(0.3)
        assert not sending.done()
        started = time.monotonic()
        await listener_let_back(redis)
        assert await asyncio.wait_for(sending, 10) == reply
        assert time.monotonic() - started < 1.5  # not the reply timeout (5 s)
        assert replies.state.connected and replies.state.reconnects == 1
        assert "NoPermission" in replies.state.last_error
        assert replies.waiting == {}
    finally:
        await listener_let_back(redis)
        await replies.stop()
        await redis.aclose()


async def test_after_a_redis_restart_the_replies_listener_hears_the_engine_again_at_once(server):
    redis = redis_client(server.url)
    replies = Replies(redis, timeout=5)
    await replies.start()
    try:
        server.stop()
        await asyncio.sleep(1.2)  # away for a while: the listener finds it gone
        server.start()
        await eventually(lambda: replies.state.connected and replies.state.reconnects == 1)
        sending = asyncio.create_task(replies.send(CommandEnvelope("c2", "g1", msgspec.Raw(b"{}"), seat=1)))
        await eventually(lambda: commands_queued(redis, 1))
        started = time.monotonic()
        reply = Reply("c2", "g1", "rejected", version=3, code="not_your_turn", seat=1)
        await redis.publish(replies.channel, encoder.encode(reply))
        assert await asyncio.wait_for(sending, 10) == reply
        assert time.monotonic() - started < 1
    finally:
        await replies.stop()
        await redis.aclose()


async def test_after_a_redis_restart_sockets_and_long_polls_get_what_was_projected_while_the_listener_was_away(server):
    redis = redis_client(server.url)
    updates = Updates(redis)
    await updates.start()
    try:
        await project(redis, "g1", 1, ["spectator", "0"])
        async with updates.follow("g1", "spectator") as spectator, updates.follow("g1", "0") as seat:
            assert msgspec.json.decode(await spectator.next())["version"] == 1
            assert msgspec.json.decode(await seat.next())["version"] == 1
            waiting = asyncio.create_task(updates.wait_for("g1", 2, timeout=10))
            await asyncio.sleep(0.1)

            server.stop()
            await asyncio.sleep(1.2)
            server.start()
            await project(redis, "g1", 2, ["spectator", "0"], notify=False)  # its notice is lost
            started = time.monotonic()
            assert msgspec.json.decode(await asyncio.wait_for(spectator.next(), 5))["version"] == 2
            assert msgspec.json.decode(await asyncio.wait_for(seat.next(), 5))["version"] == 2
            assert await asyncio.wait_for(waiting, 5) is True
            assert time.monotonic() - started < 2
            assert updates.state.connected and updates.state.reconnects == 1

            await project(redis, "g1", 3, ["spectator", "0"])  # and the notices come through again
            assert msgspec.json.decode(await asyncio.wait_for(spectator.next(), 2))["version"] == 3
        assert updates.games == {}
    finally:
        await updates.stop()
        await redis.aclose()


async def reads(redis: aioredis.Redis) -> dict[str, int]:
    """The reads Redis served since the last CONFIG RESETSTAT, by command: what the listeners asked, whichever
    client they use (the test's own writes are HSET, SET and PUBLISH)."""
    stats = await redis.info("commandstats")
    return {name: stats.get(f"cmdstat_{name}", {}).get("calls", 0) for name in ("get", "hget", "hmget")}


def view_reads(counted: dict[str, int]) -> int:
    return counted["hget"] + counted["hmget"]


async def test_one_notice_costs_one_read_of_the_games_views_however_many_sockets_audiences_and_long_polls_wait(
        redis_url):
    redis = aioredis.Redis.from_url(redis_url)
    await redis.config_resetstat()
    updates = Updates(redis)
    await updates.start()
    audiences = ["spectator", "0", "1", "2", "3"]
    await project(redis, "g1", 1, audiences)
    try:
        async with contextlib.AsyncExitStack() as stack:
            followers = [await stack.enter_async_context(updates.follow("g1", audiences[i % 5])) for i in range(1000)]
            firsts = await asyncio.gather(*(f.next() for f in followers))
            assert {msgspec.json.decode(v)["version"] for v in firsts} == {1}
            assert 1 <= view_reads(await reads(redis)) <= 2  # the first read, and one more for latecomers
            waiters = [asyncio.create_task(updates.wait_for("g1", 2, timeout=5)) for _ in range(200)]
            await asyncio.sleep(0.1)
            assert (await reads(redis))["get"] <= 2

            await redis.config_resetstat()
            await project(redis, "g1", 2, audiences)
            seconds = await asyncio.wait_for(asyncio.gather(*(f.next() for f in followers)), 5)
            assert {msgspec.json.decode(v)["version"] for v in seconds} == {2}
            assert await asyncio.wait_for(asyncio.gather(*waiters), 5) == [True] * 200
            counted = await reads(redis)
            assert view_reads(counted) == 1  # every audience's view in one read
            assert counted["get"] == 0  # the notice's version is enough
        assert updates.games == {}
    finally:
        await updates.stop()
        await redis.aclose()


async def test_a_wait_on_a_game_followed_here_reads_no_position_but_never_misses_a_version_published_before(
        server):
    """A command's answer waits for its views (``Updates.wait_for``): on a game whose notices this gateway has been
    hearing, under the same subscription, it waits for the notice alone (no GET of the position); a version
    published before the game was followed here, or while the listener was away, is read."""
    redis = redis_client(server.url)
    updates = Updates(redis)
    await updates.start()
    try:
        async with updates.follow("g0", "0") as marker:
            await project(redis, "g0", 1, ["0"])
            assert msgspec.json.decode(await asyncio.wait_for(marker.next(), 5))["version"] == 1
            await project(redis, "g1", 1, ["0"])  # before anyone here followed g1: its notice is heard by nobody
            # g0's next notice, published after g1's, comes after it on the subscription: once it is pushed, g1's was
            # handled (a notice still on its way when g1 is followed would be heard, and no position read)
            await project(redis, "g0", 2, ["0"])
            assert msgspec.json.decode(await asyncio.wait_for(marker.next(), 5))["version"] == 2
        async with updates.follow("g1", "0") as seat:
            assert msgspec.json.decode(await asyncio.wait_for(seat.next(), 5))["version"] == 1
            await redis.config_resetstat()
            # a resent command answered with version 1: no notice comes for it, the position says it is there
            assert await asyncio.wait_for(updates.wait_for("g1", 1, timeout=3), 1) is True
            assert (await reads(redis))["get"] == 1

            await project(redis, "g1", 2, ["0"])
            assert msgspec.json.decode(await asyncio.wait_for(seat.next(), 5))["version"] == 2
            await redis.config_resetstat()
            assert await asyncio.wait_for(updates.wait_for("g1", 2, timeout=3), 1) is True
            waiting = asyncio.create_task(updates.wait_for("g1", 3, timeout=3))
            await asyncio.sleep(0.05)
            await project(redis, "g1", 3, ["0"])
            assert await asyncio.wait_for(waiting, 2) is True
            assert (await reads(redis))["get"] == 0  # the notices were enough

            await listener_cut_off(redis)
            await eventually(lambda: not updates.state.connected)
            await project(redis, "g1", 4, ["0"], notify=False)  # its notice is lost
            await listener_let_back(redis)
            await eventually(lambda: updates.state.connected)
            await redis.config_resetstat()
            assert await asyncio.wait_for(updates.wait_for("g1", 4, timeout=3), 1) is True
            assert (await reads(redis))["get"] == 1
    finally:
        await listener_let_back(redis)
        await updates.stop()
        await redis.aclose()


def seat_view(game_id: str, audience: str, version: int) -> bytes:
    seat = None if audience == "spectator" else int(audience)
    return msgspec.json.encode({"game_id": game_id, "version": version, "seat": seat, "secret": f"{audience}-{version}"})


async def project_seats(redis: aioredis.Redis, game_id: str, version: int, audiences) -> None:
    await redis.hset(keys.views(game_id), mapping={a: seat_view(game_id, a, version) for a in audiences})
    await redis.set(keys.position(game_id), version)
    await redis.publish(keys.view_updates(game_id), encoder.encode(ViewsUpdated(version, "playing", ())))


async def test_each_follower_gets_exactly_its_own_audiences_view_of_its_own_game_and_nothing_else(redis_url):
    redis = redis_client(redis_url)
    updates = Updates(redis)
    await updates.start()
    audiences = ["spectator", "0", "1", "2"]
    try:
        for game_id in ("g1", "g2"):
            await project_seats(redis, game_id, 1, audiences)
        async with contextlib.AsyncExitStack() as stack:
            followed = [(game_id, a, await stack.enter_async_context(updates.follow(game_id, a)))
                        for game_id in ("g1", "g2") for a in audiences for _ in range(3)]
            for version in (1, 2, 3):
                if version > 1:
                    await project_seats(redis, "g1", version, audiences)
                expected = {"g1": version, "g2": 1}
                for game_id, audience, follower in followed:
                    if version > 1 and game_id == "g2":
                        continue  # g2 did not change: nothing comes
                    got = await asyncio.wait_for(follower.next(), 5)
                    assert msgspec.json.decode(got) == msgspec.json.decode(
                        seat_view(game_id, audience, expected[game_id]))
            for game_id, _, follower in followed:  # nothing more is waiting for anyone
                with pytest.raises(TimeoutError):
                    await asyncio.wait_for(follower.next(), 0.05)
    finally:
        await updates.stop()
        await redis.aclose()


async def test_a_follower_that_does_not_take_its_views_holds_up_no_other_and_then_gets_the_newest(redis_url):
    redis = redis_client(redis_url)
    updates = Updates(redis)
    await updates.start()
    try:
        await project_seats(redis, "g1", 1, ["0"])
        async with updates.follow("g1", "0") as slow, updates.follow("g1", "0") as quick:
            assert msgspec.json.decode(await asyncio.wait_for(quick.next(), 5))["version"] == 1
            for version in (2, 3, 4):  # the slow one takes nothing meanwhile
                await project_seats(redis, "g1", version, ["0"])
                assert msgspec.json.decode(await asyncio.wait_for(quick.next(), 5))["version"] == version
            assert msgspec.json.decode(await asyncio.wait_for(slow.next(), 1))["version"] == 4  # whole views: the
            with pytest.raises(TimeoutError):  # newest replaces those it had no time for
                await asyncio.wait_for(slow.next(), 0.05)
    finally:
        await updates.stop()
        await redis.aclose()


async def test_health_reports_a_listener_that_lost_its_connection_with_a_503_until_it_is_back(server):
    app = create_app(Settings(redis_url=server.url))
    redis = redis_client(server.url)
    try:
        async with AsyncTestClient(app) as client:
            r = await client.get("/health")
            assert r.status_code == 200 and r.json()["status"] == "ok"
            for name in ("replies", "updates"):
                assert r.json()["listeners"][name] == {"connected": True, "since": pytest.approx(time.time(), abs=60),
                                                       "reconnects": 0, "last_error": None}
            await listener_cut_off(redis)
            await asyncio.sleep(0.3)
            r = await client.get("/health")
            assert r.status_code == 503, r.text
            body = r.json()
            assert body["status"] == "listener_down" and body["event_store"] == "ok"
            for name in ("replies", "updates"):
                assert not body["listeners"][name]["connected"]
                assert "NoPermission" in body["listeners"][name]["last_error"]
                assert any(w.startswith(f"the {name} listener has no Redis connection") for w in body["warnings"])

            await listener_let_back(redis)
            await asyncio.sleep(1.5)  # the backoff is at most 1 s
            r = await client.get("/health")
            assert r.status_code == 200 and r.json()["status"] == "ok"
            assert {n: s["reconnects"] for n, s in r.json()["listeners"].items()} == {"replies": 1, "updates": 1}
    finally:
        await listener_let_back(redis)
        await redis.aclose()


async def _value(result: object) -> object:
    return await result if inspect.isawaitable(result) else result


async def commands_queued(redis: aioredis.Redis, count: int) -> bool:
    return await redis.xlen(keys.commands(0)) == count


def test_an_idle_listener_under_uvloop_keeps_its_connection_when_redis_answers_its_pings_at_once(redis_url, monkeypatch):
    """Issue #18 item 3: uvloop's ``loop.time()`` has a 1 ms resolution, so a PONG read in the same tick as its
    PING leaves ``heard == pinged_at``; the listener took that for no answer and reconnected every 15-20 s."""
    uvloop = pytest.importorskip("uvloop")
    from services.gateway import listeners

    monkeypatch.setattr(listeners, "IDLE_PING", 0.002)  # a ping every few ms: many land in the PONG's tick
    monkeypatch.setattr(listeners, "PING_ANSWER", 0.3)

    async def idle_for_a_while() -> tuple[int, str | None, str]:
        redis = aioredis.Redis.from_url(redis_url)
        replies = Replies(redis, timeout=1.0)
        try:
            await replies.start()
            await asyncio.sleep(3.0)
            return replies.state.reconnects, replies.state.last_error, type(asyncio.get_running_loop()).__module__
        finally:
            await replies.stop()
            await redis.aclose()

    reconnects, last_error, loop_module = uvloop.run(idle_for_a_while())
    assert loop_module.startswith("uvloop")
    assert (reconnects, last_error) == (0, None)


# The views in the notice (issue #21, docs/performance-changes.md section 5): the projector publishes each view it
# stored on ``souk:pushes:{game}:{version}:{audience}`` just before its ``ViewsUpdated``; a gateway that hears them pushes them as they
# are, and reads views back only when it may have missed a notice (a reconnection's catch-up), for a newcomer's first
# view, or for a notice that came without them.


async def played(redis: aioredis.Redis) -> tuple[Engine, Projector, int]:
    """A started tally game "g1" of two seats, projected; the engine, the projector and the seat whose turn it is."""
    store = RedisEventStore(redis)
    engine = Engine(redis, store)
    turn = await started(engine)
    projector = Projector(redis, store)
    await projected(redis, projector)
    return engine, projector, turn


async def projected(redis: aioredis.Redis, projector: Projector) -> None:
    entries = await redis.xrange(keys.events(0))
    await projector.handle([fields for _, fields in entries])  # those already projected are skipped


async def a_turn(engine: Engine, projector: Projector, redis: aioredis.Redis, turn: int) -> int:
    """The seat whose turn it is adds one, projected; returns the next turn."""
    [reply] = await engine.handle([cmd("g1", Add(1), seat=turn, token=th(turn), cid=f"add-{time.monotonic_ns()}")])
    assert reply.status == "accepted", reply
    await projected(redis, projector)
    return (await engine.load("g1")).table.state.turn


def without_presence(raw: bytes | str) -> dict:
    view = msgspec.json.decode(raw)
    view.pop("presence")
    return view


async def test_a_followed_games_push_is_the_views_the_projector_published_with_no_read_of_the_views(redis):
    engine, projector, turn = await played(redis)
    presence = Presence(Resp.like(redis), window_s=1.0, lease_s=0.6)
    updates = Updates(redis, presence)
    await updates.start()
    audiences = ["0", "1", "spectator"]
    try:
        async with contextlib.AsyncExitStack() as stack:
            followers = {a: [await stack.enter_async_context(updates.follow("g1", a)) for _ in range(2)]
                         for a in audiences}
            for a, each in followers.items():  # a newcomer's first view is read
                for follower in each:
                    assert msgspec.json.decode(await asyncio.wait_for(follower.next(), 5))["version"] == 5
            for _ in range(3):
                await redis.config_resetstat()
                turn = await a_turn(engine, projector, redis, turn)
                pushed = {a: [await asyncio.wait_for(f.next(), 5) for f in each] for a, each in followers.items()}
                stats = await redis.info("commandstats")
                assert "cmdstat_hmget" not in stats and "cmdstat_hgetall" not in stats  # nothing read back
                stored = await redis.hgetall(keys.views("g1"))
                for a, texts in pushed.items():  # each socket its own audience's view, as the projector wrote it
                    for text in texts:
                        assert without_presence(text) == without_presence(stored[a.encode()])
                        assert msgspec.json.decode(text)["seat"] == (None if a == "spectator" else int(a))
                        assert [(p["seat"], p["connected"]) for p in msgspec.json.decode(text)["presence"]] == [
                            (0, False), (1, False)]  # the game's presence spliced in, as into a view read
    finally:
        await updates.stop()
        await presence.hot.aclose()


async def test_views_projected_while_the_listener_was_away_are_read_back_then_the_notices_carry_them_again(server):
    """A notice missed (the subscription broke: pub/sub keeps nothing) is made up for by the catch-up's read of
    every followed view; from the next notice on, the views come with the notices again."""
    redis = redis_client(server.url)
    # the engine and the projector write as a user of their own: cutting the listener off leaves them publishing
    await redis.execute_command("ACL", "SETUSER", "writer", "on", ">pw", "~*", "&*", "+@all")
    writer = aioredis.Redis.from_url(server.url, username="writer", password="pw")
    engine, projector, turn = await played(writer)
    updates = Updates(redis)
    await updates.start()
    try:
        async with updates.follow("g1", "0") as seat, updates.follow("g1", "spectator") as spectator:
            for follower in (seat, spectator):
                assert msgspec.json.decode(await asyncio.wait_for(follower.next(), 5))["version"] == 5
            await listener_cut_off(redis)
            await eventually(lambda: not updates.state.connected)
            turn = await a_turn(engine, projector, writer, turn)  # its notice reaches nobody
            turn = await a_turn(engine, projector, writer, turn)
            await redis.config_resetstat()
            await listener_let_back(redis)
            for follower in (seat, spectator):  # the newest only: the views are whole
                assert msgspec.json.decode(await asyncio.wait_for(follower.next(), 5))["version"] == 7
            assert (await reads(redis))["hmget"] == 1  # the catch-up's read
            await eventually(lambda: updates.state.connected)

            await redis.config_resetstat()
            turn = await a_turn(engine, projector, writer, turn)
            for follower in (seat, spectator):
                assert msgspec.json.decode(await asyncio.wait_for(follower.next(), 5))["version"] == 8
            assert (await reads(redis))["hmget"] == 0
    finally:
        await listener_let_back(redis)
        await updates.stop()
        await writer.aclose()
        await redis.aclose()


async def test_a_view_read_before_a_newer_notice_pushed_is_not_pushed_after_it(redis_url, monkeypatch):
    """A newcomer's read and a push's views race: the read served before the newer projection but answered after
    its notice was pushed must not take the sockets back a version."""
    redis = redis_client(redis_url)
    updates = Updates(redis)
    await updates.start()
    read_back = asyncio.Event()
    original = updates.hot.call_again_if_lost

    async def slow_read(*args):
        result = await original(*args)
        if args[0] == "HMGET":
            read_back.set()
            await asyncio.sleep(0.3)  # answered late
        return result

    monkeypatch.setattr(updates.hot, "call_again_if_lost", slow_read)
    try:
        await project(redis, "g1", 1, ["0"], pushed=True)
        async with updates.follow("g1", "0", patches=True) as seat:
            await asyncio.wait_for(read_back.wait(), 5)  # version 1 read, not yet offered
            await project(redis, "g1", 2, ["0"], pushed=True)
            assert msgspec.json.decode(await asyncio.wait_for(seat.next(), 5))["version"] == 2
            await asyncio.sleep(0.5)  # the late read came back meanwhile
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(seat.next(), 0.05)
            # and the feed did not go back to it: the next view is the patch from the one the socket has
            await project(redis, "g1", 3, ["0"], pushed=True)
            patch = msgspec.json.decode(await asyncio.wait_for(seat.next(), 5))
            assert (patch["from"], patch["version"]) == (2, 3)
            assert patch["patch"] == [{"op": "replace", "path": "/version", "value": 3}]
    finally:
        await updates.stop()
        await redis.aclose()


async def test_a_push_without_a_followed_audiences_view_is_made_up_for_by_a_read(redis_url):
    redis = redis_client(redis_url)
    updates = Updates(redis)
    await updates.start()
    try:
        await project(redis, "g1", 1, ["0", "1"], pushed=True)
        async with updates.follow("g1", "0") as zero, updates.follow("g1", "1") as one:
            for follower in (zero, one):
                assert msgspec.json.decode(await asyncio.wait_for(follower.next(), 5))["version"] == 1
            await redis.config_resetstat()
            await redis.hset(keys.views("g1"), mapping={a: view(2) for a in ("0", "1")})
            await redis.set(keys.position("g1"), 2)
            await redis.publish(pushes.channel("g1", 2, "0"), view(2))  # no view for "1"
            await redis.publish(keys.view_updates("g1"), encoder.encode(ViewsUpdated(2, "playing", ())))
            for follower in (zero, one):
                assert msgspec.json.decode(await asyncio.wait_for(follower.next(), 5))["version"] == 2
            assert (await reads(redis))["hmget"] == 1
    finally:
        await updates.stop()
        await redis.aclose()



def test_a_pushed_views_channel_names_its_game_version_and_audience_and_another_name_is_refused():
    assert pushes.channel("g:1", 12, "spectator") == "souk:pushes:g:1:12:spectator"
    assert pushes.read(b"souk:pushes:g:1:12:spectator") == ("g:1", 12, "spectator")
    assert pushes.read(pushes.channel("abc", 3, "0").encode()) == ("abc", 3, "0")
    for bad in (b"souk:pushes:g1:0", b"souk:pushes:g1:x:0"):
        with pytest.raises(ValueError):
            pushes.read(bad)
