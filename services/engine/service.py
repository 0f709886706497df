"""The engine: commands in, events out. Thin: decode, load, decide, append, answer.

``Engine.handle`` takes a batch of command envelopes (FastStream delivers them from the ``souk:commands``
consumer group). Commands of one game are decided in order against the cached state; every game's appends go
to Redis in one pipeline, each one atomic and guarded by the expected version and the previous event's hash.
A conflict or a duplicate invalidates the cached game; what follows is reloaded and decided again. Rejections
are recorded under the command key too, so a redelivered or retried command gets its first answer again.

A seat's commands are applied in the order ``souk:commands`` received them (their entry ids), or not at all: the
game keeps, by seat, the entry id of the newest command it applied (``keys.order``, written with its events), and
a command of that seat received before it (one an engine died holding, reclaimed after the seat moved on) is
refused as ``superseded``, never applied after it.
"""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import msgspec
import redis.asyncio as aioredis
import structlog
from redis.exceptions import RedisError

from contracts.envelope import GENESIS_HASH, CommandEnvelope, EventEnvelope, Reply
from contracts.table import CreateGame, SeatJoined
from domain import table as tbl
from domain.chance import Chance
from domain.kernel import RuleViolation
from services.store import keys
from services.runtime import logs, metrics
from services.engine import snapshots
from services.engine.sealing import seal_events
from services.store.codec import (
    command_decoder,
    command_runs,
    decode_stream,
    encoder,
    event_decoder,
    origins,
    reply_decoder,
    stored_command,
)
from services.store.lru import Lru
from services.store.events import CONFLICT, DUPLICATE, OK, Acks, Append, EventStore
from services.runtime.tracing import trace_id

log = structlog.get_logger("souk.engine")
MAX_RETRIES = 8
PARKED_MAXLEN = 10_000
_UNREADABLE = ("", "rejected", "game_unreadable")  # the metrics' key of a command whose game cannot be read


class Contended(Exception):
    """Commands whose games kept changing under them: the batch stays unacknowledged and comes again."""


@dataclass(slots=True)
class Slot:
    """A game as the engine holds it: the folded table, its chain head, and its secret seed."""

    table: tbl.Table
    head: str  # hash of the last event
    seed: bytes
    # By seat, since which version it has been awaited for the decision it still owes (``tbl.awaited_since``):
    # an ``expected_version`` from then on is not stale. Rebuilt from the stream when the game is loaded.
    since: tuple[int, ...] = ()
    # By seat, the souk:commands entry id (ms, seq) of its newest applied command (``keys.order``).
    order: dict[int, tuple[int, int]] = field(default_factory=dict)
    # The ids of the commands the game accepted (None: not known, a game that does not exist yet): a command
    # whose id is among them is answered as it was, never decided again (its outcome may have left the store's
    # window, SOUK_OUTCOME_WINDOW). Shared by a game's successive slots.
    accepted: snapshots.Accepted | None = None


def entry_id(raw: bytes | str) -> tuple[int, int]:
    """A stream entry id (``b"1700000000000-3"``) as a pair that sorts as Redis orders the entries."""
    ms, _, seq = (raw.decode() if isinstance(raw, bytes) else raw).partition("-")
    return int(ms), int(seq or 0)


def next_due(table: tbl.Table) -> float | None:
    """When something of the game falls due next (a seat's deadline, its timer, a bot's move: the clock worker
    sends the command), written into the deadline index with the append; None for a game that is over."""
    return None if table.status in FINISHED else tbl.next_due(table)


def command_key(env: CommandEnvelope) -> str:
    return f"{'-' if env.seat is None else env.seat}:{env.command_id}"


FINISHED = (tbl.OVER, tbl.CANCELLED)
NOT_DUE = "not_due"  # the table's refusal of a clock command whose deadline or timer is not (or no longer) due


@dataclass(frozen=True, slots=True)
class AcceptedRun:
    """One accepted command's events in a game stream, as much as its reply needs."""

    seats: frozenset  # the seats its events carry, but a SeatJoined's (which carries the seat taken)
    joined: int | None  # the seat a join took
    version: int  # its last event's
    events: int


