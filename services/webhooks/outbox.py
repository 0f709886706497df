"""The webhooks' outbox in the event store: deliveries (one notice to one registration) in a sorted set by when each
is next tried (``keys.webhook_outbox``), their bodies in a hash (``keys.webhook_deliveries``), and the ones given up
on in a stream for operators (``keys.webhook_dead``): one of each per partition, a delivery in its game's.

- ``enqueue`` adds a game's new deliveries and the game's webhook position in one Lua call, only if the position is
  still the one they were made from: a redelivered event, or two workers on one game, add nothing twice.
- ``claim`` takes a due delivery for one attempt by moving it a lease into the future: another worker does not try
  it meanwhile, and a worker killed during the attempt leaves it to be tried again when the lease ends (at least
  once).
- ``done`` removes it; ``retry`` puts it back later, or moves it to the dead letters past the limit.
"""

from __future__ import annotations

import msgspec
import redis.asyncio as aioredis

from contracts.api import WebhookNotice
from services.store import keys


class Delivery(msgspec.Struct, frozen=True):
    """One notice for one registration (``field`` of the game's ``keys.webhooks`` hash)."""

    id: str  # "{notice key}|{field}"
    game_id: str
    field: str
    notice: WebhookNotice
    made_at: float  # when it was first due: the limit of retries counts from here
    attempts: int = 0
    last_error: str = ""


encode = msgspec.json.Encoder().encode
decode = msgspec.json.Decoder(Delivery).decode
_pack = msgspec.msgpack.Encoder().encode


def delivery_id(notice_key: str, field: str) -> str:
    return f"{notice_key}|{field}"


_ENQUEUE = """
-- KEYS: the game's webhook position, the outbox, the deliveries. ARGV[1]: the position the deliveries were made
-- from; ARGV[2]: MessagePack of [new position, [id, due, delivery JSON]..., [cancelled ids]...]. Nothing is written
-- unless the position is as expected. Returns 1 when written.
if (redis.call('GET', KEYS[1]) or '0') ~= ARGV[1] then return 0 end
local batch = cmsgpack.unpack(ARGV[2])
for _, id in ipairs(batch[3]) do
  redis.call('ZREM', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
end
for _, d in ipairs(batch[2]) do
  redis.call('HSET', KEYS[3], d[1], d[3])
  redis.call('ZADD', KEYS[2], d[2], d[1])
end
redis.call('SET', KEYS[1], batch[1])
return 1
"""

_CLAIM = """
-- KEYS: the outbox, the deliveries. ARGV: the id, now, the lease's end. The delivery's JSON if it was due (it is
-- then leased), else nil (another worker took it, or it was cancelled or delivered meanwhile).
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) > tonumber(ARGV[2]) then return false end
local body = redis.call('HGET', KEYS[2], ARGV[1])
if not body then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return false
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return body
"""

_RETRY = """
-- KEYS: the outbox, the deliveries. ARGV: the id, the next attempt's time, the delivery's new JSON. Only while it
-- is still in the outbox (not cancelled meanwhile).
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
"""


async def enqueue(redis: aioredis.Redis, game_id: str, expected: int, position: int,
                  deliveries: list[tuple[Delivery, float]], cancelled: list[str]) -> bool:
    """Adds ``deliveries`` (each with when it is due) and removes the ``cancelled`` ids, and sets the game's
    position to ``position``, if it is still ``expected``. Returns whether it was."""
    batch = (str(position), [(d.id, repr(at), encode(d).decode()) for d, at in deliveries], cancelled)
    partition = keys.partition(game_id)
    written = await redis.eval(_ENQUEUE, 3, keys.webhook_position(game_id), keys.webhook_outbox(partition),
                               keys.webhook_deliveries(partition), str(expected), _pack(batch))
    return bool(written)


async def due(redis: aioredis.Redis, now: float, limit: int) -> list[tuple[int, str]]:
    """Up to ``limit`` deliveries due at ``now``: (partition, delivery id), the first partitions first."""
    found: list[tuple[int, str]] = []
    for partition in keys.PARTITIONS:
        found += [(partition, m.decode()) for m in await redis.zrangebyscore(
            keys.webhook_outbox(partition), "-inf", repr(now), start=0, num=limit - len(found))]
        if len(found) >= limit:
            break
    return found


async def claim(redis: aioredis.Redis, partition: int, delivery: str, now: float, lease_s: float) -> Delivery | None:
    raw = await redis.eval(_CLAIM, 2, keys.webhook_outbox(partition), keys.webhook_deliveries(partition), delivery,
                           repr(now), repr(now + lease_s))
    return decode(raw) if raw else None


async def done(redis: aioredis.Redis, delivery: Delivery) -> None:
    partition = keys.partition(delivery.game_id)
    pipe = redis.pipeline(transaction=True)
    pipe.zrem(keys.webhook_outbox(partition), delivery.id)
    pipe.hdel(keys.webhook_deliveries(partition), delivery.id)
    await pipe.execute()


async def retry(redis: aioredis.Redis, delivery: Delivery, at: float) -> None:
    partition = keys.partition(delivery.game_id)
    await redis.eval(_RETRY, 2, keys.webhook_outbox(partition), keys.webhook_deliveries(partition), delivery.id,
                     repr(at), encode(delivery).decode())


async def dead(redis: aioredis.Redis, delivery: Delivery, reason: str, maxlen: int = 100_000) -> None:
    """Out of the outbox, into the dead letters (``souk webhooks --dead`` lists them), with why."""
    partition = keys.partition(delivery.game_id)
    pipe = redis.pipeline(transaction=True)
    pipe.zrem(keys.webhook_outbox(partition), delivery.id)
    pipe.hdel(keys.webhook_deliveries(partition), delivery.id)
    pipe.xadd(keys.webhook_dead(partition), {"d": encode(delivery), "reason": reason}, maxlen=maxlen, approximate=True)
    await pipe.execute()


async def dead_letters(redis: aioredis.Redis, count: int = 100) -> list[tuple[Delivery, str]]:
    """The latest dead letters (``count`` at most), newest first, from every partition."""
    entries = []
    for partition in keys.PARTITIONS:
        entries += await redis.xrevrange(keys.webhook_dead(partition), count=count)
    entries.sort(key=lambda e: tuple(map(int, e[0].split(b"-"))), reverse=True)
    return [(decode(fields[b"d"]), fields[b"reason"].decode()) for _, fields in entries[:count]]
