"""The event store: one Redis stream per game, appended atomically with an expected version.

``append`` takes a batch and runs one Lua script over it, atomically; each append in it stands alone and answers
``duplicate`` (with the first outcome) for a command key seen before, ``conflict`` (with the current version)
for a stale writer, or ``ok``. On ``ok`` the events are in the game's stream *and* in its partition's events
stream that projectors consume (``keys.events``), and the command's outcome is recorded for idempotency, in one step.

An append with no events records only its outcome (a refused command), under the same guards, so a refusal
decided on a stale state conflicts instead of being recorded.

An accepted command's append may carry its seat and its command stream entry id: on ``ok`` the id is recorded
as the seat's newest applied command (``keys.order``; the engine refuses the seat's commands received before it).

An accepted append with events also writes the game's next deadline (``Append.next_due``) into the deadline index
(``keys.game_deadlines``: ZADD), or takes the game out of it (None: no clock, or the game is over: ZREM), in the same
step: the clock worker never sees a deadline of a state that was not stored, nor misses one that was.

An append may name a pub/sub channel: the script publishes the recorded outcome there (the engine's answer to
the sender costs no extra round trip).

A batch may name a consumer group and, by append, the stream entry the append answers (``Acks``: the engine's
entries of its games' partitions' command streams): the script acknowledges (XACK) the entries of the appends
whose outcome it recorded (ok) or found recorded (duplicate), in the same step. An entry is thus acknowledged exactly when its
command is answered for good, never before, and a conflicted one stays pending (decided again, or reclaimed);
the engine's batch needs no XACK of its own.

``InMemoryEventStore`` has the same contract (tests/services/test_store_contract.py runs against both).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec
import redis.asyncio as aioredis
import structlog
from redis.exceptions import NoScriptError

from contracts.envelope import GENESIS_HASH, EventEnvelope
from services.store import keys
from services.store.codec import command_fields, entry_hash, event_envelope_decoder, stored_envelopes, stored_forms
from services.store.resp import ClusterResp, Resp
from services.store.streams import trim_read

OK, CONFLICT, DUPLICATE = "ok", "conflict", "duplicate"
# On a Redis Cluster, how long an append's answers wait for a replica to confirm its writes (then they go, logged)
REPLICA_WAIT_MS = 1000
log = structlog.get_logger("souk.store")



class Append(msgspec.Struct, frozen=True):
    """One command's append: its events (encoded envelopes) and the outcome recorded for its command key.

    A frozen msgspec Struct, as the other per-command records: a frozen dataclass's ``__init__`` sets each of these
    thirteen fields through ``object.__setattr__``, 31 µs an append against 1.8 for the Struct (timeit, load 15:
    docs/performance-changes.md section 10)."""

    game_id: str
    game: str
    expected_version: int
    envelopes: Sequence[bytes]
    command_key: str = ""
    outcome: bytes = b""
    prev_hash: str = GENESIS_HASH  # the chain head the events were decided on
    head: str = GENESIS_HASH  # the chain head after them
    notify: str = ""  # a pub/sub channel that gets the outcome (ok) or the first outcome (duplicate)
    final: bool = False  # the events end the game: the outcomes of its accepted commands may go (the stream has them)
    stored: Sequence[bytes] = ()  # the events' game stream forms (codec.stored_forms), when the caller has them
    seat_entry: tuple[int, str] | None = None  # (seat, command stream entry id): on ok, the seat's newest applied
    # On ok with events: the instant the game's next deadline falls due (``domain.table.next_due``), written into
    # the game's deadline index (``keys.game_deadlines``) in the same step; None: the game leaves it (no clock, or
    # over).
    next_due: float | None = None


class Acks(msgspec.Struct, frozen=True):
    """The stream entries a batch of appends answers: ``ids[i]`` (``""``: none) is acknowledged in ``group`` of
    the stream of its game's partition (``streams``: the partitions' command streams, where the gateway queues a
    game's commands) when the ``i``-th append is ok or duplicate."""

    group: str
    ids: Sequence[str]
    streams: Callable[[int], str] = keys.commands


class AppendResult(msgspec.Struct, frozen=True):
    status: str  # ok / conflict / duplicate
    version: int = 0  # ok: the new version; conflict: the current version
    outcome: bytes = b""  # duplicate: the outcome recorded the first time