def accepted_runs(envelopes: Sequence[EventEnvelope]) -> dict[str, list[AcceptedRun]]:
    """Every accepted command of a game by command id, from the events it appended: one command's events are
    consecutive, with its command id and the time it was decided."""
    out: dict[str, list[AcceptedRun]] = {}
    for run in command_runs(envelopes):
        out.setdefault(run[0].command_id, []).append(AcceptedRun(
            frozenset(e.seat for e in run if e.type != _SEAT_JOINED),
            next((e.seat for e in run if e.type == _SEAT_JOINED), None), run[-1].seq, len(run)))
    return out


def reply_of(runs: dict[str, list[AcceptedRun]], env: CommandEnvelope) -> Reply | None:
    """The reply the engine gave ``env``'s command when it was accepted (``_decide``), None if no events of the
    game came from it."""
    for run in runs.get(env.command_id, ()):
        # A join is sent for no seat (its SeatJoined carries the seat taken): another seat's command that reuses
        # its id is another command, refused as such (answered as the join, its reply named a seat nobody
        # awaited: the gateway answered 504 engine_timeout).
        if run.seats <= {env.seat} and (run.joined is None or env.seat in (None, run.joined)):
            return Reply(env.command_id, env.game_id, "accepted", version=run.version, events=run.events,
                         seat=env.seat if run.joined is None else run.joined)
    return None


def answered(slot: Slot, env: CommandEnvelope, first: Reply) -> Append:
    """The append of a resend answered as it was the first time: no events, no outcome recorded again, the answer
    published to the resend's ``reply_to`` if the game is still where ``slot`` has it."""
    return Append(env.game_id, slot.table.game, slot.table.version, (), "", encoder.encode(first),
                  prev_hash=slot.head, head=slot.head, notify=env.reply_to)


def accepted_reply(envelopes: Sequence[EventEnvelope], env: CommandEnvelope) -> Reply | None:
    """The reply ``env``'s command got when it was accepted, from the game's events (None: it was not)."""
    return reply_of(accepted_runs(envelopes), env)


_SEAT_JOINED = "table.SeatJoined"


def fold_with_since(envelopes: Sequence[EventEnvelope], table: tbl.Table = tbl.EMPTY, since: tuple[int, ...] = ()
                    ) -> tuple[tbl.Table, tuple[int, ...]]:
    """The game folded from its stream (as ``codec.fold_stream``), and each seat's ``awaited_since`` as the
    engine kept it command by command (a command's events are consecutive, with its id and time); from ``table``
    and ``since`` (a snapshot's, at the end of a command) when given, ``envelopes`` being the events after it."""
    if table.exists:
        decode = event_decoder(table.game).decode
        events = [decode(e.payload) for e in envelopes]
    else:
        events = decode_stream(list(envelopes))
    start = 0
    for run in command_runs(envelopes):
        before = table
        table = tbl.fold(events[start:start + len(run)], table, origins(run))
        since = tbl.awaited_since(since, before, table, run[0].seat if run[0].type != _SEAT_JOINED else None)
        start += len(run)
    return table, since


