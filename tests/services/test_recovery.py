"""Workers come back by themselves, and quickly, when their Redis does (issue #8 item 11: FastStream used to
wait 5 s after a failed read, so answers came 5-10 s after Redis was back)."""

from __future__ import annotations

import asyncio
import time

import msgspec
import pytest
import redis.asyncio as aioredis

from contracts.table import CreateGame, JoinSeat
from services.store import keys
from services.runtime.config import Settings
from services.engine.service import command_key
from services.embedded.redis import RedisServer
from services.cli.workers import Workers
from tests.services.test_engine import cmd, th

pytestmark = pytest.mark.anyio


async def outcome(redis, env, timeout: float) -> bytes | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            found = await redis.hget(keys.outcomes(env.game_id), command_key(env))
            if found is not None:
                return found
        except (ConnectionError, OSError, aioredis.ConnectionError):
            pass
        await asyncio.sleep(0.02)
    return None


async def test_the_engine_answers_within_a_second_of_its_redis_coming_back(tmp_path):
    server = RedisServer(tmp_path / "redis", appendonly=True).start()
    redis = aioredis.Redis.from_url(server.url)
    workers = Workers(Settings(redis_url=server.url, reclaim_idle_ms=60_000))
    await workers.start()
    try:
        create = cmd("g1", CreateGame("tally", "t", 2, {}), cid="create")
        await redis.xadd(keys.commands(0), {"c": msgspec.json.encode(create)})
        assert await outcome(redis, create, 10) is not None

        server.stop()
        await asyncio.sleep(1.0)  # the workers' reads fail meanwhile
        server.start()
        back = time.monotonic()
        join = cmd("g1", JoinSeat("a", th(0), 0), seat=0, cid="join")
        for _ in range(50):  # the test's own client reconnects too
            try:
                await redis.xadd(keys.commands(0), {"c": msgspec.json.encode(join)})
                break
            except (ConnectionError, OSError, aioredis.ConnectionError):
                await asyncio.sleep(0.02)
        answered = await outcome(redis, join, 10)
        took = time.monotonic() - back
        print(f"recovery: answered {took:.3f} s after Redis was back")
        assert answered is not None and msgspec.json.decode(answered)["status"] == "accepted"
        assert took < 2.0, f"the engine answered {took:.2f} s after its Redis came back"
    finally:
        await workers.stop()
        await redis.aclose()
        server.stop()
