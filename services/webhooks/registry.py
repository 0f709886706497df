"""A game's webhook registrations, in the event store beside its other keys (``keys.webhooks``): the URL is not in
the event log, where the history and the records would show it to everyone."""

from __future__ import annotations

import msgspec
import redis.asyncio as aioredis

from services.store import keys

GAME = "game"  # the field of the game's own registration (made at its creation): every seat's notices


class Registration(msgspec.Struct, frozen=True):
    url: str
    secret: str  # signs the POSTs (``signing``); handed out once, in the create or join answer


_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(Registration).decode


def seat_field(token_hash: str) -> str:
    """The field of a seat's registration: by its token's hash, known before the engine picks the seat (a join
    without a seat number) and no longer the seat's once it leaves and another player takes it."""
    return f"seat:{token_hash}"


async def register(redis: aioredis.Redis, game_id: str, field: str, registration: Registration) -> None:
    """Written before the command that makes it (the creation, the join) is sent: the worker may read its events
    at once, and must find the registration."""
    await redis.hset(keys.webhooks(game_id), field, _encode(registration))


# KEYS: the game's registrations, its webhook position, its stream. ARGV: the field, the registration's JSON. A game
# nobody listened to has no position the worker kept: it starts at the game's version now (its stream's length),
# else the worker would follow the game from its first event and send every past turn to the new URL.
_REGISTER_LATER = """
if redis.call('HLEN', KEYS[1]) == 0 then
  local now = redis.call('XLEN', KEYS[3])
  if tonumber(redis.call('GET', KEYS[2]) or '0') < now then redis.call('SET', KEYS[2], now) end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
"""


async def register_later(redis: aioredis.Redis, game_id: str, field: str, registration: Registration) -> None:
    """A registration made or changed after its game's creation or its seat's join (``PUT .../webhook``): it hears
    the notices of the events from now on, not the game's past."""
    await redis.eval(_REGISTER_LATER, 3, keys.webhooks(game_id), keys.webhook_position(game_id),
                     keys.game_stream(game_id), field, _encode(registration))


async def registration(redis: aioredis.Redis, game_id: str, field: str) -> Registration | None:
    raw = await redis.hget(keys.webhooks(game_id), field)
    return None if raw is None else _decode(raw)


async def remove(redis: aioredis.Redis, game_id: str, field: str) -> Registration | None:
    """Removes a registration (``DELETE .../webhook``): the notices not delivered yet are dropped at their next
    attempt. Returns what was removed (None: nothing was registered)."""
    async with redis.pipeline(transaction=True) as pipe:
        pipe.hget(keys.webhooks(game_id), field)
        pipe.hdel(keys.webhooks(game_id), field)
        raw, _ = await pipe.execute()
    return None if raw is None else _decode(raw)


async def forget(redis: aioredis.Redis, game_id: str, field: str) -> None:
    """The registration of a command refused for good (a join refused: the token never worked)."""
    await redis.hdel(keys.webhooks(game_id), field)


def registrations(raw: dict[bytes, bytes]) -> dict[str, Registration]:
    return {f.decode(): _decode(v) for f, v in raw.items()}
