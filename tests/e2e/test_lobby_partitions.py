"""The lobby's test (tests/e2e/test_lobby.py) on a store of four partitions: the same listings, pages and filters,
read from four lobbies merged (services/gateway/lobby.py)."""

from __future__ import annotations

import pytest
import redis

from services.store import keys
from tests.e2e.support import partitioned
from tests.e2e.test_lobby import test_the_lobby_pages_with_a_cursor_and_filters_by_an_index as lobby_test

pytestmark = pytest.mark.anyio


souk_env = partitioned(4)


async def test_the_lobby_of_four_partitions_pages_and_filters_as_one(souk_url, redis_url):
    await lobby_test(souk_url)
    views = redis.Redis.from_url(redis_url.rsplit("/", 1)[0] + "/1")
    try:
        held = {p: views.hlen(keys.lobby(p)) for p in keys.PARTITIONS}
    finally:
        views.close()
    assert sum(held.values()) == 7 and sum(1 for n in held.values() if n) > 1, held
