"""Projectors: events in, read models out (each seat's view and the spectator's, each game's history as each
seat may see it, the lobby, the seats' token hashes for the gateway).

``Projector.handle`` takes a batch of ``souk:events`` entries. For each game it folds the new events (those
past the game's recorded position) into its cached table, then writes every read model *and* the new position
in one Lua call, so a redelivered event changes nothing. The same call announces ``ViewsUpdated`` on
``souk:updates:{game}``, just after it published each view it wrote on ``souk:pushes:{game}:{version}:{audience}``
(each view encoded once, the same bytes stored and published: ``services.store.pushes``): the gateway pushes them to
WebSockets from there.

Projectors scale out as engines do: in the group ``projector``, each partition's events stream is read by one
projector at a time, its lease's holder (``services.store.leases``; ``services.cli.workers``), and the live
projectors share the partitions. ``souk projector --partition 1/2``, the older way, reads every event through a group
of its own and projects the games whose id hashes to it (``Partition``); every partition of N must then run.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
import uuid
import zlib
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError
import msgspec
import structlog

from contracts.envelope import EventEnvelope
from contracts.readmodels import HistoryEntry, HistoryRecord, LobbyEntry, ViewsUpdated
from contracts.table import TABLE_EVENTS, SeatJoined, SeatLeft, UndoApplied, UndoneRange
from domain import table as tbl
from services.store import keys, pushes
from services.runtime import metrics
from services.store.codec import encoder, event_decoder, event_envelope_decoder, fold_stream, game_name
from services.store.lru import Lru
from services.store.resp import Resp
from services.store.events import EventStore
from services.runtime.tracing import trace_id
from services.store.snapshots import snapshot_member

log = structlog.get_logger("souk.projector")
MAX_ATTEMPTS = 10
CHUNK = 64  # games per Lua call in a big batch
REBUILD_LOCK = "souk:projection:rebuilding"
# The rebuild's lock is a lease its holder renews every third of it: a projector killed in the middle of a rebuild
# leaves a lock that lapses within this many seconds, and a projector waiting for the rebuild takes it over (it
# used to wait behind an hour's expiry, its views behind all that time).
REBUILD_LEASE_S = 10.0
TRIM_EVERY_S = 5.0  # how often a projector trims souk:events behind every projector group
# A finished game's history read model is a cache (services/projector/history.py derives it from the game stream
# when it is gone): kept this long after the end, for the players' last looks, then it expires. A page derived
# from the stream costs a read of the whole stream and a fold: 5 ms of CPU for 480 events (a loaded machine). Its
# snapshots (services/history/travel.py) expire with it: its past is then folded from its first event.
FINISHED_TTL_S = 600
# The views of a game's audiences, together, up to this many bytes are pushed to the gateways with its notice
# (services.store.pushes; a Samarkand game's five: about 10 KB, 21 KB at most in seeded random games; Istanbul's up
# to 62 KB); more, and the notice goes alone (the gateway reads them from the store). Every gateway gets every push:
# this bounds what one adds to a slow gateway's pub/sub output buffer.
PUSH_VIEWS_MAX = 128 * 1024


@dataclass(frozen=True, slots=True)
class Partition:
    """Which games a projector projects: those whose id's CRC-32 modulo ``count`` is ``index``."""

    index: int = 0
    count: int = 1

    @classmethod
    def parse(cls, text: str) -> Partition:
        """'i/N' with 0 <= i < N (e.g. '0/2' and '1/2' for two projectors)."""
        try:
            index, count = (int(x) for x in text.split("/"))
        except ValueError:
            raise ValueError(f"a projector partition is 'index/count', like 0/2, not {text!r}") from None
        if not 0 <= index < count:
            raise ValueError(f"a projector partition index is 0 to count - 1, not {text!r}")
        return cls(index, count)

    @property
    def group(self) -> str:
        return keys.projector_group(self.index, self.count)

    @classmethod
    def missing(cls, groups: Iterable[str]) -> list[str]:
        """The partitions no projector ever read for, among those of every N that some group names (a partition
        of 2 without the other one leaves that one's games unprojected)."""
        prefix = f"{keys.PROJECTOR_GROUP}:"
        seen: set[tuple[int, int]] = set()
        for name in groups:
            if name.startswith(prefix):
                with contextlib.suppress(ValueError):
                    p = cls.parse(name[len(prefix):])
                    seen.add((p.index, p.count))
        return [f"{i}/{n}" for n in sorted({n for _, n in seen}) for i in range(n) if (i, n) not in seen]

    def owns(self, game_id: bytes) -> bool:
        return self.count == 1 or zlib.crc32(game_id) % self.count == self.index


