"""A seat's commands are applied in the order ``souk:commands`` received them, or not at all (issue #18 item 4).

A command whose engine died holding it (answered 504 ``engine_timeout``, never resent) was reclaimed much later;
meanwhile the same seat's next command was applied, and the late one after it (v20 after v16). Now the partition's
next owner takes a dead consumer's pending entries at once and decides them first (services/store/leases.py); a
command that still comes late (a stale owner's, paused past its lease) is refused as ``superseded`` instead of
being applied after the seat's newer one, for every client, with or without ``expected_version``.
"""

from __future__ import annotations

import asyncio
import time

import pytest
import redis.asyncio as aioredis

from services.engine.service import Engine, command_key
from services.history.transfer import read_record
from services.history.verify import verify_record
from services.runtime.config import Settings
from services.cli.workers import ENGINE, Workers
from services.store import keys
from services.store.codec import encoder, reply_decoder
from services.store.events import RedisEventStore
from services.store.streams import ensure_group
from tests.services.tally import Add
from tests.services.test_engine import cmd, started, th

pytestmark = pytest.mark.anyio


@pytest.fixture
def engine(redis):
    return Engine(redis, RedisEventStore(redis))


async def outcome(redis: aioredis.Redis, env, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = await redis.hget(keys.outcomes(env.game_id), command_key(env))
        if found is not None:
            return reply_decoder.decode(found)
        await asyncio.sleep(0.02)
    raise AssertionError(f"no outcome for {env.command_id} within {timeout} s")


async def queued(redis: aioredis.Redis, env) -> bytes:
    return await redis.xadd(keys.commands(0), {"c": encoder.encode(env)})


async def test_a_command_whose_engine_died_is_decided_by_the_partitions_next_owner_before_any_newer_one(
        redis, redis_url, engine):
    """The engine that takes the partition over moves the dead consumer's pending entry to itself at once and
    decides it first (services/store/leases.py): the seat's next command comes after it, never before."""
    turn = await started(engine)  # tally at version 5, ``turn`` to play
    await ensure_group(redis, keys.commands(0), keys.ENGINE_GROUP)
    lost = cmd("g1", Add(1), seat=turn, token=th(turn), cid="lost")  # its sender was answered 504
    await queued(redis, lost)
    # An engine reads it and dies before deciding it: the entry stays pending under that consumer.
    [[_, entries]] = await redis.xreadgroup(keys.ENGINE_GROUP, "engine-that-died", {keys.commands(0): ">"})
    assert len(entries) == 1
    following = cmd("g1", Add(2), seat=turn, token=th(turn), cid="next")  # queued after it
    await queued(redis, following)

    workers = Workers(Settings(redis_url=redis_url, views_redis_url=redis_url), roles=(ENGINE,))
    await workers.start()
    try:
        first = await outcome(redis, lost)
        then = await outcome(redis, following)
    finally:
        await workers.stop()
    assert (first.status, first.version) == ("accepted", 6), first
    assert (then.status, then.code) == ("rejected", "not_your_turn"), then  # ``turn`` played: the other's turn
    assert await RedisEventStore(redis).version("g1") == 6


async def test_the_engine_refuses_a_seats_command_received_before_one_it_applied(engine, redis):
    turn = await started(engine)
    [applied] = await engine.handle([cmd("g1", Add(2), seat=turn, token=th(turn), cid="b")], entry_ids=[b"200-0"])
    assert applied.status == "accepted"
    assert await redis.hgetall(keys.order("g1")) == {str(turn).encode(): b"200-0"}
    [other] = await engine.handle([cmd("g1", Add(1), seat=1 - turn, token=th(1 - turn), cid="o")],
                                  entry_ids=[b"150-3"])  # another seat's order is its own
    assert other.status == "accepted"

    older = cmd("g1", Add(1), seat=turn, token=th(turn), cid="a")
    for fresh in (engine, Engine(redis, RedisEventStore(redis))):  # cached, and loaded from Redis
        [reply] = await fresh.handle([older], entry_ids=[b"199-9"])
        assert (reply.status, reply.code, reply.version) == ("rejected", "superseded", 7), reply
    assert await engine.store.version("g1") == 7
    # The same entry delivered again (a reclaim after an append whose ack was lost) gets its first answer.
    [again] = await Engine(redis, RedisEventStore(redis)).handle(
        [cmd("g1", Add(2), seat=turn, token=th(turn), cid="b")], entry_ids=[b"200-0"])
    assert again == applied
    # A command received after the seat's newest is decided as usual.
    [newer] = await engine.handle([cmd("g1", Add(3), seat=turn, token=th(turn), cid="c")], entry_ids=[b"200-1"])
    assert newer.status == "accepted" and newer.version == 8
    assert (await redis.hgetall(keys.order("g1")))[str(turn).encode()] == b"200-1"


async def test_a_resent_command_already_applied_is_answered_as_applied_not_superseded(engine, redis):
    turn = await started(engine)
    first = cmd("g1", Add(2), seat=turn, token=th(turn), cid="resent")
    [accepted] = await engine.handle([first], entry_ids=[b"300-0"])
    await engine.handle([cmd("g1", Add(1), seat=1 - turn, token=th(1 - turn), cid="o")], entry_ids=[b"301-0"])
    await engine.handle([cmd("g1", Add(1), seat=turn, token=th(turn), cid="later")], entry_ids=[b"302-0"])
    # its first copy, left pending by a gateway's XADD sent twice, comes after the seat's later command
    [again] = await engine.handle([first], entry_ids=[b"299-0"])
    assert again == accepted


async def test_a_batch_keeps_a_seats_order_and_refuses_what_came_before_within_it(engine, redis):
    turn = await started(engine)
    # a reclaimed entry handled in the same batch after a newer one of its seat
    replies = await engine.handle(
        [cmd("g1", Add(1), seat=turn, token=th(turn), cid="new"), cmd("g1", Add(1), seat=1 - turn,
                                                                      token=th(1 - turn), cid="o"),
         cmd("g1", Add(1), seat=turn, token=th(turn), cid="old")],
        entry_ids=[b"500-0", b"501-0", b"400-0"])
    assert [(r.status, r.code) for r in replies] == [("accepted", ""), ("accepted", ""), ("rejected", "superseded")]


async def test_a_game_with_a_superseded_command_exports_a_record_that_re_executes(engine, redis):
    turn = await started(engine)
    entry = 1_000
    seat = turn
    refused = 0
    for n in range(10):  # tally ends at 10: play it out, a stale copy of each move refused on the way
        entry += 10
        [reply] = await engine.handle([cmd("g1", Add(1), seat=seat, token=th(seat), cid=f"m{n}")],
                                      entry_ids=[f"{entry}-0".encode()])
        if reply.status != "accepted":
            assert reply.code == "game_over"
            break
        if n % 3 == 0:
            [late] = await engine.handle([cmd("g1", Add(1), seat=seat, token=th(seat), cid=f"late{n}")],
                                         entry_ids=[f"{entry - 5}-0".encode()])
            assert late.code == "superseded" or late.code == "game_over", late
            refused += late.code == "superseded"
        seat = 1 - seat
    assert refused
    assert not await redis.exists(keys.order("g1"))  # the game is over: its seats' order went with the last append
    record = await read_record(engine.store, redis, "g1")
    verdict = verify_record(record)
    assert verdict.ok, verdict.summary()


async def test_an_engine_without_entry_ids_decides_as_before(engine, redis):
    turn = await started(engine)
    [reply] = await engine.handle([cmd("g1", Add(1), seat=turn, token=th(turn), cid="x")])
    assert reply.status == "accepted" and not await redis.exists(keys.order("g1"))


def test_the_order_key_is_one_of_the_games_event_store_keys():
    assert keys.order("g1") in keys.game_keys("g1")
    assert {keys.game_stream("g1"), keys.outcomes("g1"), keys.head("g1"), keys.seed("g1")} <= set(
        keys.game_keys("g1"))



def test_the_gateway_answers_superseded_409_and_its_api_document_says_so(redis_url):
    from contracts.envelope import Reply
    from services.gateway.app import create_app
    from services.gateway.errors import ApiError, raise_if_rejected
    from services.gateway.openapi import served

    with pytest.raises(ApiError) as refused:
        raise_if_rejected(Reply("c", "g1", "rejected", code="superseded", message="m"))
    assert (refused.value.status_code, refused.value.code) == (409, "superseded")
    document = served(create_app(Settings(redis_url=redis_url)))
    answers = document["paths"]["/games/{game_id}/seats/{seat}/commands"]["post"]["responses"]
    assert "superseded" in answers["409"]["description"]


async def test_over_http_a_command_answered_504_is_played_before_the_seats_next_one_by_the_next_owner(redis, redis_url, views_url):
    """The issue's case end to end: the engine is away, the gateway answers 504 and the client never resends; an
    engine had read the command and died. The engine that owns the partition next decides it before anything
    newer (it takes the dead consumer's pending entries at once): the seat's next command, sent after, comes
    after it, and whoever asks with its id gets its answer."""
    from litestar.testing import TestClient

    from services.gateway.app import create_app
    from services.cli.workers import PROJECTOR

    settings = Settings(redis_url=redis_url, views_redis_url=views_url, reply_timeout=2.0,
                        rate_per_client=0, rate_per_token=0, open_games_per_client=0)
    projector = Workers(settings, roles=(PROJECTOR,))
    engine = Workers(settings, roles=(ENGINE,))
    await projector.start()
    await engine.start()
    try:
        # The test client runs the app on an event loop of its own, in a thread, and blocks its caller: its
        # requests go from another thread, so that the workers on this loop go on meanwhile.
        with TestClient(create_app(settings)) as client:

            async def http(method: str, path: str, **kwargs):
                return await asyncio.to_thread(client.request, method, path, **kwargs)

            r = await http("POST", "/games", json={"game": "tally", "title": "order", "seats": 2})
            assert r.status_code == 201, r.text
            game_id = r.json()["game_id"]
            tokens = [(await http("POST", f"/games/{game_id}/seats", json={"name": f"p{s}"})).json()["token"]
                      for s in range(2)]
            view = await http("GET", f"/games/{game_id}/view", params={"min_version": 5})
            turn = view.json()["flow"]["awaiting"][0]

            async def send(seat: int, command_id: str, amount: int):
                return await http("POST", f"/games/{game_id}/seats/{seat}/commands",
                                  headers={"Authorization": f"Bearer {tokens[seat]}"},
                                  json={"command_id": command_id, "command": {"type": "tally.Add", "amount": amount}})

            await engine.stop()  # the engine is away
            lost = await send(turn, "lost", 1)
            assert (lost.status_code, lost.json()["code"]) == (504, "engine_timeout")
            taken = await redis.xreadgroup(keys.ENGINE_GROUP, "engine-that-died", {keys.commands(0): ">"})
            assert len(taken[0][1]) == 1  # an engine read it, then died holding it

            engine = Workers(settings, roles=(ENGINE,))
            await engine.start()
            late = await outcome(redis, cmd(game_id, Add(1), seat=turn, cid="lost"))  # taken over at once
            assert (late.status, late.version) == ("accepted", 6), late
            following = await send(turn, "next", 2)  # the seat's next command comes after it
            assert (following.status_code, following.json()["code"]) == (422, "not_your_turn"), following.text
            assert (await send(1 - turn, "other", 1)).json()["version"] == 7
            asked = await send(turn, "lost", 1)  # its sender asks at last: the recorded answer
            assert (asked.status_code, asked.json()["version"]) == (200, 6), asked.text
            assert (await http("GET", f"/games/{game_id}/view")).json()["version"] == 7
    finally:
        await engine.stop()
        await projector.stop()
