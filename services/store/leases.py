"""Partitions owned by one consumer at a time: the engines' leases on the partitions' command streams.

Engines that all read every partition's ``souk:{pN}:commands`` in one consumer group hand a game's next command to
any of them, whose cached game is then behind: its append conflicts, the game is reloaded and the command decided
again (``souk_engine_conflicts_total``). Two engines were slower than one (README, Redis Cluster). So a partition's
command stream is read by one engine at a time, its owner:

- **A lease per partition**, ``keys.lease(group, p)`` (in the partition's slot), holding the owner's consumer name:
  taken with ``SET NX PX``, renewed every third of ``lease_ms`` by a script that extends it only for its holder,
  released (deleted, again only by its holder) on a clean stop. An engine killed -9 renews nothing: its leases
  expire after ``lease_ms`` and the others take its partitions.
- **Live members**, ``keys.members(group)``: a sorted set of the consumers, scored by when their heartbeat expires
  (renewed with the leases). Each member aims at its share of the P partitions among the N live ones: P // N, one
  more for the first P mod N by name (at most ceil(P / N); the shares add up to P, so every partition finds an
  owner). A member above its share gives the surplus up at its reader's next read (after the batch in flight), one
  below takes free partitions: an engine started or stopped rebalances the others without stopping them.
- **A new owner takes the partition's pending entries first**: ``XAUTOCLAIM`` with no idle time moves every entry
  delivered to another consumer and not acknowledged (a dead owner's batch, one that raised) to it, and its reader
  reads them (``XREADGROUP`` from id 0) before any new entry. A game's commands are thus decided in the order they
  were queued, and each answered once; nothing waits for the reclaim's idle time.
- **A stale owner** (a process paused past its lease, then resumed) is fenced twice. Its reader stops reading a
  partition once its lease's validity, as this process last renewed it, has passed (``monotonic``: a pause shows).
  A batch it held across the pause may still be decided: its appends carry the expected version of its cached game
  (``services.store.events``' append script refuses a version that is not the stream's), so an append after the new
  owner's conflicts, is reloaded and decided again on the true game, and a command the new owner answered is
  answered as it was (its recorded outcome), never applied twice.

Projectors own the partitions' event streams the same way (a second ``Leases``: ``stream=keys.events``, group
``projector``; ``services.cli.workers``), dropping their cached games of a partition they take. A ``Leases`` with
``stream=None`` has no stream nor group behind its partitions: taking one is the lease alone (nothing to claim nor
to read first) and releasing one touches only the lease (meant for the clock workers' deadline indexes, #22).

With one engine, it owns every partition and reads them as before (one ``XREADGROUP`` on one Redis, a reader per
partition on a cluster); a lease renewal every ``lease_ms / 3`` is what it adds.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence

import redis.asyncio as aioredis
import structlog

from services.store import keys

log = structlog.get_logger("souk.leases")

_RENEW = """
-- Extends KEYS[1]'s lease for its holder ARGV[1] only (1), else nothing (0: lost, expired or taken).
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
_RELEASE = """
-- Deletes KEYS[1]'s lease if ARGV[1] holds it (1), else nothing (0).
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
CLAIM_COUNT = 1000  # pending entries moved per XAUTOCLAIM when a partition is taken


def share(members: Sequence[str], me: str, partitions: int) -> int:
    """How many of ``partitions`` ``me`` aims at among the live ``members`` (sorted): P // N, one more for the
    first P mod N; all of them while it does not see itself among them."""
    if me not in members:
        return partitions
    base, extra = divmod(partitions, len(members))
    return base + (members.index(me) < extra)


class Leases:
    """The partitions a consumer of ``group`` owns, kept by ``run`` (a task) and read by its stream readers
    (``reads``, ``caught_up``, ``retry``; ``services.store.streams.lean_reads``)."""

    def __init__(self, redis: aioredis.Redis, group: str, consumer: str, lease_ms: int = 5000,
                 stream: Callable[[int], str] | None = keys.commands, on_take: Callable[[int], None] | None = None) -> None:
        self.redis, self.group, self.consumer, self.lease_ms = redis, group, consumer, lease_ms
        # A partition's stream, which its owner reads in ``group``; None: no stream nor group (a clock's
        # partition is only the deadline index its owner polls), so taking and releasing touch only the lease.
        self.stream = stream
        self.on_take = on_take  # called with a partition taken (the engine forgets its cached games there)
        self.owned: dict[int, float] = {}  # partition -> monotonic instant its lease is valid until
        self.catching_up: set[int] = set()  # owned partitions whose pending entries are read first (from id 0)
        self.surplus: set[int] = set()  # owned partitions to give up at their reader's next read
        self._streams = {stream(p): p for p in keys.PARTITIONS} if stream is not None else {}
        self.running: asyncio.Task | None = None  # the rounds, once started

    # --- the readers' side -----------------------------------------------------------------------------------

    async def reads(self, streams: Sequence[str]) -> list[tuple[str, str]]:
        """Which of ``streams`` (a reader's) to read now, each with its read id: ``0`` (this consumer's pending
        entries) for a partition just taken or whose batch raised, else ``>``. The reader calls it between its
        batches, so the surplus among them is given up here, no batch of theirs in flight."""
        now = time.monotonic()
        out = []
        for stream in streams:
            p = self._streams[stream]
            if p in self.surplus:
                await self.release(p)
            elif self.owned.get(p, 0.0) > now:  # a lease this process renewed in time (not across a pause)
                out.append((stream, "0" if p in self.catching_up else ">"))
        return out

    def caught_up(self, stream: str) -> None:
        """The reader found no pending entry of its own left on ``stream``: new entries from now on."""
        self.catching_up.discard(self._streams[stream])

    def retry(self, stream: str) -> None:
        """A batch of ``stream`` raised and stays pending, or a read of it failed (Redis may have delivered a batch
        whose answer was lost): read again (from id 0) before anything newer, so that its commands keep their place
        (the owner's reclaim: no other consumer may take them while it lives)."""
        self.catching_up.add(self._streams[stream])

    async def held(self) -> list[int]:
        """For a consumer with no stream (the clock workers, ``stream=None``), between two of its passes: the
        surplus given up (it has nothing in flight now), then the partitions to work on, those whose lease this
        process renewed in time (not across a pause), in order."""
        for p in list(self.surplus):
            await self.release(p)
        now = time.monotonic()
        return sorted(p for p, valid_until in self.owned.items() if valid_until > now)

    # --- the leases --------------------------------------------------------------------------------------------

    async def start(self) -> None:
        """A first round (a lone engine owns every partition before it reads), then the rounds every third of
        the lease."""
        await self.tick()
        self.running = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.lease_ms / 3000)
            try:
                await self.tick()
            except Exception as exc:  # noqa: BLE001 - a store away now: the leases not renewed in time lapse
                log.warning("lease_round_failed", group=self.group, error=f"{type(exc).__name__}: {exc}")

    async def tick(self) -> None:
        """One round: the heartbeat, the owned leases renewed (a lost one dropped at once), the share worked out
        from the live members, the surplus marked, free partitions taken up to the share."""
        started = time.monotonic()
        members = await self._heartbeat()
        for p in list(self.owned):
            if await self.redis.eval(_RENEW, 1, keys.lease(self.group, p), self.consumer, self.lease_ms):
                self.owned[p] = started + self.lease_ms / 1000
            else:
                log.warning("partition_lost", group=self.group, partition=p, consumer=self.consumer)
                self._drop(p)
        wanted = share(members, self.consumer, len(keys.PARTITIONS))
        keep = sorted(self.owned)[:wanted]
        self.surplus = set(self.owned) - set(keep)
        if len(self.owned) >= wanted:
            return
        count = len(keys.PARTITIONS)
        first = members.index(self.consumer) * count // max(1, len(members)) if self.consumer in members else 0
        for p in [(first + i) % count for i in range(count)]:
            if len(self.owned) >= wanted:
                break
            if p not in self.owned and await self._take(p):
                self.owned[p] = started + self.lease_ms / 1000

    async def _heartbeat(self) -> list[str]:
        """This member's heartbeat, those expired removed, the live members by name."""
        now_ms = int(time.time() * 1000)
        pipe = self.redis.pipeline(transaction=False)
        pipe.zadd(keys.members(self.group), {self.consumer: now_ms + self.lease_ms})
        pipe.zremrangebyscore(keys.members(self.group), "-inf", now_ms)
        pipe.zrangebyscore(keys.members(self.group), now_ms, "+inf")
        *_, live = await pipe.execute()
        return sorted(m.decode() if isinstance(m, bytes) else m for m in live)

    async def _take(self, p: int) -> bool:
        """The lease of partition ``p`` if nobody holds it (or this consumer still does), then every entry pending
        in the group on its stream moved to this consumer, to be read first (with no stream: the lease alone)."""
        lease = keys.lease(self.group, p)
        taken = await self.redis.set(lease, self.consumer, nx=True, px=self.lease_ms)
        if not taken and not await self.redis.eval(_RENEW, 1, lease, self.consumer, self.lease_ms):
            return False
        claimed = 0
        if self.stream is not None:  # None: nothing to claim nor to read first, the lease is the partition
            stream, start = self.stream(p), "0-0"
            while True:
                reply = await self.redis.xautoclaim(stream, self.group, self.consumer, 0, start, count=CLAIM_COUNT)
                start, claimed = reply[0], claimed + len(reply[1])
                if start in (b"0-0", "0-0"):
                    break
            self.catching_up.add(p)
        if self.on_take is not None:
            self.on_take(p)
        log.info("partition_taken", group=self.group, partition=p, consumer=self.consumer, pending_claimed=claimed)
        return True

    def _drop(self, p: int) -> None:
        self.owned.pop(p, None)
        self.catching_up.discard(p)
        self.surplus.discard(p)

    async def release(self, p: int) -> None:
        """Gives partition ``p`` up (its lease deleted if still this consumer's): another member takes it. This
        consumer leaves the partition's group too when it holds nothing there (its reader does not read the stream
        any more: /health would warn of an idle consumer); one still holding entries stays, for the next owner to
        take them (removing it would drop them from the group)."""
        self._drop(p)
        await self.redis.eval(_RELEASE, 1, keys.lease(self.group, p), self.consumer)
        if self.stream is None:
            log.info("partition_released", group=self.group, partition=p, consumer=self.consumer)
            return
        stream = self.stream(p)
        if not await self.redis.xpending_range(stream, self.group, "-", "+", 1, consumername=self.consumer):
            await self.redis.xgroup_delconsumer(stream, self.group, self.consumer)
        log.info("partition_released", group=self.group, partition=p, consumer=self.consumer)

    async def stop(self) -> None:
        """A clean stop (after the readers stopped): every lease released and the heartbeat removed, so the other
        members take the partitions at once rather than after the leases' expiry."""
        if self.running is not None:
            self.running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.running
            self.running = None
        for p in list(self.owned):
            await self.release(p)
        await self.redis.zrem(keys.members(self.group), self.consumer)