@dataclass(slots=True)
class Projected:
    table: tbl.Table
    created_at: float


class Projector:
    """``redis`` is the read store (views, history, lobby, positions); ``store`` is the event store."""

    def __init__(self, redis: aioredis.Redis, store: EventStore, cache_size: int = 20_000,
                 partition: Partition = Partition(), trim_every_s: float = TRIM_EVERY_S,
                 finished_ttl_s: int = FINISHED_TTL_S, snapshot_every: int = 100) -> None:
        self.redis = redis
        self.snapshot_every = snapshot_every  # a snapshot of the table every this many events (0: none)
        self.trim_every_s = trim_every_s
        self.finished_ttl_s = finished_ttl_s
        self._trimmed_at = 0.0
        self.partition = partition
        self.lean = Resp.like(redis)  # the batch's writes: the hot path (see services/store/resp.py)
        self.store = store
        self.cache: Lru[str, Projected] = Lru(cache_size)

    def forget(self, partition: int) -> None:
        """Drops the cached games of ``partition``, which this projector takes (again: ``services.store.leases``):
        another projector may have moved their read models on meanwhile, and a write from the old cache would
        conflict on its positions and be projected again."""
        self.cache.drop(lambda game_id: keys.partition(game_id) == partition)

    async def handle(self, entries: Sequence[dict[bytes, bytes]]) -> None:
        """Projects the entries of this projector's partition (field ``g``: the game id) and skips the others."""
        by_game: dict[str, list[EventEnvelope]] = {}
        owns = self.partition.owns
        for fields in entries:
            if not owns(fields[b"g"]):
                continue
            env = event_envelope_decoder.decode(fields[b"e"])
            by_game.setdefault(env.game_id, []).append(env)
        if by_game:
            await self.project(by_game)
        if time.monotonic() - self._trimmed_at >= self.trim_every_s:
            await self.trim()

    async def trim(self) -> int:
        """Trims ``souk:events`` behind every projector group (this batch's entries are still pending: they stay).
        A rebuild never needs it: it reads the game streams."""
        self._trimmed_at = time.monotonic()
        trim = getattr(self.store, "trim_events", None)
        return await trim() if trim is not None else 0

    async def project(self, by_game: dict[str, list[EventEnvelope]]) -> None:
        """Writes the read models of these events and the games' new positions atomically, on condition that
        every position is still the one they were projected from (one Lua call per chunk of ``CHUNK`` games):
        if another projector or a rebuild moved one meanwhile, nothing of that chunk is written and its games are
        projected again from the positions as they now are. Positions come from this projector's cache, so a
        batch usually costs one round trip. Each chunk is sent as soon as it is computed: Redis applies it while
        the next one is computed. A chunk holds games of one partition (their read models and their lobby share its
        slot: ``keys``); with one partition, the chunks are the batch's games in order."""
        pending = by_game
        for _ in range(MAX_ATTEMPTS):
            positions = await self._positions(pending)
            games = list(pending)
            chunks = list(_chunks(games))
            sent: list[tuple[list[str], Awaitable, Writes]] = []
            try:
                for chunk in chunks:
                    if sent:  # the previous chunk's call goes out (a big write) while this one is computed
                        await asyncio.sleep(0)
                    writes = Writes()
                    changed = [g for g in chunk if await self._project_game(writes, g, positions[g], pending[g])]
                    if changed:
                        expected = {keys.position(g): positions[g] for g in changed}
                        call = writes.apply(self.lean, expected)
                        sent.append((changed, call if len(chunks) == 1 else asyncio.ensure_future(call), writes))
                outcomes = await _settled([call for _, call, _ in sent])
            except BaseException:  # which chunks were written is unknown: every cached table of the batch goes
                for _, call, _ in sent:
                    if isinstance(call, asyncio.Future):
                        call.cancel()
                self._forget(games)
                raise
            again: list[str] = []
            for (changed, _, writes), outcome in zip(sent, outcomes):
                if isinstance(outcome, BaseException) or outcome:  # nothing of this chunk was written
                    self._forget(changed)
                    if not isinstance(outcome, BaseException):  # positions moved: project them again
                        again += changed
                else:
                    _projected(writes.projected)
            errors = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
            if errors:
                raise errors[0]
            if not again:
                return
            log.info("projection_conflict", games=len(again))
            pending = {g: pending[g] for g in again}
        raise RuntimeError(f"projection conflicted {MAX_ATTEMPTS} times; the batch stays pending")

    async def _positions(self, games: dict[str, Any]) -> dict[str, int]:
        positions = {g: c.table.version for g in games if (c := self.cache.get(g)) is not None}
        unknown: dict[int, list[str]] = {}  # by partition: one MGET each (a cluster refuses keys of two slots)
        for g in games:
            if g not in positions:
                unknown.setdefault(keys.partition(g), []).append(g)
        if unknown:
            raws = await self.lean.calls(*[("MGET", *map(keys.position, ids)) for ids in unknown.values()])
            for ids, raw in zip(unknown.values(), raws):
                positions.update((g, int(r or 0)) for g, r in zip(ids, raw))
        return positions

    def _forget(self, games: list[str]) -> None:
        """The cached tables of games whose writes did not land: they ran ahead of the read store."""
        for game_id in games:
            self.cache.pop(game_id)

    async def _project_game(self, writes: Writes, game_id: str, position: int, envelopes: list[EventEnvelope]) -> bool:
        envelopes = [e for e in envelopes if e.seq > position]
        if not envelopes:
            return False  # redelivered: already projected
        if envelopes[0].seq != position + 1:  # a gap (trimmed events stream, a batch lost): read the store
            envelopes = [e for e in await self.store.read(game_id, after=position) if e.seq <= envelopes[-1].seq]
        projected = await self._load(game_id, position)
        self._write(writes, game_id, projected, envelopes)
        return True

    async def _load(self, game_id: str, position: int) -> Projected:
        """The table as projected up to ``position`` (from the cache, else folded from the store)."""
        cached = self.cache.get(game_id)
        if cached is not None and cached.table.version == position:
            return cached
        table, created_at = tbl.EMPTY, 0.0
        if position:
            envelopes = (await self.store.read(game_id))[:position]
            table = fold_stream(envelopes)
            created_at = envelopes[0].recorded_at
        return Projected(table, created_at)

    def _write(self, writes: Writes, game_id: str, projected: Projected, envelopes: list[EventEnvelope],
               history_kept: bool = True, notice_views: bool = True) -> None:
        """``history_kept`` False: no history read model and no snapshots (a finished game rebuilt: read_history
        derives its history, time travel folds from its first event). ``notice_views`` False: the notice goes
        without the views' push (a rebuild's: every game at once, followed or not; a gateway reads those it
        follows)."""
        table = projected.table
        status_before = table.status
        history: list[str] = []
        lobby_changed = False
        every = self.snapshot_every if history_kept else 0
        for env in envelopes:
            decode = event_decoder(table.game if table.exists else game_name(env)).decode
            if not table.exists:
                projected.created_at = env.recorded_at
            event = decode(env.payload)
            table = tbl.evolve(table, event, tbl.Origin(env.seat, env.command_id))  # as codec.fold_stream
            if every and table.version % every == 0:  # time travel starts from the nearest one
                writes.snapshot(game_id, table)
            if isinstance(event, TABLE_EVENTS):
                lobby_changed = True
                if isinstance(event, SeatJoined):
                    writes.hset(keys.seat_tokens(game_id), str(event.seat), event.token_hash)
                elif isinstance(event, SeatLeft):
                    writes.hdel(keys.seat_tokens(game_id), str(event.seat))
                elif isinstance(event, UndoApplied) and history_kept:  # the history's marks (a view: the latest)
                    [undone] = table.undone
                    writes.zadd_nx(keys.undone(game_id), undone.last, undone_member(undone))
            if history_kept:
                history.append(encoder.encode(history_record(table, event, env)).decode())
        for i, env in enumerate(envelopes):  # each command's last event: its views are written with this batch
            if i + 1 == len(envelopes) or envelopes[i + 1].command_id != env.command_id:
                writes.projected.append((table.game, env))
        views = tbl.views(table, game_id)
        encoded = {keys.audience(s): encoder.encode(v) for s, v in views.items()}  # once each: stored and pushed
        stored = writes.hset(keys.views(game_id), *(x for a, raw in encoded.items() for x in (a, raw.decode())))
        if history:
            writes.rpush(keys.history(game_id), *history)
        if history and status_before != table.status and table.status in FINISHED:  # only caches from now on
            writes.expire(keys.history(game_id), self.finished_ttl_s)
            writes.expire(keys.snapshots(game_id), self.finished_ttl_s)
            writes.expire(keys.undone(game_id), self.finished_ttl_s)
        private = bool(table.invite_hash)
        if lobby_changed:
            lobby = LobbyEntry(game_id, table.game, table.title, tbl.seats_of(table), table.status,
                               projected.created_at, table.unfair, private, table.rematch_of,
                               table.imported_from, table.forked_from)
            writes.hset(keys.game_lobby(game_id), game_id, encoder.encode(lobby).decode())
        if lobby_changed and not private:  # a private game is never listed
            p = keys.partition(game_id)  # the game's partition's lobby: in its slot
            writes.zadd_nx(keys.lobby_index(p), projected.created_at, game_id)
            # The lobby's indexes, so that a filtered listing reads one page, not every game.
            writes.zadd_nx(keys.lobby_index(p, game=table.game), projected.created_at, game_id)
            if status_before != table.status:
                if status_before:
                    writes.zrem(keys.lobby_index(p, status=status_before), game_id)
                    writes.zrem(keys.lobby_index(p, status=status_before, game=table.game), game_id)
                writes.zadd_nx(keys.lobby_index(p, status=table.status), projected.created_at, game_id)
                writes.zadd_nx(keys.lobby_index(p, status=table.status, game=table.game), projected.created_at,
                               game_id)
        writes.set(keys.position(game_id), str(table.version))
        # The views go to the gateway too (it pushes them from there, no HMGET back), just before the notice, unless
        # they are too big for a message: then the notice alone goes, and the gateway reads them.
        if notice_views and sum(map(len, encoded.values())) <= PUSH_VIEWS_MAX:
            writes.push_views(pushes.prefix(game_id, table.version), stored)
        notice = ViewsUpdated(table.version, table.status, views[None].flow.awaiting)
        writes.publish(keys.view_updates(game_id), encoder.encode(notice).decode())  # sent when the writes are applied
        projected.table = table
        self.cache.put(game_id, projected)

    async def aclose(self) -> None:
        await self.lean.aclose()

    async def rebuild(self, progress: Callable[[], None] | None = None) -> int:
        """Project every game again from its first event, each replacing its read models in one atomic call.
        Returns the games rebuilt. ``progress``: called after each game (``souk projections rebuild``'s bar).

        Safe beside running projectors (a running one rebuilds a lost read store this way): a game's read models
        are replaced only if its position is not past what the rebuild read (else a projector already wrote it
        whole, further on), and nothing is dropped outside that call, so a batch projected meanwhile is never
        half deleted. (It used to drop every key first, then project: a batch written between the two lost its
        lobby entry, seat tokens and the beginning of its history, found by ``souk chaos``.)

        A read store of the layout before partitions (``keys.OLD_READ_MODELS``) loses those keys first: nothing
        reads them any more."""
        await drop_old_read_models(self.redis)
        count = 0
        async for game_id in self.store.game_ids():
            envelopes = await self.store.read(game_id)
            if not envelopes:
                continue
            game = game_name(envelopes[0])
            writes = Writes()
            writes.delete(keys.views(game_id), keys.history(game_id), keys.seat_tokens(game_id), keys.snapshots(game_id),
                          keys.undone(game_id))
            p = keys.partition(game_id)
            for status in keys.LOBBY_STATUSES:  # the indexes of the game's status are written again below
                writes.zrem(keys.lobby_index(p, status=status), game_id)
                writes.zrem(keys.lobby_index(p, status=status, game=game), game_id)
            projected = Projected(tbl.EMPTY, 0.0)
            # a finished game's history is only a cache: not written again (services/projector/history.py)
            self._write(writes, game_id, projected, envelopes, history_kept=envelopes[-1].type not in FINAL_EVENTS,
                        notice_views=False)
            if not await writes.replace(self.lean, keys.position(game_id), projected.table.version):
                self.cache.pop(game_id)  # a projector wrote it further meanwhile: its cache must not say otherwise
            events = getattr(self.store, "redis", None)
            if events is not None and await events.hexists(keys.ARCHIVED, game_id):
                # `souk archive` removed the game after this read its stream (it writes the tombstone first, then
                # removes the read models): what was just written goes too, or the lobby would list it
                self.cache.pop(game_id)
                await forget_read_models(self.redis, game_id, game)
            else:
                count += 1
            if progress is not None:
                progress()
        await self.redis.set(keys.READ_STORE_MARK, "1")
        return count

    async def initialise(self) -> int | None:
        """A projector facing an empty read store (a fresh or restarted views Redis) rebuilds it first: its
        consumer group has acknowledged the old events, so they would not come again. Returns the games
        rebuilt, or None when the read store was already initialised."""
        if await self.redis.exists(keys.READ_STORE_MARK):
            return None
        holder = uuid.uuid4().hex
        while not await self.redis.set(REBUILD_LOCK, holder, nx=True, px=int(REBUILD_LEASE_S * 1000)):
            # another projector is at it: wait for its end mark, or take over once its lease lapsed (it died)
            if await self.redis.exists(keys.READ_STORE_MARK):
                return None
            await asyncio.sleep(0.2)
        if await self.redis.exists(keys.READ_STORE_MARK):  # rebuilt by the previous holder meanwhile
            await self._release(holder)
            return None
        renewing = asyncio.create_task(self._renew(holder))
        try:
            return await self.rebuild()
        finally:
            renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewing
            await self._release(holder)

    async def _renew(self, holder: str) -> None:
        """Renews the rebuild's lease every third of it while this projector holds it."""
        while True:
            await asyncio.sleep(REBUILD_LEASE_S / 3)
            with contextlib.suppress(RedisError, OSError):  # a store away a moment: the next renewal tries again
                await self.redis.eval(_RENEW, 1, REBUILD_LOCK, holder, int(REBUILD_LEASE_S * 1000))

    async def _release(self, holder: str) -> None:
        await self.redis.eval(_RELEASE, 1, REBUILD_LOCK, holder)


