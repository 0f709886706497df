"""The platform's own upkeep, run by the engine worker (``Workers.keep_streams``): games nobody filled in time
are cancelled. Stream trimming and stale consumers are in ``services.store.streams``."""

from __future__ import annotations

import time

import msgspec
import redis.asyncio as aioredis

from contracts.envelope import CommandEnvelope
from contracts.table import CancelGame
from services.store import keys
from services.store.codec import encoder

EXPIRY_CURSOR = "souk:expiry:cursor"  # creation time up to which open games were already sent a CancelGame
_cancel = msgspec.Raw(encoder.encode(CancelGame("expired")))


async def expire_open_games(redis: aioredis.Redis, ttl_s: float, now: float | None = None) -> int:
    """Queues a ``CancelGame("expired")`` for every game created more than ``ttl_s`` ago and not looked at
    before (a cursor over the partitions' games indexes' creation times: each game is looked at once). The rules
    cancel the ones still open and refuse the others; the command id is the same for every engine that sends it, so two
    engines doing this at once cancel a game once. Returns how many were queued."""
    now = time.time() if now is None else now
    until = now - ttl_s
    cursor = float(await redis.get(EXPIRY_CURSOR) or 0)
    if until <= cursor:
        return 0
    queued = 0
    for partition in keys.PARTITIONS:
        game_ids = await redis.zrangebyscore(keys.games(partition), f"({cursor!r}", repr(until))
        for game_id in game_ids:
            env = CommandEnvelope("platform-expire", game_id.decode(), _cancel)
            await redis.xadd(keys.commands(partition), {"c": encoder.encode(env)})
        queued += len(game_ids)
    await redis.set(EXPIRY_CURSOR, repr(until))
    return queued
