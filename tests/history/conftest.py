from __future__ import annotations

import random

import pytest
import redis.asyncio as aioredis

from services.engine.service import Engine
from services.projector.service import Projector
from services.store.events import RedisEventStore


@pytest.fixture
async def stores(redis_url):
    """The event store (the test database) and a read store (database 1 of the same server)."""
    events = aioredis.Redis.from_url(redis_url)
    views = aioredis.Redis.from_url(redis_url.rsplit("/", 1)[0] + "/1")
    await views.flushdb()
    yield events, views
    await views.flushdb()
    await events.aclose()
    await views.aclose()


@pytest.fixture
async def finished(stores):
    """Finished two-player Yspahan games (two), played through the engine and projected; returns their ids."""
    from services.bench.storage import play

    events, views = stores
    engine = Engine(events, RedisEventStore(events))
    projector = Projector(views, engine.store)
    ids = await play(engine, projector, events, "yspahan", 2, 2, random.Random(5))
    await projector.aclose()
    await engine.store.aclose()
    return ids
