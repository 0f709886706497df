"""FastStream plumbing shared by the engine and the projector.

- ``ensure_group`` creates a consumer group at ``0`` (FastStream would create it at ``$`` and miss every
  entry written before it existed).
- ``raw_parser`` / ``raw_decoder`` hand a batch handler the stream entries as Redis returned them
  (``list[dict[bytes, bytes]]``): FastStream's own JSON passes are skipped, msgspec decodes the fields.
- ``batch_subscription`` subscribes a batch handler on the same group of one or several streams (the partitions'):
  one reader for new entries (with several streams, one XREADGROUP over them all, a batch per stream), and for each
  stream one that reclaims entries left pending by a consumer that died (XAUTOCLAIM after ``reclaim_idle_ms``).
- ``consumer_groups`` / ``stream_backlog``: each group's backlog on a stream (for the health endpoint and the CLI).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import redis.asyncio as aioredis
import structlog
from faststream import AckPolicy
from faststream.redis import RedisBroker, RedisClusterBroker, StreamSub
from faststream.redis.subscriber.usecases import stream_subscriber
from redis.exceptions import ResponseError

from services.store.leases import Leases
from services.store.refusals import refusal
from services.store.resp import Resp

log = structlog.get_logger("souk.streams")

Entries = list[dict[bytes, bytes]]


class IdentifiedEntries(list):
    """A batch of one stream's entries with their ids, ``(entry id, fields)``, and the stream's name (``stream``):
    a reader of several streams gets a batch of each, and acknowledges each in its own stream."""

    __slots__ = ("stream",)

    def __init__(self, entries=(), stream: str = "") -> None:
        super().__init__(entries)
        self.stream = stream


# After a failed read (Redis restarting, a network cut) FastStream waits a fixed 5 s before reading again, so a
# worker came back 5-10 s after its Redis did (issue #8 item 11). FastStream 0.7 has no setting for it; the
# subscriber reads this module global at each failure. 0.2 s: back within a fraction of a second, and at most five
# logged read errors a second per subscriber while Redis is away.
READ_RETRY_S = 0.2
stream_subscriber.CONSUME_ERROR_BACKOFF_SECONDS = READ_RETRY_S


def _stream_sub(subscriber: Any) -> StreamSub:
    """FastStream's ``stream_sub`` (the subscription with the broker's prefix), made once per prefix: FastStream
    deep-copies it at each access, twice a batch (the read and the log context), 22 µs each (measured on the
    project's machine). The same value; nothing in FastStream changes the subscription it returns."""
    prefix = subscriber._outer_config.prefix
    base = subscriber._stream_sub
    made = subscriber.__dict__.get("_souk_stream_sub")
    if made is None or made[0] != prefix or made[1] is not base:
        made = subscriber.__dict__["_souk_stream_sub"] = (prefix, base, base.add_prefix(prefix))
    return made[2]


stream_subscriber._StreamHandlerMixin.stream_sub = property(_stream_sub)


async def ensure_group(redis: aioredis.Redis, stream: str, group: str) -> None:
    try:
        await redis.xgroup_create(stream, group, id="0", mkstream=True)
    except ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise


def _text(value: Any) -> Any:
    return value.decode() if isinstance(value, bytes) else value


async def consumer_groups(redis: aioredis.Redis, stream: str) -> dict[str, dict[str, Any]]:
    """Group name -> ``pending`` (delivered, not yet acknowledged), ``lag`` (not yet delivered: Redis 7 and
    later, None before or when Redis cannot tell), ``last_delivered_id`` and ``consumers``. Empty when the stream
    does not exist yet."""
    try:
        groups = await redis.xinfo_groups(stream)
    except ResponseError:  # no such stream yet
        return {}
    return {_text(g["name"]): {"pending": g["pending"], "lag": g.get("lag"),
                               "last_delivered_id": _text(g["last-delivered-id"]), "consumers": g["consumers"]}
            for g in groups}


async def stream_backlog(redis: aioredis.Redis, stream: str) -> dict[str, Any]:
    """A stream's length and last entry id, and its consumer groups (``consumer_groups``): a group whose
    ``last_delivered_id`` trails ``last_id`` has entries still to read."""
    try:
        info = await redis.xinfo_stream(stream)
    except ResponseError:  # no such stream yet
        return {"length": 0, "last_id": None, "groups": {}}
    return {"length": info["length"], "last_id": _text(info["last-generated-id"]),
            "groups": await consumer_groups(redis, stream)}


async def raw_parser(message: Any, original: Callable[[Any], Awaitable[Any]]) -> Any:
    lean = dict(message)
    lean["data"] = []
    parsed = await original(lean)
    parsed.raw_message = message  # keeps message_ids for the XACK
    return parsed


async def raw_decoder(message: Any, original: Callable[[Any], Awaitable[Any]]) -> Entries:
    return message.raw_message["data"]


async def raw_decoder_with_ids(message: Any, original: Callable[[Any], Awaitable[Any]]) -> IdentifiedEntries:
    """The entries with their stream ids (the engine orders a seat's commands by them), and their stream."""
    raw = message.raw_message
    return IdentifiedEntries(zip(raw["message_ids"], raw["data"]), raw["channel"])


def batch_subscription(
    broker: RedisBroker,
    streams: str | Sequence[str],
    group: str,
    consumer: str,
    handler: Callable[[Any], Awaitable[None]],
    max_records: int = 500,
    reclaim_idle_ms: int = 30_000,
    title: str | None = None,
    description: str | None = None,
    with_ids: bool = False,
    acknowledges: bool = False,
    lean: Resp | Callable[[], Resp] | None = None,
    leases: Leases | None = None,
) -> None:
    """``handler`` takes the ``Entries``, or with ``with_ids`` the ``IdentifiedEntries``. FastStream acknowledges
    a batch whose handler returned (XACK, one more round trip), unless ``acknowledges``: the handler then
    acknowledges what it has done itself (the engine in its append script, the projector with the store's lean
    connection), and FastStream's acknowledgement middleware is not in the way (``AckPolicy.MANUAL``). Either way a
    batch whose handler raised stays pending (reclaimed after ``reclaim_idle_ms``). ``lean``: a connection of the
    reader's own on which it sends its XREADGROUP (``lean_reads``), or a function that makes one; it is needed to
    read several ``streams`` (FastStream's reader reads one). With ``lean`` and ``acknowledges`` (the engine, the
    projector), the reader hands each batch to ``handler`` straight from its read (``lean_reads``' ``deliver``):
    FastStream's per-message processing has nothing to do for a handler that takes the entries as read and
    acknowledges them itself.

    On a Redis Cluster (FastStream's ``RedisClusterBroker``) one XREADGROUP may only name streams of one slot, and
    each partition's stream has a slot of its own: a reader per stream, each on a lean connection of its own
    (``lean`` must then be a function; ``ClusterResp`` sends each read to its stream's primary).

    ``leases`` (the engine's: ``services.store.leases``): each reader reads only the streams of the partitions this
    consumer owns, a partition's pending entries first when it was just taken; there is no reclaimer (a new owner
    takes the pending entries of the others at once, and an owner reads its own again after a batch that raised or a
    read that failed: no other consumer may take a partition's commands while its owner lives). Needs ``lean`` and
    ``acknowledges``."""
    streams = (streams,) if isinstance(streams, str) else tuple(streams)
    if len(streams) > 1 and lean is None:
        raise ValueError("a reader of several streams reads them on a lean connection: pass lean")
    common = dict(parser=raw_parser, decoder=raw_decoder_with_ids if with_ids else raw_decoder,
                  ack_policy=AckPolicy.MANUAL if acknowledges else AckPolicy.REJECT_ON_ERROR)
    on_cluster = isinstance(broker, RedisClusterBroker)
    if on_cluster and len(streams) > 1 and not callable(lean):
        raise ValueError("on a cluster, a reader of several streams needs a lean connection per stream: "
                         "pass lean as a function that makes one")
    if leases is not None and (lean is None or not acknowledges):
        raise ValueError("a reader of owned partitions reads on a lean connection and acknowledges its entries")
    groups = [(each,) for each in streams] if on_cluster else [streams]
    for i, read in enumerate(groups):
        reader = broker.subscriber(
            stream=StreamSub(read[0], group=group, consumer=consumer, batch=True, max_records=max_records,
                             polling_interval=100),
            title=title if i == 0 else f"{title or streams[0]}-{read[0]}", description=description,
            include_in_schema=i == 0, **common,
        )
        reader(handler)
        if lean is not None:
            lean_reads(reader, lean() if callable(lean) else lean, read, deliver=handler if acknowledges else None,
                       with_ids=with_ids, leases=leases)
        _start_when_redis_answers(reader, read[0])
    stream = streams[0]
    for each in streams if leases is None else ():
        reclaimer = broker.subscriber(
            stream=StreamSub(each, group=group, consumer=f"{consumer}-reclaim", batch=True,
                             min_idle_time=reclaim_idle_ms, polling_interval=1000),
            title=f"{title or stream}-reclaim" + (f"-{each}" if len(streams) > 1 else ""), include_in_schema=False,
            **common,
        )
        reclaimer(handler)
        _start_when_redis_answers(reclaimer, each)


def lean_reads(subscriber: Any, lean: Resp, streams: Sequence[str] = (),
               deliver: Callable[[Any], Awaitable[None]] | None = None, with_ids: bool = False,
               leases: Leases | None = None) -> None:
    """The subscriber's XREADGROUP sent on ``lean`` (``services.store.resp``: hiredis packs it and parses the
    reply) instead of redis-py's client (its connection pool, retry wrapper and response callbacks), the reply
    given to FastStream as redis-py gives it (``[(stream, [(id, {field: value})])]``). The rest of the loop is
    FastStream's: the subscriber, its errors and their backoff (a lost connection fails the read; the next one
    reconnects), the reclaimer. ``lean`` must be the reader's alone: a blocking read holds its connection.
    ``streams``: the streams it reads in one XREADGROUP (default: the subscriber's one); FastStream hands the
    handler a batch of each stream that had entries (``IdentifiedEntries.stream`` names it).

    ``deliver``: the subscriber's handler, for a reader whose handler acknowledges its entries itself. Each stream's
    batch then goes to it straight from the read (``IdentifiedEntries`` with ``with_ids``, else the entries' fields),
    not through FastStream's per-message processing: its context scopes, middlewares, parser and decoder, call
    wrappers and response, which cost about a third of the engine's and the projector's CPU a batch when batches
    are small (docs/performance-changes.md section 9) and do nothing for such a handler (no acknowledgement, no
    dependency injection, no publishing). What FastStream did with a handler's exception is done here: it is logged
    as FastStream logged it (``{type}: {message}``, ERROR, with the exception, on the broker's logger) and the batch
    stays pending; the loop around the read (its retries and backoff, its start and stop) is FastStream's.

    ``leases`` (with ``deliver``): each read names only the owned partitions' streams, each with the read id
    ``Leases.reads`` gives (``0`` to read this consumer's pending entries first); a reader that owns none of its
    streams waits a polling interval. A batch that raised is read again next (``Leases.retry``), and so are the
    pending entries after a read that failed: Redis may have delivered a batch whose answer never came."""
    names = tuple(streams) or (subscriber.stream_sub.name,)

    def command(count: int | None, block: int | None, noack: bool,
                reads: Sequence[tuple[str, str]] | None = None) -> list[Any]:
        sub = subscriber.stream_sub
        args: list[Any] = ["XREADGROUP", "GROUP", sub.group, sub.consumer]
        if count:
            args += ("COUNT", count)
        if block is not None:
            args += ("BLOCK", block)
        if noack:
            args.append("NOACK")
        reads = reads if reads is not None else [(name, subscriber.read_id) for name in names]
        return [*args, "STREAMS", *[name for name, _ in reads], *[read_id for _, read_id in reads]]

    async def read(*args: Any) -> Any:
        """The XREADGROUP, or nothing (an empty read) when a blocked read ended because a stream it waited on left
        this node: a slot moved to another primary (``redis-cli --cluster reshard``: its keys MIGRATEd away) ends a
        blocked read with ``UNBLOCKED the stream key no longer exists``. Nothing was delivered; the next read,
        at once, follows the key to its new node (``ASK``, then ``MOVED``). Raised, it went to FastStream's
        supervisor, which logged an error with its traceback for a normal move and restarted the loop."""
        try:
            return await lean.call(*args)
        except ResponseError as exc:
            if str(exc).startswith("UNBLOCKED"):
                log.info("read_unblocked", error=str(exc)[:200])
                return None
            raise

    async def xreadgroup(*, count: int | None, block: int | None, noack: bool = False) -> Any:
        reply = await read(*command(count, block, noack))
        if not reply:
            return ()
        return [(name, [(entry, dict(zip(fields[::2], fields[1::2])) if fields else {})
                        for entry, fields in entries]) for name, entries in reply]

    subscriber._xreadgroup = xreadgroup
    if deliver is None:
        return

    async def get_msgs(_read: Any) -> None:
        sub = subscriber.stream_sub
        reads = None
        if leases is not None:
            reads = await leases.reads(names)
            if not reads:
                await asyncio.sleep(sub.polling_interval / 1000)
                return
        try:
            reply = await read(*command(sub.max_records, sub.polling_interval, sub.no_ack, reads))
        except Exception:
            # Redis may have delivered the batch before its answer was lost (killed after its fsync, a connection
            # cut): its entries are pending for this consumer and a read of new entries never gives them again.
            # The owner reads its pending ones first (nobody else takes them while it keeps its lease).
            for name, _ in reads or ():
                leases.retry(name)
            raise
        if reply is None:  # unblocked: nothing read, nothing to say of what is pending (read again at once)
            return
        if reads is not None:
            delivered = {name.decode() for name, entries in reply or () if entries}
            for name, read_id in reads:
                if read_id == "0" and name not in delivered:  # no pending entry of this consumer left there
                    leases.caught_up(name)
        for name, entries in reply or ():
            if not entries or not subscriber.running:
                continue
            if with_ids:
                batch: Any = IdentifiedEntries([(entry, dict(zip(fields[::2], fields[1::2])) if fields else {})
                                                for entry, fields in entries], name.decode())
            else:
                batch = [dict(zip(fields[::2], fields[1::2])) if fields else {} for _, fields in entries]
            try:
                await deliver(batch)
            except Exception as exc:  # noqa: BLE001 - logged; the batch stays pending for the reclaimer
                if leases is not None:  # ... or for this reader, the partition's owner, at once
                    leases.retry(name.decode())
                subscriber._log(log_level=logging.ERROR, message=f"{type(exc).__name__}: {exc}", exc_info=exc,
                                extra={"channel": name.decode(), "message_id": entries[0][0].decode()})

    subscriber._get_msgs = get_msgs


START_RETRY_MAX_S = 2.0


async def when_redis_answers(call: Callable[[], Awaitable[Any]], what: str) -> Any:
    """``call()``, tried again with a backoff (50 ms, doubling to ``START_RETRY_MAX_S``) while Redis does not answer
    (restarting, a connection reset) or refuses (``services.store.refusals``: loading its data, out of memory, a
    read-only replica...): for a worker's start-up, where FastStream raised and the worker exited. (An engine
    restarted while its store was out of memory exited 1 on creating its groups: souk chaos counted a crash.)"""
    delay = 0.05
    while True:
        try:
            return await call()
        except Exception as exc:
            if refusal(exc) is None and not isinstance(exc, OSError):
                raise
            log.warning("start_retry", what=what, error=str(exc), retry_in_s=delay)
            await asyncio.sleep(delay)
            delay = min(2 * delay, START_RETRY_MAX_S)


def _start_when_redis_answers(subscriber: Any, stream: str) -> None:
    """A subscriber's start creates its group (one Redis call) before it starts its read task. When Redis is away
    then (a worker started while its Redis restarts: souk chaos kills both), FastStream's start raised and the
    worker exited with a traceback. The start is tried again until Redis answers (``when_redis_answers``): nothing
    was started by the failed attempt. (A Redis that never answers at all is an operator's mistake: `souk` checks
    its stores and says so in one line before it starts a worker.)"""
    start = subscriber.start

    async def start_when_redis_answers() -> None:
        await when_redis_answers(start, f"subscriber of {stream}")

    subscriber.start = start_when_redis_answers


async def trim_acknowledged(redis: aioredis.Redis, stream: str, group: str) -> int:
    """Removes the entries every reader is done with: those before the group's oldest pending entry, or up to its
    last delivered entry when nothing is pending. Only for a stream read by this one group (``souk:commands``:
    a command's outcome is recorded in the event store before its entry is acknowledged). Returns how many went."""
    groups = await consumer_groups(redis, stream)
    if set(groups) != {group}:
        return 0
    summary = await redis.xpending(stream, group)
    floor = _text(summary["min"]) if summary["pending"] else groups[group]["last_delivered_id"]
    if not floor or floor == "0-0":
        return 0
    return await redis.xtrim(stream, minid=floor, approximate=False)


async def drop_stale_consumers(redis: aioredis.Redis, stream: str, idle_ms: int) -> list[str]:
    """Removes the consumers of every group on ``stream`` that hold no pending entry and have not read for
    ``idle_ms`` (those of processes that stopped or restarted under a new name). A consumer that still holds
    entries is kept: removing it would drop them from the group's pending list, and nobody would reclaim them."""
    dropped = []
    for c in await idle_consumers(redis, stream, idle_ms):
        if c["pending"] == 0:
            await redis.xgroup_delconsumer(stream, c["group"], c["consumer"])
            dropped.append(f"{c['group']}/{c['consumer']}")
    return dropped


def idle_ms(consumer: dict[str, Any]) -> int:
    """How long a consumer (an XINFO CONSUMERS entry) has not read: ``inactive`` on Redis 7.2+, else ``idle``."""
    idle = consumer.get("inactive")
    return consumer.get("idle", 0) if idle is None or idle < 0 else idle


async def idle_consumers(redis: aioredis.Redis, stream: str, idle_ms_at_least: int) -> list[dict[str, Any]]:
    """The consumers that have not read for ``idle_ms_at_least``: a worker that stopped reading, or one that is
    gone."""
    out = []
    for group in await consumer_groups(redis, stream):
        for consumer in await redis.xinfo_consumers(stream, group):
            idle = idle_ms(consumer)
            if idle >= idle_ms_at_least:
                out.append({"group": group, "consumer": _text(consumer["name"]), "idle_ms": idle,
                            "pending": consumer["pending"]})
    return out


_TRIM_READ = """
-- Trims KEYS[1] below what every consumer group is done with, atomically: for each group, its oldest pending
-- entry (delivered, not yet acknowledged) or, with nothing pending, its last delivered entry. No group: nothing.
local groups = redis.call('XINFO', 'GROUPS', KEYS[1])
if #groups == 0 then return 0 end
local floor_ms, floor_seq, floor = nil, nil, nil
for i = 1, #groups do
  local g = {}
  for j = 1, #groups[i], 2 do g[groups[i][j]] = groups[i][j + 1] end
  local id = g['last-delivered-id']
  if g['pending'] > 0 then id = redis.call('XPENDING', KEYS[1], g['name'])[2] end
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  ms, seq = tonumber(ms), tonumber(seq)
  if floor == nil or ms < floor_ms or (ms == floor_ms and seq < floor_seq) then
    floor_ms, floor_seq, floor = ms, seq, id
  end
end
if floor == '0-0' then return 0 end
return redis.call('XTRIM', KEYS[1], 'MINID', floor)
"""


async def trim_read(redis: aioredis.Redis, stream: str) -> int:
    """Removes the entries of ``stream`` that every consumer group has read and acknowledged: those before the
    oldest entry any group still holds pending, and up to the last one a group was delivered when it holds
    nothing (``souk:events``: every projector partition reads it through its own group). Nothing goes while a
    group has not read an entry, and nothing at all when no group exists. Returns how many went."""
    return int(await redis.eval(_TRIM_READ, 1, stream))
