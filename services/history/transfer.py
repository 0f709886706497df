"""Records between servers: ``read_record`` (the record of a finished game of an event store: what ``GET
/games/{id}/record`` serves and ``souk export`` prints), ``import_record`` (a verified record made a finished game
of this server under a new id), ``replay`` (the table at version N, folded from a record).

Importing: the record's commands are re-run under the new id (the chain covers the game id, so every hash and
commitment is the new game's own), each appended as the engine appends an accepted command, in one script. Its
first command is the record's CreateGame naming the game it comes from (``imported_from``: in its GameCreated, the
lobby and its own record's header). The projectors build its read models from ``souk:events`` as for a game played
here (a finished game's history is a cache that expires: ``services/projector/history.py``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import redis.asyncio as aioredis

from contracts.envelope import Reply
from domain import table as tbl
from services.history import record as records
from services.history.verify import rerun, verify_record
from services.store import keys
from services.store.codec import decode_stream, encoder, origins
from services.store.events import OK, Append, EventStore, RedisEventStore

FINISHED = (tbl.OVER, tbl.CANCELLED)


async def read_record(store: EventStore, events: aioredis.Redis, game_id: str) -> records.Record:
    """The record of a finished game of this event store (``RecordError``: no such game, not finished)."""
    envelopes, commands = await store.read_with_commands(game_id)
    if not envelopes:
        from services.history.archive import tombstone

        gone = await tombstone(events, game_id)
        raise records.RecordError(f"no game {game_id!r} here" + (
            f": it was archived to its record ({gone.record})" if gone is not None else ""))
    return records.make(game_id, envelopes, await events.get(keys.seed(game_id)) or b"", commands=commands)


async def import_record(events: aioredis.Redis, record: records.Record, game_id: str = "",
                        progress: Callable[[int], None] | None = None) -> str:
    """The record made a finished game of this event store (see the module's doc); returns its id. Refused
    (``RecordError``, one line) when the record does not verify."""
    verdict = verify_record(record, progress)
    if not verdict.ok:
        raise records.RecordError(f"not imported: the record does not verify: {verdict.summary()}")
    game_id = game_id or uuid.uuid4().hex[:12]
    if not await events.set(keys.seed(game_id), bytes.fromhex(record.seed), nx=True):
        raise records.RecordError(f"not imported: a game {game_id!r} exists")
    await _append_game(events, record, game_id)
    return game_id


async def _append_game(events: aioredis.Redis, record: records.Record, game_id: str) -> None:
    """The record's commands re-run under ``game_id`` and appended, all of the game in one script, or none (then
    the seed that reserved the id goes too: nothing of the game stays)."""
    appends = []
    for recorded, sealed in rerun(record, game_id=game_id, imported_from=record.header.game_id):
        table, envelopes = sealed.table, sealed.envelopes
        joined = next((e.seat for e in envelopes if e.type == "table.SeatJoined"), None)
        reply = Reply(recorded.command_id, game_id, "accepted", version=table.version, events=len(envelopes),
                      seat=recorded.seat if joined is None else joined)
        key = f"{'-' if recorded.seat is None else recorded.seat}:{recorded.command_id}"  # the engine's command key
        appends.append(Append(game_id, record.header.game, table.version - len(envelopes),
                              [encoder.encode(e) for e in envelopes], key, encoder.encode(reply),
                              prev_hash=envelopes[0].prev_hash, head=sealed.head, final=table.status in FINISHED,
                              stored=sealed.stored))
    store = RedisEventStore(events)
    try:
        results = await store.append(appends)  # one script: all of the game, or (a failure) none of it
    finally:
        await store.aclose()
    if any(r.status != OK for r in results):
        await events.delete(keys.seed(game_id))
        raise records.RecordError(f"not imported: the event store refused the game {game_id!r}")


def replay(record: records.Record, to: int | None = None, progress: Callable[[int], None] | None = None
           ) -> tbl.Table:
    """The table at version ``to`` (default: the end), folded from the record's events."""
    envelopes = list(record.events[:len(record.events) if to is None else to])
    events, who = decode_stream(envelopes), origins(envelopes)
    table = tbl.EMPTY
    for start in range(0, len(events), 100):
        table = tbl.fold(events[start:start + 100], table, who[start:start + 100])
        if progress is not None:
            progress(len(events[start:start + 100]))
    return table


def scores(table: tbl.Table, view: Any) -> list[int] | None:
    """Each seat's score: the result's once over, else the score each player shows in the spectator's view (the
    games that keep a running score), else None."""
    if table.result is not None:
        return list(table.result.scores)
    players = getattr(view, "players", None) or ()
    found = [getattr(p, "score", None) for p in players]
    return found if found and all(isinstance(s, int) for s in found) else None
