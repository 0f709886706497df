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


async def forget(redis: aioredis.Redis, game_id: str, field: str) -> None:
    """The registration of a command refused for good (a join refused: the token never worked)."""
    await redis.hdel(keys.webhooks(game_id), field)


def registrations(raw: dict[bytes, bytes]) -> dict[str, Registration]:
    return {f.decode(): _decode(v) for f, v in raw.items()}
