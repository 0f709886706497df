"""A worker whose Redis goes away while it starts (souk chaos: the event store killed as the engine restarted)
waits for it and starts, instead of exiting with a traceback (exit code 1, counted as a crash)."""

from __future__ import annotations

import asyncio
import tempfile

import pytest

from services.embedded.redis import RedisServer
from services.runtime.config import Settings
from services.cli.workers import ENGINE, Workers

pytestmark = pytest.mark.anyio


async def test_an_engine_whose_redis_is_away_as_its_subscribers_start_starts_once_redis_is_back():
    with tempfile.TemporaryDirectory(prefix="souk-test-start-") as tmp:
        server = RedisServer(tmp, appendonly=False).start()
        workers = Workers(Settings(redis_url=server.url, views_redis_url=server.url), roles=(ENGINE,))
        try:
            await workers.prepare()
            server.stop()  # away as the broker starts its subscribers (each creates its group first)
            starting = asyncio.create_task(workers.broker.start())
            await asyncio.sleep(1.0)
            assert not starting.done() or starting.exception() is None, starting.exception()
            server = RedisServer(tmp, port=server.port, appendonly=False).start()
            await asyncio.wait_for(starting, 15)
            assert workers.broker.running
        finally:
            await workers.broker.stop()
            await workers.redis.aclose()
            await workers.views_redis.aclose()
            server.stop()


async def test_a_projector_whose_redis_is_away_as_it_prepares_waits_for_it():
    from services.cli.workers import PROJECTOR

    with tempfile.TemporaryDirectory(prefix="souk-test-start-") as tmp:
        server = RedisServer(tmp, appendonly=False).start()
        workers = Workers(Settings(redis_url=server.url, views_redis_url=server.url), roles=(PROJECTOR,))
        try:
            server.stop()
            preparing = asyncio.create_task(workers.prepare())
            await asyncio.sleep(1.0)
            assert not preparing.done() or preparing.exception() is None, preparing.exception()
            server = RedisServer(tmp, port=server.port, appendonly=False).start()
            await asyncio.wait_for(preparing, 15)
        finally:
            await workers.redis.aclose()
            await workers.views_redis.aclose()
            server.stop()


@pytest.mark.parametrize("refusing", [("CONFIG", "SET", "maxmemory", "1"), ("REPLICAOF", "127.0.0.1", "1")],
                         ids=["out_of_memory", "read_only"])
async def test_an_engine_started_while_its_redis_refuses_writes_waits_for_it_then_starts(refusing):
    """The last clean-clone CI's chaos run: an engine restarted during the out-of-memory fault exited 1 in its
    start-up (its groups' creation got OOM) instead of waiting the store's refusal out, as it waits out a Redis
    that is away. Each refusal (out of memory, a read-only replica, loading...) is waited for, at start-up as at
    the subscribers' start."""
    with tempfile.TemporaryDirectory(prefix="souk-test-start-") as tmp:
        server = RedisServer(tmp, appendonly=False).start()
        workers = Workers(Settings(redis_url=server.url, views_redis_url=server.url), roles=(ENGINE,))
        try:
            await workers.redis.execute_command("CONFIG", "SET", "maxmemory-policy", "noeviction")
            await workers.redis.execute_command(*refusing)
            preparing = asyncio.create_task(workers.prepare())
            starting = asyncio.create_task(workers.broker.start())
            await asyncio.sleep(1.0)
            for task in (preparing, starting):
                assert not task.done() or task.exception() is None, task.exception()
            await workers.redis.execute_command("CONFIG", "SET", "maxmemory", "0")
            await workers.redis.execute_command("REPLICAOF", "NO", "ONE")
            await asyncio.wait_for(preparing, 15)
            await asyncio.wait_for(starting, 15)
            assert workers.broker.running
            assert await workers.redis.xinfo_groups(workers.commands[0])
        finally:
            await workers.broker.stop()
            await workers.redis.aclose()
            await workers.views_redis.aclose()
            server.stop()


def test_the_projector_takes_its_cache_lifetime_and_trim_period_from_the_settings(monkeypatch):
    monkeypatch.setenv("SOUK_FINISHED_TTL_S", "42")
    monkeypatch.setenv("SOUK_TRIM_EVENTS_S", "0.5")
    settings = Settings.from_env(redis_url="redis://127.0.0.1:1/0")  # nothing is connected to
    projector = Workers(settings, roles=("projector",)).projector
    assert (projector.finished_ttl_s, projector.trim_every_s) == (42, 0.5)
