from __future__ import annotations

import pytest
import redis.asyncio as aioredis

from domain import kernel
from tests.services import tally


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
