from __future__ import annotations

import pytest
import redis.asyncio as aioredis

from domain import kernel
from services.cli.stores import check
from services.runtime.config import Settings
from services.store import keys
from tests.services import tally
from tests.services.replicas import Players


@pytest.fixture(autouse=True)
def tally_game():
    """Registers the test-only game 'tally' beside the real ones."""
    kernel.games()  # the built-in games first
    kernel._GAMES["tally"] = tally.GAME
    yield tally.GAME
    kernel._GAMES.pop("tally", None)


@pytest.fixture
async def redis(redis_url):
    """A redis-py asyncio client on the test database (emptied by ``redis_url``)."""
    client = aioredis.Redis.from_url(redis_url)
    yield client
    await client.aclose()


@pytest.fixture
def four_partitions(redis_url, monkeypatch):
    """A store of 4 partitions (its workers' and this process's), one again after the test."""
    monkeypatch.setenv("SOUK_PARTITIONS", "4")
    check(Settings.from_env(redis_url=redis_url, views_redis_url=redis_url))  # records 4 partitions; used here
    assert len(keys.PARTITIONS) == 4
    yield redis_url
    keys.use(1)


@pytest.fixture
async def players(four_partitions):
    """The games' driver (tests/services/replicas.py), its connections closed at the end."""
    driver = await Players(four_partitions).start()
    yield driver
    await driver.aclose()
