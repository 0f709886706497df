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
from contracts.table import UndoneRange, UndoView
from domain import table as tbl
from services.projector.service import history_record
from services.store import keys
from services.store.codec import encoder, event_decoder, game_name
from services.store.events import EventStore, RedisEventStore

_record = msgspec.json.Decoder(HistoryRecord)


class _Undo(msgspec.Struct):
    """The one field of a stored TableView the history needs: what was undone."""

    undo: UndoView | None = None


_undo = msgspec.json.Decoder(_Undo)


async def read_history(events: aioredis.Redis, views: aioredis.Redis, game_id: str, seat: int | None, after: int,
                       limit: int, store: EventStore | None = None) -> HistoryPage:
    """The entries ``after`` < seq <= ``after + limit`` as ``seat`` (None: a spectator) may see them, with the
    version the read models are at. ``events`` is the event store's Redis, ``views`` the read store's."""
    pipe = views.pipeline(transaction=True)
    pipe.lrange(keys.history(game_id), after, min(after + limit - 1, MAX_INT))  # Redis: signed 64-bit
    pipe.get(keys.position(game_id))
    pipe.exists(keys.history(game_id))
    pipe.hget(keys.views(game_id), keys.audience(None))  # the undone ranges, at the same position
    raw, position, kept, view = await pipe.execute()
    position = int(position or 0)
    audience = keys.audience(seat)
    if kept or not position:
        entries = tuple(_record.decode(r).for_audience(audience) for r in raw)
    else:  # projected, and its history expired (a finished game) or lost: from the game stream
        entries = await derive_history(store or RedisEventStore(events), game_id, audience, after,
                                       min(after + limit, position))
    return HistoryPage(game_id, seat, marked_undone(entries, _undone_ranges(view)), after + len(entries), position)


def _undone_ranges(view: bytes | None) -> tuple[UndoneRange, ...]:
    undo = _undo.decode(view).undo if view else None
    return undo.undone if undo is not None else ()


def marked_undone(entries: tuple[HistoryEntry, ...], ranges: tuple[UndoneRange, ...]) -> tuple[HistoryEntry, ...]:
    """The entries, those inside an undone range with ``undone`` set."""
    if not ranges:
        return entries
    return tuple(msgspec.structs.replace(e, undone=True) if any(r.first <= e.seq <= r.last for r in ranges) else e
                 for e in entries)


async def derive_history(store: EventStore, game_id: str, audience: str, after: int, until: int
                         ) -> tuple[HistoryEntry, ...]:
    """The history entries ``after`` < seq <= ``until`` as ``audience`` ("0", "1"... or "spectator") may see them,
    from the event store (the same entries the projector writes)."""
    if until <= after:
        return ()
    envelopes = (await store.read(game_id))[:until]
    if not envelopes:
        return ()
    decode = event_decoder(game_name(envelopes[0])).decode
    table, out = tbl.EMPTY, []
    for env in envelopes:
        event = decode(env.payload)
        table = tbl.evolve(table, event, tbl.Origin(env.seat, env.command_id))  # as codec.fold_stream
        if env.seq > after:
            out.append(history_record(table, event, env).for_audience(audience))
    return tuple(out)


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