_RENEW = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0"
_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"


async def forget_read_models(views: aioredis.Redis, game_id: str, game: str) -> None:
    """Removes every read model of a game, in one transaction (``souk archive``, and a rebuild that projected a
    game archived meanwhile)."""
    p = keys.partition(game_id)  # its read models and its partition's lobby: one slot
    pipe = views.pipeline(transaction=True)
    pipe.delete(*keys.read_model_keys(game_id))
    pipe.hdel(keys.lobby(p), game_id)
    for status in (None, *keys.LOBBY_STATUSES):
        for name in (None, game):
            pipe.zrem(keys.lobby_index(p, status, name), game_id)
    await pipe.execute()


async def drop_old_read_models(views: aioredis.Redis) -> int:
    """Deletes the keys of a read store of the layout before partitions (``keys.OLD_READ_MODELS``; a read store
    marked 4 or less): the rebuild writes every game's under its partition's names, and nothing reads the old ones.
    Returns how many went. Looked for only when the old lobby or an old mark is there (every game had a lobby
    entry); the layout before partitions was only ever a single Redis, where one SCAN sees every key."""
    pipe = views.pipeline(transaction=False)  # one EXISTS each: a cluster refuses keys of several slots in one
    for key in ("souk:lobby", "souk:lobby:order", "souk:projection:initialised",
                *(f"souk:projection:initialised:{v}" for v in range(2, 5))):
        pipe.exists(key)
    if not any(await pipe.execute()):
        return 0
    dropped = 0
    for pattern in keys.OLD_READ_MODELS:
        batch = [key async for key in views.scan_iter(match=pattern, count=1000)]
        for start in range(0, len(batch), 500):
            dropped += await views.delete(*batch[start:start + 500])
    return dropped


