"""Time travel: a game's table at any version, from the nearest snapshot at or below it plus the events after it.

The projector writes a snapshot of each game's table every ``SOUK_SNAPSHOT_EVERY`` events (default 100) into the
read store: ``souk:snapshots:{game}``, a sorted set scored by version, each member ``{version}:`` and the table
(``domain.table.encode_table``, zlib, base64: the projector's writes go through Lua, whose MessagePack reads no
binary). ``table_at`` reads the nearest one at or below the version asked for (one ZREVRANGEBYSCORE), then only the
game stream's entries after it (one round trip: ``read_events``), and folds them with their origins
(``codec.fold_stream``): its cost depends on the snapshot interval, not on the game's length.

A snapshot is a cache: without any (deleted, expired, a read store lost, one that no longer decodes) the table is
folded from the game's first event, and is the same. Snapshots go with the game's other read models: a rebuild
writes them again, ``souk archive`` deletes them.

The gateway answers ``?at=N`` with ``table_at`` (``services.gateway.stores.Reads.table_at``), ``souk bench
history`` times it.
"""

from __future__ import annotations

from dataclasses import dataclass

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from contracts.envelope import EventEnvelope
from domain import table as tbl
from services.store import keys
from services.store.snapshots import snapshot_table
from services.store.codec import (
    event_envelope_decoder,
    fold_stream,
    same_command,
    starts_command,
    stored_envelopes,
)

ANCHOR_BATCH = 16  # entries read back from a snapshot's version to find where its command's fields are


async def read_snapshot(views: aioredis.Redis, game_id: str, version: int) -> tbl.Table | None:
    """The newest snapshot of the game at or below ``version`` (None: none, or the read store does not answer)."""
    try:
        found = await views.zrevrangebyscore(keys.snapshots(game_id), version, "-inf", start=0, num=1)
    except RedisError:
        return None
    return snapshot_table(found[0]) if found else None


@dataclass(frozen=True, slots=True)
class Events:
    envelopes: list[EventEnvelope]  # after < seq <= until
    length: int  # the game stream's length (its version); 0: no such game (or archived)
    over: bool  # its last event is GameEnded
    previous: EventEnvelope | None = None  # the envelope at ``after`` (None: after is 0, or nothing was read)


async def read_events(events: aioredis.Redis, game_id: str, after: int, until: int, game: str = "") -> Events:
    """The game stream's envelopes ``after`` < seq <= ``until``, its length and whether the game is over, in one
    round trip (two when the command of the entry at ``after`` began more than ``ANCHOR_BATCH`` entries before it).

    A compact entry may take its command's id, time and seat from the entries before it
    (``services.store.codec``): the entries from the last one that starts a command, at or before ``after``, are
    read and decoded too, then dropped. ``game``: the game's name, which the compact entries after the first leave
    out (needed when ``after`` > 0)."""
    stream = keys.game_stream(game_id)
    pipe = events.pipeline(transaction=False)
    pipe.xlen(stream)
    pipe.xrevrange(stream, max="+", min="-", count=1)
    if until > after:
        pipe.xrange(stream, min=f"{after + 1}-0", max=f"{until}-0")
    if after > 0:
        pipe.xrevrange(stream, max=f"{after}-0", min="-", count=ANCHOR_BATCH)
    replies = await pipe.execute()
    length, last = replies[0], replies[1]
    tail = replies[2] if until > after else []
    over = bool(last) and last[0][1][b"e"][:1] == b"{" and (
        event_envelope_decoder.decode(last[0][1][b"e"]).type == "table.GameEnded")  # the table's events: JSON
    if not tail or length == 0:
        return Events([], length, over)
    before: list = []
    if after > 0:
        back = replies[-1]
        while True:
            start = next((i for i, (_, f) in enumerate(back) if starts_command(f[b"e"])), None)
            if start is not None:
                before = back[start::-1] + before
                break
            before = back[::-1] + before
            if len(back) < ANCHOR_BATCH:  # the stream's first entry always starts a command: not reached
                raise ValueError(f"game {game_id}: no entry starts a command at or before {after}")
            oldest = int(back[-1][0].split(b"-")[0])
            back = await events.xrevrange(stream, max=f"{oldest - 1}-0", min="-", count=ANCHOR_BATCH)
    envelopes = stored_envelopes(game_id, ((i, f[b"e"]) for i, f in before + tail), game=game)
    return Events(envelopes[len(before):], length, over, envelopes[len(before) - 1] if before else None)


@dataclass(frozen=True, slots=True)
class At:
    table: tbl.Table  # the table at the version asked for (EMPTY when the game does not exist)
    length: int  # the game's version now
    over: bool  # the game is over now
    snapshot: int  # the version of the snapshot it started from (0: none)


class BadVersion(ValueError):
    """The version asked for is not one of the game's (1 to its current version)."""

    def __init__(self, version: int, length: int) -> None:
        super().__init__(f"version {version} is not one of this game's: it has versions 1 to {length}")
        self.version, self.length = version, length


async def table_at(events: aioredis.Redis, views: aioredis.Redis | None, game_id: str, version: int) -> At:
    """The game's table at ``version``: the nearest snapshot at or below it (from ``views``, the read store; None:
    no snapshot) plus the events after it. ``length`` 0: no such game. Raises ``BadVersion`` when the game has no
    such version.

    A version inside a command (its events were appended together: a join's GameStarted and the setup's shuffles
    and deals, a move and the scoring it triggers) was never anyone's to see: the table is the one before that
    command (its ``version`` says so)."""
    snapshot = await read_snapshot(views, game_id, version) if views is not None and version > 0 else None
    start = snapshot.version if snapshot is not None else 0
    read = await read_events(events, game_id, start, version + 1,  # the next event: does a command go on?
                             snapshot.game if snapshot is not None else "")
    if read.length == 0:
        return At(tbl.EMPTY, 0, False, 0)
    if not 1 <= version <= read.length:
        raise BadVersion(version, read.length)
    envelopes = read.envelopes[:version - start]
    end = version
    if len(read.envelopes) > version - start:  # version is not the last: the command of its event may go on
        chain = ([read.previous] if read.previous is not None else []) + envelopes
        if chain and same_command(chain[-1], read.envelopes[version - start]):
            i = len(chain) - 1
            while i > 0 and same_command(chain[i - 1], chain[i]):
                i -= 1
            end = chain[i].seq - 1  # the version before the command
            if i == 0 and read.previous is not None:  # the command began before the snapshot: fold without it
                return await _fold_from_the_start(events, game_id, version, read)
            envelopes = envelopes[:end - start]
    table = fold_stream(envelopes, snapshot or tbl.EMPTY)
    if table.version != end:  # a snapshot ahead of the stream: not this game's (a cache never wins)
        return await _fold_from_the_start(events, game_id, version, read)
    return At(table, read.length, read.over, start)


async def _fold_from_the_start(events: aioredis.Redis, game_id: str, version: int, read: Events) -> At:
    at = await table_at(events, None, game_id, version)
    return At(at.table, read.length, read.over, 0)