class EventStore(Protocol):
    async def append(self, appends: Sequence[Append], acks: Acks | None = None) -> list[AppendResult]:
        """Apply each append atomically and in order (a batch is pipelined; each append stands alone); with
        ``acks``, acknowledge the entries of those that are ok or duplicate, in the same step."""

    async def acknowledge(self, stream: str, group: str, ids: Sequence[str]) -> None:
        """XACK: entries answered without an append (a command that could not be read, a game that could not)."""

    async def read(self, game_id: str, after: int = 0) -> list[EventEnvelope]:
        """The game's events with seq > after, in order."""

    async def read_with_commands(self, game_id: str) -> tuple[list[EventEnvelope], dict[int, Any]]:
        """The game's events, and its accepted commands' stored bodies by the seq of their first event."""

    async def read_after(self, game_id: str, version: int, head: str, game: str) -> list[EventEnvelope] | None:
        """The game's events with seq > ``version``, read from there on (a snapshot's tail): None when the event at
        ``version`` does not have the hash ``head`` or the next one does not begin a command (not this stream's
        position). ``game``: the game's name."""

    async def version(self, game_id: str) -> int: ...

    async def outcome(self, game_id: str, command_key: str) -> bytes | None: ...

    async def order(self, game_id: str) -> dict[int, str]:
        """By seat, the command stream entry id of its newest applied command (those appended with one)."""

    def game_ids(self) -> AsyncIterator[str]:
        """Every game ever created, in no particular order."""

    async def deadline(self, game_id: str) -> float | None:
        """When the game's next deadline falls due (the deadline index), None: it has none."""