async def _settled(calls: list[Awaitable]) -> list[Any]:
    """Each call's result or exception, in order. A batch of one chunk (nearly every batch but a rebuild's or a
    backlog's) awaits its call as it is: a task and a gather for it cost the projector about 25 µs of CPU a batch
    (uvloop, load 17: docs/performance-changes.md section 10)."""
    if len(calls) == 1:
        try:
            return [await calls[0]]
        except Exception as exc:  # noqa: BLE001 - as gather's return_exceptions: the caller sorts them out
            return [exc]
    return await asyncio.gather(*calls, return_exceptions=True)


def _chunks(games: list[str]) -> Iterable[list[str]]:
    """The games in chunks of at most ``CHUNK``, each of one partition's games (in their order in ``games``)."""
    by_partition: dict[int, list[str]] = {}
    for game_id in games:
        by_partition.setdefault(keys.partition(game_id), []).append(game_id)
    for ids in by_partition.values():
        for start in range(0, len(ids), CHUNK):
            yield ids[start:start + CHUNK]


FINISHED = (tbl.OVER, tbl.CANCELLED)
FINAL_EVENTS = ("table.GameEnded", "table.GameCancelled")  # the events that finish a game


def undone_member(undone: UndoneRange) -> str:
    """An undo's range as the sorted set ``keys.undone`` keeps it (``undone_range`` reads it)."""
    return f"{undone.first}:{undone.last}:{undone.by_seat}"


