"""Reading a game's history as one audience may see it: from the read model while it is kept (a game in play, and
a finished one for ``FINISHED_TTL_S`` after its end), else derived from the game stream by redacting on read.

A finished game's history is only a cache: the projector lets it expire (``Projector.finished_ttl_s``), and this
reads the same entries from the event store, folding the game to know what each event showed whom. The gateway
reads every history page through ``read_history``.
"""

from __future__ import annotations

import msgspec
import redis.asyncio as aioredis

from contracts.api import MAX_INT
from contracts.readmodels import HistoryEntry, HistoryPage, HistoryRecord
from contracts.table import UndoApplied, UndoneRange
from domain import table as tbl
from services.projector.service import history_record, undone_range
from services.store import keys
from services.store.codec import encoder, event_decoder, game_name
from services.store.events import EventStore, RedisEventStore

_record = msgspec.json.Decoder(HistoryRecord)


async def read_history(events: aioredis.Redis, views: aioredis.Redis, game_id: str, seat: int | None, after: int,
                       limit: int, store: EventStore | None = None) -> HistoryPage:
    """The entries ``after`` < seq <= ``after + limit`` as ``seat`` (None: a spectator) may see them, with the
    version the read models are at. ``events`` is the event store's Redis, ``views`` the read store's."""
    pipe = views.pipeline(transaction=True)
    pipe.lrange(keys.history(game_id), after, min(after + limit - 1, MAX_INT))  # Redis: signed 64-bit
    pipe.get(keys.position(game_id))
    pipe.exists(keys.history(game_id))
    pipe.zrangebyscore(keys.undone(game_id), after + 1, "+inf")  # the undos that may mark them, at the same position
    raw, position, kept, undone = await pipe.execute()
    position = int(position or 0)
    audience = keys.audience(seat)
    if kept or not position:
        entries = marked_undone(tuple(_record.decode(r).for_audience(audience) for r in raw),
                                tuple(undone_range(m) for m in undone))
    else:  # projected, and its history expired (a finished game) or lost: from the game stream
        entries = await derive_history(store or RedisEventStore(events), game_id, audience, after,
                                       min(after + limit, position), position)
    return HistoryPage(game_id, seat, entries, after + len(entries), position)


def marked_undone(entries: tuple[HistoryEntry, ...], ranges: tuple[UndoneRange, ...]) -> tuple[HistoryEntry, ...]:
    """The entries, those inside an undone range with ``undone`` set."""
    if not ranges:
        return entries
    return tuple(msgspec.structs.replace(e, undone=True) if any(r.first <= e.seq <= r.last for r in ranges) else e
                 for e in entries)


async def derive_history(store: EventStore, game_id: str, audience: str, after: int, until: int,
                         position: int | None = None) -> tuple[HistoryEntry, ...]:
    """The history entries ``after`` < seq <= ``until`` as ``audience`` ("0", "1"... or "spectator") may see them,
    from the event store (the same entries the projector writes); with ``position``, those that the undos up to
    it took back marked ``undone``."""
    if until <= after:
        return ()
    envelopes = await store.read(game_id)
    if not envelopes:
        return ()
    decode = event_decoder(game_name(envelopes[0])).decode
    table, out, ranges = tbl.EMPTY, [], []
    for env in envelopes[:max(until, position or 0)]:
        event = decode(env.payload)
        if env.seq > until:  # past the page: only what an undo took back matters
            ranges += tbl.undone_ranges([event], env.seq)
            continue
        table = tbl.evolve(table, event, tbl.Origin(env.seat, env.command_id))  # as codec.fold_stream
        ranges += table.undone if isinstance(event, UndoApplied) else ()
        if env.seq > after:
            out.append(history_record(table, event, env).for_audience(audience))
    return marked_undone(tuple(out), tuple(ranges)) if position is not None else tuple(out)


async def history_records(store: EventStore, game_id: str) -> list[bytes]:
    """The whole history read model as the projector writes it (one ``HistoryRecord`` JSON per event), from the
    event store: what a finished game's history was before it expired (for checks that compare read models)."""
    envelopes = await store.read(game_id)
    if not envelopes:
        return []
    decode = event_decoder(game_name(envelopes[0])).decode
    table, out = tbl.EMPTY, []
    for env in envelopes:
        event = decode(env.payload)
        table = tbl.evolve(table, event, tbl.Origin(env.seat, env.command_id))  # as codec.fold_stream
        out.append(encoder.encode(history_record(table, event, env)))
    return out
