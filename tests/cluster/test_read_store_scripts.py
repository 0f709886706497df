"""Each Lua script Souk runs on the read store runs on a real Redis Cluster (issue #22): the calls the services make
while two games of four partitions are played on one Redis (tests/services/read_store_calls.py) are sent again, in
their order, to the local cluster through redis-py's ``RedisCluster`` (routed by their declared keys), and answer
as they did on one Redis; the read models they write there are the same."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster

from domain import kernel
from services.store import keys
from tests.services import tally
from tests.services.read_store_calls import READ_STORE, Recorder, play, scripts

pytestmark = [pytest.mark.cluster, pytest.mark.anyio]
# The rebuild lock's scripts answer whether the lock is held, and the lock is taken by a SET (not replayed here) for a
# lease of 0.3 s: a renewal that came while the rebuild held it (a loaded machine's rebuild outlasts a third of the
# lease) answered 1 on one Redis and 0 here. They run here; their answers are not compared.
LEASED = ("services/projector/service.py:_RENEW", "services/projector/service.py:_RELEASE")


@pytest.fixture(autouse=True)
def tally_game():
    kernel.games()
    kernel._GAMES["tally"] = tally.GAME
    yield
    kernel._GAMES.pop("tally", None)


async def test_every_read_store_script_runs_on_the_cluster_and_answers_as_on_one_redis(
        redis_cluster, redis_url, views_url, monkeypatch):
    recorder = Recorder()
    recorder.install(monkeypatch)
    events, views = aioredis.Redis.from_url(redis_url), aioredis.Redis.from_url(views_url)
    try:
        games = await play(events, views)
        kept = games[1]  # (the other one was removed last, by the archive's transaction)
        on_one = {"views": await views.hgetall(keys.views(kept)),
                  "lobby": await views.hget(keys.game_lobby(kept), kept),
                  "seats": await views.hgetall(keys.seat_tokens(kept))}
    finally:
        await events.aclose()
        await views.aclose()
    monkeypatch.undo()

    texts = {sha: text for sha, (_, text) in scripts().items()}
    client = RedisCluster.from_url(redis_cluster.url)
    ran, primaries = set(), set()
    try:
        for sent in recorder.scripts():
            args = list(sent.commands[0])
            body = args[1].decode() if isinstance(args[1], bytes) else args[1]
            text = texts.get(body, body)  # an EVALSHA's script, by its SHA-1
            declared = args[3:3 + int(args[2])]
            reply = await client.execute_command("EVAL", text, *args[2:])
            if sent.script not in LEASED:
                assert reply == sent.reply, (sent.script, reply, sent.reply)
            ran.add(sent.script)
            primaries.add(redis_cluster.primary_for(declared[0]).port)
        assert ran == READ_STORE
        assert len(primaries) > 1, "every script's keys on one primary: the tags did not spread them"
        on_cluster = {"views": await client.hgetall(keys.views(kept)),
                      "lobby": await client.hget(keys.game_lobby(kept), kept),
                      "seats": await client.hgetall(keys.seat_tokens(kept))}
    finally:
        await client.aclose()
    assert on_cluster == on_one and on_one["views"] and on_one["lobby"]