def undone_range(member: bytes) -> UndoneRange:
    first, last, by_seat = (int(x) for x in member.split(b":"))
    return UndoneRange(first, last, by_seat)


def history_entry(env: EventEnvelope, event: Any) -> HistoryEntry:
    return HistoryEntry(env.seq, env.type, env.seat, env.command_id, env.recorded_at, event, env.hash,
                        env.prev_hash, env.commitment, env.chain)


def history_record(table: tbl.Table, event: Any, env: EventEnvelope) -> HistoryRecord:
    """One event of the history as each audience may see it, ``table`` being the game just after it.

    Most events hide nothing: they are stored once. One that hides something is stored as the spectator sees it,
    plus a variant for each seat that sees more (the owner of a secret), so that each reader is served only what it
    may see. A spectator sees no more than any seat (domain.kernel.Game.redact): an event it sees whole is
    everybody's."""
    spectator = tbl.redact(table, event, None)
    if spectator is event:  # stored as it came (its JSON is not encoded again)
        return HistoryRecord(shared=history_entry(env, env.payload))
    more = {keys.audience(seat): variant for seat in range(table.seats)
            if (variant := tbl.redact(table, event, seat)) != spectator}
    # chain 2: the spectator's event exactly as the chain hashed it
    shared = env.public if env.public else spectator
    return HistoryRecord(shared=history_entry(env, shared),
                         by_audience={a: history_entry(env, v) for a, v in more.items()})


