"""`souk store migrate --to redis+cluster://…` (issue #22): a store of one Redis (one partition) copied onto the
local Redis Cluster with four partitions, its keys spread over the primaries, and `souk serve` on the cluster playing
its games on: a command of each accepted past its version, its history's chain whole."""

from __future__ import annotations

import random

import pytest
import redis.asyncio as aioredis

from services.cli.stores import MIGRATION, ROLE, check
from services.engine.service import Engine
from services.runtime.config import Settings
from services.store import clients
from services.store.events import RedisEventStore
from tests.cluster.support import keys_on
from tests.cluster.test_souk_on_cluster import ENV, cluster_url
from tests.e2e.support import serve
from tests.embedded.support import clean_env, souk
from tests.services.test_store_migrate_to import dumped, played, plays_on, with_streams_half_read

pytestmark = [pytest.mark.cluster, pytest.mark.anyio]


async def test_a_store_of_one_redis_moves_onto_a_cluster_and_souk_plays_on_there(redis_url, redis_cluster, tmp_path):
    check(Settings(redis_url=redis_url), views=False)
    rng = random.Random(23)
    redis = aioredis.Redis.from_url(redis_url)
    store = RedisEventStore(redis)
    engine = Engine(redis, store)
    tokens = await played(engine, rng)
    queued_game = sorted(tokens)[-1]
    unread = await with_streams_half_read(redis, engine, queued_game, tokens[queued_game])
    versions = {g: await store.version(g) for g in tokens}
    await store.aclose()
    await redis.aclose()
    source = dumped(redis_url)
    target = cluster_url(redis_cluster)

    done = souk("store", "migrate", "--to", target, env=clean_env(REDIS_URL=redis_url, SOUK_PARTITIONS="4"))

    assert done.returncode == 0, done.stderr
    assert f"{len(tokens)} games" in done.stdout and "1 partition -> 4" in done.stdout, done.stdout
    assert "1 commands" in done.stdout and f"{unread} events" in done.stdout, done.stdout
    assert dumped(redis_url) == source
    holding = [n for n in redis_cluster.primaries() if keys_on(n, "souk:{p*}:game:*")]
    assert len(holding) > 1  # the games' keys on more than one primary
    with clients.sync_client(target) as moved:
        assert moved.hget(ROLE, "partitions") == b"4" and not moved.exists(MIGRATION)
    with serve(target, target, tmp_path / "souk.log", ENV) as url:
        await plays_on(url, tokens, {**versions, queued_game: versions[queued_game] + 1}, rng)  # the queued one first
