"""Souk's services on a Redis Cluster (issue #22): `souk serve` with ``REDIS_URL=redis+cluster://…`` and four
partitions plays whole games over HTTP, the partitions' keys spread over the three primaries; a primary killed
between two commands, the game goes on (a command that got no answer is sent again with its id) and no event a
client saw accepted is lost.

The whole games run with both stores on the cluster (the read store's scripts are cluster-safe: its keys carry the
game's partition); the failover test keeps the read store on a single Redis (the test Redis' database 1), so that
what it checks is the event store's."""

from __future__ import annotations

import asyncio
import random

import httpx
import pytest
from redis.cluster import RedisCluster

from services.store import keys
from tests.e2e.support import join_all, serve
from tests.cluster.support import keys_on

pytestmark = [pytest.mark.cluster, pytest.mark.anyio]

ENV = {"SOUK_RATE_PER_CLIENT": "0", "SOUK_RATE_PER_TOKEN": "0", "SOUK_OPEN_GAMES_PER_CLIENT": "0",
       "SOUK_CONNECTIONS_PER_CLIENT": "0", "SOUK_PARTITIONS": "4", "SOUK_REPLY_TIMEOUT": "3"}


def cluster_url(cluster) -> str:
    return "redis+cluster://" + ",".join(f"{h}:{p}" for h, p in cluster.addresses())


async def command(client: httpx.AsyncClient, game_id: str, seat: int, token: str, command_id: str, body: dict,
                  retry_s: float = 0.0) -> dict:
    """POSTs a command; with ``retry_s``, sends it again with the same id while it gets no answer (a 5xx, a
    timeout, a cut connection) for at most that long, as a client does through a failover."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + retry_s
    while True:
        try:
            r = await client.post(f"/games/{game_id}/seats/{seat}/commands",
                                  headers={"Authorization": f"Bearer {token}"},
                                  json={"command_id": command_id, "command": body})
            if r.status_code < 500:
                assert r.status_code == 200, r.text
                return r.json()
            failure = r.text
        except httpx.HTTPError as exc:
            failure = repr(exc)
        if loop.time() > deadline:
            raise AssertionError(f"{command_id}: no answer within {retry_s} s: {failure}")
        await asyncio.sleep(0.2)


async def play(client: httpx.AsyncClient, game_id: str, tokens: list[str], rng: random.Random, moves: int | None,
               accepted: list[tuple[str, int]], retry_s: float = 0.0) -> bool:
    """Plays random legal commands, ``moves`` of them (None: to the end); each accepted one's (command id,
    version) goes to ``accepted``. True when the game is over."""
    made = 0
    while moves is None or made < moves:
        spectator = (await client.get(f"/games/{game_id}/view")).json()
        if spectator["status"] == "over":
            return True
        seat = rng.choice(spectator["flow"]["awaiting"])
        legal = (await client.get(f"/games/{game_id}/seats/{seat}/legal",
                                  headers={"Authorization": f"Bearer {tokens[seat]}"})).json()
        command_id = f"{game_id[:8]}-{len(accepted)}"
        reply = await command(client, game_id, seat, tokens[seat], command_id, rng.choice(legal["legal"]), retry_s)
        assert reply["status"] == "accepted", reply
        accepted.append((command_id, reply["version"]))
        made += 1
        assert len(accepted) < 5000
    return False


@pytest.fixture
def cluster_souk(redis_cluster, tmp_path):
    with serve(cluster_url(redis_cluster), cluster_url(redis_cluster), tmp_path / "souk.log", ENV) as url:
        yield url


async def test_whole_games_are_played_over_http_on_a_cluster_with_four_partitions_over_three_primaries(
        redis_cluster, cluster_souk):
    events = RedisCluster.from_url(redis_cluster.url, decode_responses=True)
    try:
        assert events.hget("souk:store", "partitions") == "4"
        keys.use(4)
        async with httpx.AsyncClient(base_url=cluster_souk, timeout=30) as client:
            game_ids: list[str] = []
            primaries = {redis_cluster.primary_for(keys.games(keys.partition(g))).port for g in game_ids}
            while len(primaries) < 2:  # games in partitions served by two primaries at least
                r = await client.post("/games", json={"game": "samarkand", "title": "c", "seats": 3})
                assert r.status_code == 201, r.text
                game_ids.append(r.json()["game_id"])
                primaries = {redis_cluster.primary_for(keys.games(keys.partition(g))).port for g in game_ids}
            played = [game_ids[0], next(g for g in game_ids if redis_cluster.primary_for(
                keys.games(keys.partition(g))).port != redis_cluster.primary_for(
                keys.games(keys.partition(game_ids[0]))).port)]
            tokens = [await join_all(client, g, 3) for g in played]
            accepted: list[list[tuple[str, int]]] = [[], []]
            over = await asyncio.gather(*(play(client, g, t, random.Random(n), None, accepted[n])
                                          for n, (g, t) in enumerate(zip(played, tokens))))
            assert over == [True, True]
            for game_id, mine in zip(played, accepted):
                final = (await client.get(f"/games/{game_id}/view")).json()
                assert final["status"] == "over" and final["version"] == mine[-1][1]
                assert events.xlen(keys.game_stream(game_id)) == final["version"]
    finally:
        events.close()
    # each partition's keys on its own primary: the two games' on two primaries
    holders = {node.port for node in redis_cluster.primaries() if keys_on(node, "souk:{p*}:game:*")}
    assert len(holders) >= 2, holders
    # and the read models with them, in their games' slots
    readers = {node.port for node in redis_cluster.primaries() if keys_on(node, "souk:{p*}:lobby")}
    assert len(readers) >= 2, readers


async def test_a_primary_killed_between_two_commands_and_the_game_goes_on_with_no_accepted_event_lost(
        fresh_redis_cluster, views_url, tmp_path):
    from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster

    from services.store.events import RedisEventStore

    cluster = fresh_redis_cluster
    with serve(cluster_url(cluster), views_url, tmp_path / "souk.log", ENV) as url:
        keys.use(4)
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            r = await client.post("/games", json={"game": "samarkand", "title": "failover", "seats": 3})
            assert r.status_code == 201, r.text
            game_id = r.json()["game_id"]
            tokens = await join_all(client, game_id, 3)
            rng, accepted = random.Random(7), []
            assert not await play(client, game_id, tokens, rng, 5, accepted)
            primary = cluster.primary_for(keys.game_stream(game_id))
            failing_over = asyncio.create_task(asyncio.to_thread(cluster.fail_over, primary))
            while primary.running:
                await asyncio.sleep(0.01)
            # the next commands go out while the game's slot has no primary: sent again by id until answered
            assert await play(client, game_id, tokens, rng, None, accepted, retry_s=30)
            promoted = await failing_over
            assert cluster.primary_for(keys.game_stream(game_id)).port == promoted.port != primary.port
            final = (await client.get(f"/games/{game_id}/view")).json()
    assert final["status"] == "over" and final["version"] == accepted[-1][1]
    events = AsyncRedisCluster.from_url(cluster.url)
    try:
        stream = await RedisEventStore(events).read(game_id)
    finally:
        await events.aclose()
    # every command a client saw accepted is in the stream, at the version it was answered with, once
    assert len(stream) == final["version"]
    by_seq = {e.seq: e.command_id for e in stream}
    assert all(by_seq[version] == command_id for command_id, version in accepted)
    assert len({e.command_id for e in stream if e.command_id in dict(accepted)}) == len(accepted)