_APPEND = """
-- A batch of appends of one partition's games, each standing alone, in order. KEYS: the partition's games index,
-- events stream, refusals and deadline index, the stream whose entries are acknowledged (the partition's commands),
-- then five by append: the game's stream, outcomes, head, order and outcome order (every key in the partition's
-- slot: ``keys``). ARGV[1]: MessagePack of [maxlen, now, appends, the refusals' lifetime, the outcome window,
-- acks]; an append is [expected version, command key, outcome, game id, game, prev hash, new head, notify channel,
-- events, the ARGV index of its first stored form, final, seat, its command's entry id ('': none), next due ('':
-- none)].
-- One packed argument instead of many: packing and parsing a batch's arguments one by one was a tenth of a
-- worker's time (measured in the projector). ``events`` are the whole JSON envelopes (for the events stream); the
-- game stream gets their stored forms (services/store/codec.py), which are binary: they follow as ARGV[2...]
-- (Redis's Lua MessagePack reads no binary type).
-- ``final``: these events end the game; the outcomes of its accepted commands go (the engine answers a resent
-- one from the stream), but this command's own and the refusals (forgotten in their time) stay; the seats'
-- order goes (a finished game applies no more commands).
-- An accepted outcome is kept among the game's latest ``window`` (batch[5]; 0: all): its key goes to the end of the
-- outcome order list, and the oldest key beyond the window leaves the list and the outcomes (the engine answers a
-- resend of that command from the game stream).
-- batch[6]: '' or [group, entry ids by append ('': none)]: the entries of the appends that are ok or duplicate are
-- acknowledged (XACK) in that group of KEYS[5], at the end, with one call (a thousand entries a call).
local batch = cmsgpack.unpack(ARGV[1])
local maxlen, now, refusal_ttl, window, acks = batch[1], batch[2], batch[4], batch[5], batch[6]
local games, all, refusals, deadlines = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local acked, ack_ids = {}, {}
if acks ~= '' then ack_ids = acks[2] end
local results = {}
for a = 1, #batch[3] do
  local expected, ckey, outcome, game_id, game, prev, head, notify, events, first, final, seat, entry, due =
    unpack(batch[3][a])
  local k = 5 + 5 * (a - 1)
  local stream, outcomes, headkey, orderkey, outcome_order = KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4],
    KEYS[k + 5]
  local n = #events
  local seen = false
  if ckey ~= '' then seen = redis.call('HGET', outcomes, ckey) end
  if seen then
    if notify ~= '' then redis.call('PUBLISH', notify, seen) end
    results[#results + 1] = {'duplicate', seen}
    if ack_ids[a] and ack_ids[a] ~= '' then acked[#acked + 1] = ack_ids[a] end
  else
    local len = redis.call('XLEN', stream)
    if len ~= expected or (redis.call('GET', headkey) or '%s') ~= prev then
      results[#results + 1] = {'conflict', tostring(len)}
    else
      if expected == 0 and n > 0 then redis.call('ZADD', games, 'NX', now, game_id) end
      for j = 1, n do
        redis.call('XADD', stream, string.format('%%d-0', expected + j), 'e', ARGV[first + j - 1])
        redis.call('XADD', all, 'MAXLEN', '~', maxlen, '*', 'g', game_id, 'k', game, 'e', events[j])
      end
      if n > 0 then
        redis.call('SET', headkey, head)
        -- the game's next deadline, of the state these events leave (the clock worker's trigger)
        if due ~= '' then redis.call('ZADD', deadlines, due, game_id) else redis.call('ZREM', deadlines, game_id) end
      end
      if entry ~= '' then redis.call('HSET', orderkey, seat, entry) end
      if ckey ~= '' then
        redis.call('HSET', outcomes, ckey, outcome)
        -- a refusal is remembered for a while (upkeep forgets it then); an acceptance while among the latest
        if n == 0 then redis.call('ZADD', refusals, tonumber(now) + refusal_ttl, game_id .. '\\n' .. ckey) end
        if n > 0 and window > 0 and final ~= 1 then
          if redis.call('RPUSH', outcome_order, ckey) > window then
            redis.call('HDEL', outcomes, redis.call('LPOP', outcome_order))
          end
        end
      end
      if final == 1 then  -- written again, not deleted from: a hash that grew big does not shrink by itself
        local recorded, kept = redis.call('HGETALL', outcomes), {}
        for i = 1, #recorded, 2 do
          if recorded[i] == ckey or not string.find(recorded[i + 1], '"status":"accepted"', 1, true) then
            kept[#kept + 1] = recorded[i]
            kept[#kept + 1] = recorded[i + 1]
          end
        end
        redis.call('DEL', outcomes, outcome_order)
        if #kept > 0 then redis.call('HSET', outcomes, unpack(kept)) end
        redis.call('DEL', orderkey)  -- a finished game applies no more commands
      end
      if notify ~= '' then redis.call('PUBLISH', notify, outcome) end
      results[#results + 1] = {'ok', tostring(expected + n)}
      if ack_ids[a] and ack_ids[a] ~= '' then acked[#acked + 1] = ack_ids[a] end
    end
  end
end
for i = 1, #acked, 1000 do  -- unpack takes a few thousand values at most: a big batch is acknowledged in parts
  redis.call('XACK', KEYS[5], acks[1], unpack(acked, i, math.min(i + 999, #acked)))
end
return results
""" % GENESIS_HASH
_pack = msgspec.msgpack.Encoder().encode