def _projected(projected: list[tuple[str, EventEnvelope]]) -> None:
    """Commands whose views were just written: their latency since publication, and a debug line each (with the
    command's ``trace_id``, so that it can be followed from the gateway through the engine to here)."""
    now = time.time()
    for game, env in projected:
        if env.sent_at:
            metrics.observe_latency(game, now - env.sent_at)
    if log.is_enabled_for(logging.DEBUG):
        for game, env in projected:
            structlog.contextvars.bind_contextvars(game_id=env.game_id, seat=env.seat, command_id=env.command_id,
                                                   trace_id=trace_id(env.traceparent))
            log.debug("command_projected", version=env.seq,
                      latency_ms=round((now - env.sent_at) * 1000, 2) if env.sent_at else None)
        structlog.contextvars.clear_contextvars()


# The Lua function both scripts below begin with: one batch command, its keys looked up in KEYS by their places (DEL:
# each of them; PUBLISH: none), so that a script touches no key it was not given.
_RUN = """
local function run(command)
  local name = command[1]
  if name == 'PUBLISH' then
    redis.call('PUBLISH', command[2], command[3])
  else
    if name == 'DEL' then
      for k = 2, #command do command[k] = KEYS[command[k]] end
    else
      command[2] = KEYS[command[2]]
    end
    redis.call(unpack(command))
  end
end
"""

