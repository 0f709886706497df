"""`souk serve` as a real process against the test Redis, for end-to-end tests over HTTP and WebSocket."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from tests.e2e.support import serve


@pytest.fixture
def souk_env() -> dict[str, str]:
    """Extra environment for `souk serve` (a test module overrides this fixture to change a setting). Every
    test client comes from 127.0.0.1 as fast as it goes: the per-client limits are off unless a test is about
    them (tests/e2e/test_limits.py)."""
    return {"SOUK_RATE_PER_CLIENT": "0", "SOUK_RATE_PER_TOKEN": "0", "SOUK_OPEN_GAMES_PER_CLIENT": "0",
            "SOUK_CONNECTIONS_PER_CLIENT": "0"}


@pytest.fixture
def souk_url(redis_url: str, tmp_path, souk_env) -> Iterator[str]:
    """The event store in database 0 and the read store in database 1, as two Redis would be used."""
    views_url = redis_url.rsplit("/", 1)[0] + "/1"
    redis.Redis.from_url(views_url).flushdb()
    with serve(redis_url, views_url, tmp_path / "souk.log", souk_env) as url:
        yield url