class RedisEventStore:
    def __init__(self, redis: aioredis.Redis, events_maxlen: int = 1_000_000,
                 refusal_ttl_s: int = 7 * 86_400, outcome_window: int = 100) -> None:
        self.redis = redis
        self.lean = Resp.like(redis)  # appends: the hot path (see services/store/resp.py)
        self.events_maxlen = events_maxlen
        self.refusal_ttl_s = refusal_ttl_s
        self.outcome_window = outcome_window  # accepted outcomes kept per game (0: all, until its end)
        self._sha = hashlib.sha1(_APPEND.encode()).hexdigest()
        # On a Redis Cluster the answers are published once a replica has the writes (_answer_once_replicated)
        self.on_cluster = isinstance(self.lean, ClusterResp)

    async def append(self, appends: Sequence[Append], acks: Acks | None = None) -> list[AppendResult]:
        """One EVALSHA per partition the batch's games are in (its keys all in that partition's slot: ``keys``),
        the XACK of ``acks`` in it; several partitions' scripts are sent together (one round trip). If the server
        forgot the script (a restart), nothing ran: it is loaded and sent again."""
        if not appends:
            return []
        by_partition: dict[int, list[int]] = {}
        for index, a in enumerate(appends):
            by_partition.setdefault(keys.partition(a.game_id), []).append(index)
        calls = [self._script(p, [appends[i] for i in indexes],
                              None if acks is None else [acks.ids[i] for i in indexes], acks)
                 for p, indexes in by_partition.items()]
        try:
            replies = await self.lean.calls(*calls)
        except NoScriptError:
            await self.lean.call("SCRIPT", "LOAD", _APPEND)
            replies = await self.lean.calls(*calls)
        results: list[AppendResult] = [AppendResult(CONFLICT)] * len(appends)
        for indexes, reply in zip(by_partition.values(), replies):
            for i, r in zip(indexes, reply):
                results[i] = _result(r)
        if self.on_cluster:
            await self._answer_once_replicated(appends, results, by_partition)
        return results

    async def _answer_once_replicated(self, appends: Sequence[Append], results: list[AppendResult],
                                      by_partition: dict[int, list[int]]) -> None:
        """On a cluster the script publishes nothing (``_script``): each partition's primary is asked to WAIT until
        its replica has the batch's writes, then the answers are published, the same as the script would have
        (ok: the outcome recorded; duplicate: the first). A failover after an answer thus keeps what it answered
        for. A replica that has not confirmed within ``REPLICA_WAIT_MS`` (one down or far behind) delays the
        answers that long, then they go, logged (``replication_behind``): the games go on without their replica,
        as they would on one Redis. A primary lost before its WAIT answered raises: nothing is answered, and the
        commands are decided again (a resend by id, or reclaimed)."""
        waits = await asyncio.gather(*(self.lean.replicated(keys.games(p), REPLICA_WAIT_MS) for p in by_partition))
        for p, (got, wanted) in zip(by_partition, waits):
            if got < wanted:
                log.warning("replication_behind", partition=p, waited_ms=REPLICA_WAIT_MS)
        publish = [("PUBLISH", a.notify, a.outcome if r.status == OK else r.outcome)
                   for a, r in zip(appends, results) if a.notify and r.status in (OK, DUPLICATE)]
        if publish:
            await self.lean.calls(*publish)

    def _script(self, partition: int, appends: Sequence[Append], ack_ids: Sequence[str] | None,
                acks: Acks | None) -> tuple:
        """The EVALSHA of one partition's appends: its keys, then the packed batch and the stored forms."""
        # Strings throughout: Redis's Lua MessagePack reads no binary type (the JSON is UTF-8 text anyway); the
        # stored forms, binary, follow as arguments of their own.
        stored: list[bytes] = []
        packed = []
        script_keys = [keys.games(partition), keys.events(partition), keys.refusals(partition),
                       keys.deadlines(partition), (acks.streams if acks else keys.commands)(partition)]
        for a in appends:
            first = len(stored) + 2
            if a.envelopes:
                stored += _stored(a)
            script_keys += (keys.game_stream(a.game_id), keys.outcomes(a.game_id), keys.head(a.game_id),
                            keys.order(a.game_id), keys.outcome_order(a.game_id))
            packed.append((a.expected_version, a.command_key, a.outcome.decode(), a.game_id, a.game, a.prev_hash,
                           a.head, "" if self.on_cluster else a.notify, [e.decode() for e in a.envelopes], first, int(a.final),
                           *_seat_entry(a), "" if a.next_due is None else repr(a.next_due)))
        batch = (str(self.events_maxlen), repr(time.time()), packed, self.refusal_ttl_s, self.outcome_window,
                 "" if acks is None else (acks.group, list(ack_ids)))
        return ("EVALSHA", self._sha, len(script_keys), *script_keys, _pack(batch), *stored)

    async def acknowledge(self, stream: str, group: str, ids: Sequence[str]) -> None:
        if ids:
            await self.lean.call("XACK", stream, group, *ids)

    async def aclose(self) -> None:
        await self.lean.aclose()

    async def read(self, game_id: str, after: int = 0) -> list[EventEnvelope]:
        """(An entry of the compact form may take its command's fields and its prev_hash from the entries before
        it: the stream is read from its first entry, which a game's short stream makes cheap.)"""
        entries = await self.redis.xrange(keys.game_stream(game_id), min="-", max="+")
        return stored_envelopes(game_id, ((i, f[b"e"]) for i, f in entries))[after:]

    async def read_after(self, game_id: str, version: int, head: str, game: str) -> list[EventEnvelope] | None:
        if version < 1:
            return None
        entries = await self.redis.xrange(keys.game_stream(game_id), min=f"{version}-0", max="+")
        return _tail(game_id, version, head, game, [(i, f[b"e"]) for i, f in entries])

    async def read_with_commands(self, game_id: str) -> tuple[list[EventEnvelope], dict[int, Any]]:
        """The game's events and the bodies of its accepted commands (``codec.stored_command``), by the seq of
        each command's first event (a command stored before 2026-11-23 has none)."""
        entries = await self.redis.xrange(keys.game_stream(game_id), min="-", max="+")
        commands: dict[int, Any] = {}
        return stored_envelopes(game_id, ((i, f[b"e"]) for i, f in entries), commands=commands), commands

    async def version(self, game_id: str) -> int:
        return await self.redis.xlen(keys.game_stream(game_id))

    async def outcome(self, game_id: str, command_key: str) -> bytes | None:
        return await self.redis.hget(keys.outcomes(game_id), command_key)

    async def order(self, game_id: str) -> dict[int, str]:
        return {int(seat): entry.decode() for seat, entry in (await self.redis.hgetall(keys.order(game_id))).items()}

    async def deadline(self, game_id: str) -> float | None:
        return await self.redis.zscore(keys.game_deadlines(game_id), game_id)

    async def game_ids(self) -> AsyncIterator[str]:
        for partition in keys.PARTITIONS:
            async for game_id, _ in self.redis.zscan_iter(keys.games(partition)):
                yield game_id.decode()

    async def trim_events(self) -> int:
        """Trims each partition's events stream behind every projector group (``streams.trim_read``): the game
        streams keep every event; the events streams only carry them to the projectors. Returns the entries
        removed."""
        return sum([await trim_read(self.redis, keys.events(p)) for p in keys.PARTITIONS])

    async def forget_refusals(self, now: float | None = None, limit: int = 1000) -> int:
        """Drops the outcomes of refusals recorded more than ``refusal_ttl_s`` ago (their command ids may then be
        decided again; an accepted command's outcome is kept for ever). Returns how many went."""
        now = time.time() if now is None else now
        forgotten = 0
        for partition in keys.PARTITIONS:  # a transaction per partition: its keys share a slot
            due = await self.redis.zrangebyscore(keys.refusals(partition), "-inf", repr(now), start=0, num=limit)
            if not due:
                continue
            pipe = self.redis.pipeline(transaction=True)
            for member in due:
                game_id, ckey = member.decode().split("\n", 1)
                pipe.hdel(keys.outcomes(game_id), ckey)
            pipe.zrem(keys.refusals(partition), *due)
            await pipe.execute()
            forgotten += len(due)
        return forgotten