_APPLY = _RUN + """
-- KEYS: every key the batch touches (one partition's: one slot). ARGV[1]: MessagePack of [expected, commands]:
-- expected is a flat list of position keys (their places in KEYS) and the positions they must hold; commands are
-- lists (name, the places of its keys in KEYS (DEL: each of them; PUBLISH: none), arguments...). Nothing is written
-- unless every position is as expected; then the commands run in order (atomically). One packed argument instead
-- of thousands: packing them one by one was a tenth of the projector's time.
local batch = cmsgpack.unpack(ARGV[1])
local expected, commands = batch[1], batch[2]
local conflicts = {}
for c = 1, #expected, 2 do
  local key = KEYS[expected[c]]
  if (redis.call('GET', key) or '0') ~= expected[c + 1] then conflicts[#conflicts + 1] = key end
end
if #conflicts > 0 then return conflicts end
for c = 1, #commands do
  local command = commands[c]
  if command[1] == 'PUSHVIEWS' then  -- [_, prefix, n]: each value of HSET command n on prefix .. its field, as
    local stored = commands[tonumber(command[3])]  -- it is (a new Lua string of the views would cost their hashing)
    for f = 3, #stored, 2 do redis.call('PUBLISH', command[2] .. stored[f], stored[f + 1]) end
  else
    run(command)
  end
end
return conflicts
"""
_APPLY_SHA = hashlib.sha1(_APPLY.encode()).hexdigest()

_REPLACE = _RUN + """
-- KEYS: every key the commands touch (one game's and its partition's lobby: one slot). ARGV[1]: MessagePack of
-- [the position key's place in KEYS, version, commands] (commands as _APPLY's): the commands run (atomically) only
-- if the game's position is at most the version they write. Returns 1 if they ran.
local batch = cmsgpack.unpack(ARGV[1])
if tonumber(redis.call('GET', KEYS[batch[1]]) or '0') > batch[2] then return 0 end
for c = 1, #batch[3] do run(batch[3][c]) end
return 1
"""
_REPLACE_SHA = hashlib.sha1(_REPLACE.encode()).hexdigest()
_pack = msgspec.msgpack.Encoder().encode