class Engine:
    def __init__(self, redis: aioredis.Redis, store: EventStore, cache_size: int = 20_000,
                 snapshot_every: int = 100, acknowledge: str | None = None) -> None:
        self.redis = redis
        self.store = store
        # A group: ``handle``'s entries are read from that group of their games' partitions' command streams, and
        # each is acknowledged there when its command is answered for good, by the append that records its outcome
        # (``Acks``); None: not acknowledged.
        self.acknowledge = acknowledge
        self.snapshot_every = snapshot_every  # a snapshot of a game's slot every this many events (0: none)
        self.cache: Lru[str, Slot] = Lru(cache_size)
        self.finished: Lru[str, dict[str, list[AcceptedRun]]] = Lru(1_000)  # finished games' accepted commands
        # games in play: their accepted commands at a version, read for the resends of commands whose outcomes left
        # the store's window (a client resending old ids again and again reads the stream once per version)
        self.runs: Lru[str, tuple[int, dict[str, list[AcceptedRun]]]] = Lru(1_000)

    def forget(self, partition: int) -> None:
        """Drops the cached games of ``partition``, which this engine takes (again: ``services.store.leases``):
        another engine may have moved them on meanwhile, and a decision on the old cache would conflict, be
        reloaded and made again."""
        self.cache.drop(lambda game_id: keys.partition(game_id) == partition)

    # --- loading ------------------------------------------------------------------------------------------

    async def load(self, game_id: str) -> Slot:
        slot = self.cache.get(game_id)
        if slot is not None:
            return slot
        pipe = self.redis.pipeline(transaction=False)
        pipe.get(keys.seed(game_id))
        pipe.get(keys.engine_snapshot(game_id))
        seed, raw = await pipe.execute()
        slot = await self._from_snapshot(game_id, snapshots.decode(raw), seed or b"")
        if slot is None:  # no snapshot (or one to ignore): folded from the first event
            envelopes = await self.store.read(game_id)
            if not envelopes:
                return Slot(tbl.EMPTY, GENESIS_HASH, b"")
            table, since = fold_with_since(envelopes)  # with each event's origin: the table decides undos
            slot = Slot(table, envelopes[-1].hash, seed or b"", since,
                        accepted=snapshots.Accepted.of(e.command_id for e in envelopes))
        slot.order = {seat: entry_id(entry) for seat, entry in (await self.store.order(game_id)).items()}
        self.cache.put(game_id, slot)
        return slot

    async def _from_snapshot(self, game_id: str, snapshot, seed: bytes) -> Slot | None:
        """The game from its snapshot and the events after it (``services.engine.snapshots``); None: fold it
        from the start (no snapshot, or one that is not this stream's position)."""
        if snapshot is None:
            return None
        table, since, head, accepted = snapshot
        envelopes = await self.store.read_after(game_id, table.version, head, table.game)
        if envelopes is None:
            log.warning("snapshot_ignored", game_id=game_id, version=table.version)
            return None
        table, since = fold_with_since(envelopes, table, since)
        for env in envelopes:
            accepted.add(env.command_id)
        return Slot(table, envelopes[-1].hash if envelopes else head, seed, since, accepted=accepted)

    async def _snapshot(self, done: list[tuple[Append, Slot]]) -> None:
        """After appends that went through: a snapshot of each game that crossed a multiple of
        ``snapshot_every`` events (the last slot of the batch), and none of a game that ended."""
        every = self.snapshot_every
        if not every or not done:
            return
        latest: dict[str, tuple[int, Slot]] = {}
        for append, slot in done:
            first = latest.get(append.game_id, (append.expected_version, slot))[0]
            latest[append.game_id] = (first, slot)
        due = [(game_id, slot) for game_id, (before, slot) in latest.items()
               if slot.table.status in FINISHED or slot.table.version // every > before // every]
        if not due:  # nearly every batch: no pipeline made
            return
        pipe = self.redis.pipeline(transaction=False)
        for game_id, slot in due:
            if slot.table.status in FINISHED:
                pipe.delete(keys.engine_snapshot(game_id))
            else:
                pipe.set(keys.engine_snapshot(game_id), snapshots.encode(slot.table, slot.since, slot.head,
                                                                         slot.accepted))
        try:
            await pipe.execute()
        except (RedisError, OSError) as exc:  # a cache: the appends stand, the next snapshot comes later
            log.warning("snapshot_not_written", error=str(exc)[:200])

    async def _seed_for(self, env: CommandEnvelope, command: CreateGame) -> bytes:
        """The game's secret server seed, set once (a retried CreateGame finds the first one): the server's own (32
        bytes from ``secrets``), or the one the command chose (``tbl.chosen_seed`` checks it and that the command
        says ``unfair``: the game then shows everyone). The table mixes it with the seats' entropy at the start."""
        wanted = tbl.chosen_seed(command) or secrets.token_bytes(tbl.SEED_BYTES)
        await self.redis.set(keys.seed(env.game_id), wanted, nx=True)
        return await self.redis.get(keys.seed(env.game_id))

    async def park(self, env: CommandEnvelope | None, reason: str, detail: str, reply: Reply | None = None,
                   raw: bytes = b"") -> None:
        """Puts a command that cannot be decided where an operator sees it (``souk:parked``, shown by /health),
        and answers its sender when there is one."""
        fields = {"reason": reason, "detail": detail[:500], "at": repr(time.time()),
                  "c": raw or (encoder.encode(env) if env is not None else b"")}
        await self.redis.xadd(keys.PARKED, fields, maxlen=PARKED_MAXLEN, approximate=True)
        if env is not None and reply is not None and env.reply_to:
            await self.redis.publish(env.reply_to, encoder.encode(reply))

    # --- deciding -----------------------------------------------------------------------------------------

    async def handle(self, batch: Sequence[CommandEnvelope],
                     entry_ids: Sequence[bytes | str] | None = None) -> list[Reply]:
        """Decide and append a batch; returns one reply per command, in the batch's order. Each reply is also
        published on its command's ``reply_to`` channel (by the store's script, in the append itself).
        ``entry_ids``: each command's entry id in its game's partition's command stream (the workers give them),
        which orders a seat's commands (``superseded``); without them, commands are decided in the batch's order,
        unchecked. With them and ``acknowledge``, each entry is acknowledged when its command is answered for good (in its append), and
        a command that is not (its game kept conflicting, the store failed) stays pending."""
        replies: dict[int, Reply] = {}
        pending = list(enumerate(batch))
        entries = [None] * len(batch) if entry_ids is None else [entry_id(e) for e in entry_ids]
        raw_ids = None if entry_ids is None or self.acknowledge is None else [
            e.decode() if isinstance(e, bytes) else e for e in entry_ids]
        for attempt in range(MAX_RETRIES):
            if not pending:
                break
            if attempt > 1:  # a game several engines write at once: let the others finish
                await asyncio.sleep(random.uniform(0.001, 0.005) * attempt)
            pending = await self._round(pending, replies, entries, raw_ids)
        if pending:
            # Still conflicting after every retry (other engines keep moving these games). No answer is made up:
            # a "conflict" told now could be contradicted by another copy of the command accepted later. The
            # batch is not acknowledged; its commands come again (reclaimed), and what was decided is recorded.
            raise Contended(f"{len(pending)} commands conflicted {MAX_RETRIES} times")
        return [replies[i] for i in range(len(batch))]

    async def _round(self, pending, replies, entries, raw_ids=None) -> list[tuple[int, CommandEnvelope]]:
        """One pass: decide every pending command, append in one pipeline, return those to redo.

        A refusal is appended too, with no events: the store records its outcome only if the game is still at
        the version it was decided on, so a refusal decided on a stale cache is decided again."""
        decided: list[tuple[int, CommandEnvelope, Append, Reply]] = []
        slots: dict[int, Slot] = {}  # by index: the slot after each decided command
        counts: dict[tuple[str, str, str], int] = {}  # (game, outcome, code) -> commands, for the metrics
        by_game: dict[str, list[tuple[int, CommandEnvelope]]] = {}
        for index, env in pending:
            by_game.setdefault(env.game_id, []).append((index, env))
        for game_id, items in by_game.items():
            try:
                slot = await self.load(game_id)
            except (RedisError, OSError):
                raise
            except Exception as exc:  # noqa: BLE001 - a stream this build cannot fold: park, answer, go on
                log.exception("game_unreadable", game_id=game_id, error=str(exc))
                for index, env in items:
                    counts[_UNREADABLE] = counts.get(_UNREADABLE, 0) + 1
                    replies[index] = Reply(env.command_id, env.game_id, "rejected", code="game_unreadable",
                                           message="this game's history cannot be read by this server",
                                           seat=env.seat)
                    await self.park(env, "game_unreadable", str(exc), replies[index])
                if raw_ids is not None:  # answered (parked): no append will acknowledge it
                    await self.store.acknowledge(keys.commands(keys.partition(game_id)), self.acknowledge,
                                                 [raw_ids[index] for index, _ in items])
                continue
            accepted_here: dict[str, Reply] = {}  # by command key: this game's commands accepted in this batch
            for index, env in items:
                logs.bind(game_id=game_id, seat=env.seat, command_id=env.command_id,
                          trace_id=trace_id(env.traceparent))
                first = accepted_here.get(command_key(env))
                if first is not None:
                    # the same command again in this batch (a resend): its answer, before the store holds it (the
                    # end of the game it made drops accepted outcomes; its events are not in the stream yet)
                    append, reply = answered(slot, env, first), first
                else:
                    append, reply, slot = await self._decide(slot, env, entries[index])
                    if reply.status == "accepted" and append.command_key:
                        accepted_here[append.command_key] = reply
                decided.append((index, env, append, reply))
                slots[index] = slot
                if slot.table.exists:
                    self.cache.put(game_id, slot)
        logs.clear()

        redo: list[tuple[int, CommandEnvelope]] = []
        appends = [a for _, _, a, _ in decided]
        if raw_ids is None:
            results = await self.store.append(appends)
        else:
            results = await self.store.append(appends, Acks(self.acknowledge, [raw_ids[i] for i, _, _, _ in decided]))
        broken: set[str] = set()
        done: list[tuple[Append, Slot]] = []
        for (index, env, append, reply), result in zip(decided, results):
            if env.game_id in broken:  # decided on a state that was never stored
                redo.append((index, env))
            elif result.status == OK:
                replies[index] = reply
                if append.envelopes:
                    done.append((append, slots[index]))
                if append.command_key or reply.status != "accepted":  # not a resend answered as it was
                    key = (append.game, reply.status, reply.code)
                    counts[key] = counts.get(key, 0) + 1
            elif result.status == DUPLICATE:
                replies[index] = reply_decoder.decode(result.outcome)
                broken.add(env.game_id)
            else:
                assert result.status == CONFLICT
                redo.append((index, env))
                broken.add(env.game_id)
        for game_id in broken:
            self.cache.pop(game_id)
        await self._snapshot([(a, slot) for a, slot in done if a.game_id not in broken])
        metrics.count_commands(counts)
        if redo:
            metrics.CONFLICTS.inc(len(redo))
        redo.sort()
        return redo

    async def _accepted_reply(self, env: CommandEnvelope, version: int) -> Reply | None:
        """The answer a command of this finished game (at ``version``) got when it was accepted, rebuilt from its
        events: the stream is read once per finished game (it changes no more), not once per late command. A read
        that does not hold the whole game (the batch that ended it is not appended yet) is not kept: a command it
        accepted would be refused when resent."""
        runs = self.finished.get(env.game_id)
        if runs is None:
            envelopes = await self.store.read(env.game_id)
            runs = accepted_runs(envelopes)
            if len(envelopes) == version:
                self.finished.put(env.game_id, runs)
        return reply_of(runs, env)

    async def _first_answer(self, env: CommandEnvelope, version: int) -> Reply | None:
        """The outcome a command got (its key's, while in the store's window), else its acceptance rebuilt from
        the game stream (at ``version``, the engine's); None: this command (of this seat) was never answered."""
        recorded = await self.store.outcome(env.game_id, command_key(env))
        if recorded is not None:
            return reply_decoder.decode(recorded)
        cached = self.runs.get(env.game_id)
        if cached is None or cached[0] != version:
            envelopes = await self.store.read(env.game_id)
            cached = (len(envelopes), accepted_runs(envelopes))
            self.runs.put(env.game_id, cached)
        return reply_of(cached[1], env)

    async def _decide(self, slot: Slot, env: CommandEnvelope, entry: tuple[int, int] | None = None
                      ) -> tuple[Append, Reply, Slot]:
        table = slot.table

        async def reject(code: str, message: str) -> tuple[Append, Reply, Slot]:
            if table.status in FINISHED and table.exists:
                # The outcomes of a finished game's accepted commands went with its last append: a resent one
                # is answered from the stream, as it was the first time (the answer is sent, not recorded again).
                first = await self._accepted_reply(env, table.version)
                if first is not None:
                    return answered(slot, env, first), first, slot
            log.info("command_rejected", code=code)
            reply = Reply(env.command_id, env.game_id, "rejected", version=table.version, code=code,
                          message=message, seat=env.seat)
            # A refusal of a game that does not exist (yet) is not recorded: a command reclaimed late, after its
            # CreateGame, or resent, must be decided again. Nor is the clock's ``not_due`` (a platform command,
            # for no seat): a worker whose clock ran ahead of this one's sends the same command (its id is the
            # game's version's) again later, which must then be decided, not answered "not due" for good.
            key = command_key(env) if table.exists and not (env.seat is None and code == NOT_DUE) else ""
            append = Append(env.game_id, table.game, table.version, (), key, encoder.encode(reply),
                            prev_hash=slot.head, head=slot.head, notify=env.reply_to)
            return append, reply, slot

        if slot.accepted is not None and table.status not in FINISHED and env.command_id in slot.accepted:
            # an id this game accepted (perhaps from another seat): a resend gets its first answer, even once its
            # outcome left the store's window; it is never decided again
            first = await self._first_answer(env, table.version)
            if first is not None:
                return answered(slot, env, first), first, slot

        if entry is not None and env.seat is not None and slot.order.get(env.seat, entry) > entry:
            # Received before the seat's newest applied command (its engine died holding it, or it waited in a
            # batch that kept conflicting): applying it now would put it after a command its seat sent later.
            return await reject("superseded", "a later command of this seat was applied first; this one was not "
                                              "played: look at the game again and decide")

        # Whatever a command holds, it is answered: a body that cannot be decoded, or a decision that raises
        # (a rules bug), is refused and recorded like any refusal, never retried for ever (issue #8, poison).
        try:
            command = command_decoder(table.game or None).decode(env.body)
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError, ValueError) as exc:
            if not table.exists and not isinstance(exc, RecursionError):  # a game's command, before its game
                return await reject("game_not_found", "there is no such game")
            return await reject("bad_command", f"not a command of this game: {str(exc)[:200]}")
        if env.expected_version is not None and env.expected_version != table.version and not (
                env.seat is not None and env.seat < len(slot.since) and slot.since[env.seat] <= env.expected_version
                < table.version):  # not an answer of a simultaneous step decided where the step began
            return await reject("stale", f"the game is at version {table.version}, not {env.expected_version}: "
                                   "look at it again and decide")
        if isinstance(command, CreateGame) and not table.exists:
            command = tbl.newest_rules(command)  # a new game plays its title's newest rules, for good
        try:
            seed = slot.seed
            if isinstance(command, CreateGame) and not table.exists:
                seed = await self._seed_for(env, command)
            # The table's clock is the engine's: ``now`` is the instant its events are recorded at (a record's
            # re-run passes their ``recorded_at`` again and gets the same events).
            now = time.time()
            events = tbl.decide(table, env.seat, env.token_hash, command, Chance(seed, table.version), now=now)
        except RuleViolation as exc:
            return await reject(exc.code, exc.message)
        except (RedisError, OSError):
            raise  # the store failed: the batch is not acknowledged and comes again
        except Exception as exc:  # noqa: BLE001 - a bug in the rules must not poison the stream
            log.exception("command_failed", error=str(exc))
            return await reject("command_failed", "the server could not decide this command; it changed nothing")

        sealed = seal_events(table, events, game_id=env.game_id, command_id=env.command_id, seat=env.seat,
                             recorded_at=now, head=slot.head, seed=seed, sent_at=env.sent_at,
                             traceparent=env.traceparent, body=stored_command(table.game or command.game, command))
        table, head = sealed.table, sealed.head
        joined = next((e.seat for e in events if isinstance(e, SeatJoined)), None)
        reply = Reply(env.command_id, env.game_id, "accepted", version=table.version, events=len(events),
                      seat=env.seat if joined is None else joined)
        order, seat_entry = slot.order, None
        if entry is not None and env.seat is not None:
            order, seat_entry = {**order, env.seat: entry}, (env.seat, "%d-%d" % entry)
        append = Append(env.game_id, table.game, slot.table.version, [encoder.encode(e) for e in sealed.envelopes],
                        command_key(env), encoder.encode(reply), prev_hash=slot.head, head=head,
                        notify=env.reply_to, final=table.status in FINISHED, stored=sealed.stored,
                        seat_entry=seat_entry, next_due=next_due(table))
        log.debug("command_accepted", version=table.version, events=len(events))
        accepted = slot.accepted if slot.accepted is not None else snapshots.Accepted()
        accepted.add(env.command_id)
        return append, reply, Slot(table, head, seed, tbl.awaited_since(slot.since, slot.table, table, env.seat),
                                   order, accepted)