def _tail(game_id: str, version: int, head: str, game: str, entries: list[tuple[bytes, bytes]]
          ) -> list[EventEnvelope] | None:
    """``read_after``'s envelopes from the entries ``version``, ``version + 1``... (None: not that position)."""
    if not entries or entries[0][0] != f"{version}-0".encode() or entry_hash(entries[0][1]) != head:
        return None
    if len(entries) > 1:  # the entry after it must begin another command (a JSON entry carries its own fields)
        following = command_fields(entries[1][1])
        if following is None or following == command_fields(entries[0][1]) or (
                entries[1][1][:1] == b"{" and command_fields(entries[0][1]) is None):
            return None
    before = EventEnvelope(game_id, version, "", msgspec.Raw(b"null"), "", None, 0.0, "", head)
    return stored_envelopes(game_id, entries[1:], before=before, game=game)


def _stored(a: Append) -> Sequence[bytes]:
    """The game stream forms of an append's events: the caller's, else made from the envelopes."""
    if len(a.stored) == len(a.envelopes):
        return a.stored
    return stored_forms([event_envelope_decoder.decode(e) for e in a.envelopes], a.prev_hash)


def _seat_entry(a: Append) -> tuple[str, str]:
    return ("", "") if a.seat_entry is None else (str(a.seat_entry[0]), a.seat_entry[1])


def _result(raw) -> AppendResult:
    status = raw[0].decode() if isinstance(raw[0], bytes) else raw[0]
    if status == DUPLICATE:
        return AppendResult(DUPLICATE, outcome=raw[1])
    return AppendResult(status, version=int(raw[1]))