class Writes:
    """The read-model writes of one batch, applied by one Lua call if the positions are as expected.

    Every key is declared in the call's KEYS (a Redis Cluster routes the call by them and refuses a key it was not
    given); a command names its keys by their places in KEYS (``key``), so the script touches no other. A batch's
    keys are one partition's (``Projector.project`` groups its games by partition): one slot. Every other argument
    is a str: Redis's Lua MessagePack reads no binary type, and would format numbers its own way (the JSON written
    is UTF-8 text anyway)."""

    def __init__(self) -> None:
        self.commands: list[tuple] = []
        self.keys: dict[str, int] = {}  # every key the commands touch -> its place in KEYS (from 1, as Lua counts)
        self.projected: list[tuple[str, EventEnvelope]] = []  # (game, each command's last event), for the metrics

    def key(self, name: str) -> int:
        """``name``'s place in the call's KEYS (added at the end if new)."""
        found = self.keys.get(name)
        if found is None:
            found = self.keys[name] = len(self.keys) + 1
        return found

    def hset(self, key: str, *fields_and_values: str) -> int:
        """Returns the command's place in the batch (for ``push_views``)."""
        self.commands.append(("HSET", self.key(key), *fields_and_values))
        return len(self.commands) - 1

    def push_views(self, prefix: str, stored: int) -> None:
        """Publishes each value of the ``HSET`` at ``stored`` (the views just stored) on ``prefix`` + its field (the
        audience): services.store.pushes. Applied by ``apply`` only."""
        self.commands.append(("PUSHVIEWS", prefix, str(stored + 1)))  # (Lua counts from 1)

    def rpush(self, key: str, *values: str) -> None:
        place = self.key(key)
        for start in range(0, len(values), 1000):  # Lua unpacks at most ~8,000 arguments into one call
            self.commands.append(("RPUSH", place, *values[start:start + 1000]))

    def delete(self, *keys_: str) -> None:
        self.commands.append(("DEL", *map(self.key, keys_)))

    def set(self, key: str, value: str) -> None:
        self.commands.append(("SET", self.key(key), value))

    def publish(self, channel: str, message: str) -> None:
        self.commands.append(("PUBLISH", channel, message))

    def zadd_nx(self, key: str, score: float, member: str) -> None:
        self.commands.append(("ZADD", self.key(key), "NX", repr(score), member))

    def expire(self, key: str, seconds: int) -> None:
        self.commands.append(("EXPIRE", self.key(key), str(seconds)))

    def hdel(self, key: str, field: str) -> None:
        self.commands.append(("HDEL", self.key(key), field))

    def zrem(self, key: str, member: str) -> None:
        self.commands.append(("ZREM", self.key(key), member))

    def snapshot(self, game_id: str, table: tbl.Table) -> None:
        """The table's snapshot at its version, replacing any other of that version (one per version)."""
        key, version = self.key(keys.snapshots(game_id)), str(table.version)
        self.commands.append(("ZREMRANGEBYSCORE", key, version, version))
        self.commands.append(("ZADD", key, version, snapshot_member(table)))

    async def replace(self, redis: Resp, position_key: str, version: int) -> bool:
        """Runs the commands if the game's position is at most ``version`` (a rebuild's whole-game replace);
        returns whether they ran."""
        place = self.key(position_key)
        return bool(await redis.evalsha(_REPLACE_SHA, _REPLACE, list(self.keys),
                                        _pack((place, version, self.commands))))

    async def apply(self, redis: Resp, expected: dict[str, int]) -> list[bytes]:
        """Returns the position keys that were not as expected (then nothing was written)."""
        flat = [x for key, position in expected.items() for x in (self.key(key), str(position))]
        return await redis.evalsha(_APPLY_SHA, _APPLY, list(self.keys), _pack((flat, self.commands)))