@dataclass
class InMemoryEventStore:
    """The same contract in a dict, for fast unit tests of code above the store."""

    streams: dict[str, list[bytes]] = field(default_factory=dict)
    outcomes: dict[tuple[str, str], bytes] = field(default_factory=dict)
    heads: dict[str, str] = field(default_factory=dict)
    all_events: list[tuple[str, str, bytes]] = field(default_factory=list)
    orders: dict[str, dict[int, str]] = field(default_factory=dict)
    outcome_window: int = 100
    outcome_order: dict[str, list[str]] = field(default_factory=dict)
    deadlines: dict[str, float] = field(default_factory=dict)  # the deadline index: game id -> next due
    acked: list[tuple[str, str, str]] = field(default_factory=list)  # (stream, group, entry id), in order

    async def acknowledge(self, stream: str, group: str, ids: Sequence[str]) -> None:
        self.acked.extend((stream, group, i) for i in ids)

    async def append(self, appends: Sequence[Append], acks: Acks | None = None) -> list[AppendResult]:
        results = [self._append(a) for a in appends]
        if acks is not None:
            self.acked.extend((acks.streams(keys.partition(a.game_id)), acks.group, i)
                              for a, i, r in zip(appends, acks.ids, results) if i and r.status != CONFLICT)
        return results

    def _append(self, a: Append) -> AppendResult:
        stream = self.streams.setdefault(a.game_id, [])
        seen = self.outcomes.get((a.game_id, a.command_key)) if a.command_key else None
        if seen is not None:
            return AppendResult(DUPLICATE, outcome=seen)
        if len(stream) != a.expected_version or self.heads.get(a.game_id, GENESIS_HASH) != a.prev_hash:
            return AppendResult(CONFLICT, version=len(stream))
        if a.envelopes:
            self.heads[a.game_id] = a.head
            stream.extend(_stored(a))
            if a.next_due is None:
                self.deadlines.pop(a.game_id, None)
            else:
                self.deadlines[a.game_id] = a.next_due
        self.all_events.extend((a.game_id, a.game, e) for e in a.envelopes)
        if a.command_key:
            self.outcomes[(a.game_id, a.command_key)] = a.outcome
            if a.envelopes and self.outcome_window and not a.final:
                order = self.outcome_order.setdefault(a.game_id, [])
                order.append(a.command_key)
                if len(order) > self.outcome_window:
                    self.outcomes.pop((a.game_id, order.pop(0)), None)
        if a.seat_entry is not None:
            self.orders.setdefault(a.game_id, {})[a.seat_entry[0]] = a.seat_entry[1]
        if a.final:
            self.orders.pop(a.game_id, None)
            self.outcome_order.pop(a.game_id, None)
            for key, outcome in list(self.outcomes.items()):
                if key[0] == a.game_id and key[1] != a.command_key and b'"status":"accepted"' in outcome:
                    del self.outcomes[key]
        return AppendResult(OK, version=len(stream))

    async def read(self, game_id: str, after: int = 0) -> list[EventEnvelope]:
        entries = [(f"{seq}-0".encode(), e) for seq, e in enumerate(self.streams.get(game_id, []), start=1)]
        return stored_envelopes(game_id, entries)[after:]

    async def read_after(self, game_id: str, version: int, head: str, game: str) -> list[EventEnvelope] | None:
        entries = [(f"{seq}-0".encode(), e) for seq, e in enumerate(self.streams.get(game_id, []), start=1)]
        return _tail(game_id, version, head, game, entries[version - 1:]) if version >= 1 else None

    async def read_with_commands(self, game_id: str) -> tuple[list[EventEnvelope], dict[int, Any]]:
        entries = [(f"{seq}-0".encode(), e) for seq, e in enumerate(self.streams.get(game_id, []), start=1)]
        commands: dict[int, Any] = {}
        return stored_envelopes(game_id, entries, commands=commands), commands

    async def version(self, game_id: str) -> int:
        return len(self.streams.get(game_id, []))

    async def outcome(self, game_id: str, command_key: str) -> bytes | None:
        return self.outcomes.get((game_id, command_key))

    async def order(self, game_id: str) -> dict[int, str]:
        return dict(self.orders.get(game_id, {}))

    async def trim_events(self) -> int:
        return 0

    async def deadline(self, game_id: str) -> float | None:
        return self.deadlines.get(game_id)

    async def game_ids(self) -> AsyncIterator[str]:
        for game_id, stream in list(self.streams.items()):
            if stream:
                yield game_id
