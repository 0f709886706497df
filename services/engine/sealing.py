"""One accepted command's events made into the game stream's envelopes: folded, redacted for the chain, sealed.

The engine does this for every command it accepts; ``services.history.verify`` does exactly the same when it
re-runs a record's commands (and ``souk import`` when it makes a record a game again), so that the events it
produces can be compared with the recorded ones byte for byte. Pure: no I/O, no clock (the caller gives the time).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from contracts.envelope import CHAIN, ChainLink, EventEnvelope, commitment, link_hash
from contracts.table import SeatJoined
from domain import table as tbl
from services.store.codec import encoder, stored_form, stored_forms, tag_of


@dataclass(slots=True)
class Sealed:
    table: tbl.Table  # the table once the events are folded
    head: str  # the last event's hash
    envelopes: list[EventEnvelope]
    stored: list[bytes]  # their game stream forms (services/store/codec.py)


def event_seat(event: Any, seat: int | None) -> int | None:
    """The seat an event's envelope carries: its command's, but a SeatJoined's own (the seat taken)."""
    return event.seat if isinstance(event, SeatJoined) else seat


def command_seat(envelopes: Sequence[EventEnvelope]) -> int | None:
    """The seat of the command that made these envelopes (``event_seat`` read backwards); None when its events
    are all SeatJoined (a join: the rules do not look at its seat)."""
    return next((e.seat for e in envelopes if e.type != _SEAT_JOINED), None)


_SEAT_JOINED = tag_of(SeatJoined(0, "", ""))


def seal_events(table: tbl.Table, events: Sequence[Any], *, game_id: str, command_id: str, seat: int | None,
                recorded_at: float, head: str, seed: bytes, body: list | None = None, sent_at: float = 0.0,
                traceparent: str = "") -> Sealed:
    """``events``, decided on ``table`` for the command ``command_id`` of ``seat``, after the event whose hash is
    ``head``: each folded (with its origin), and sealed in the chain as a spectator sees it plus a salted
    commitment to what it hides. ``body``: the command (``codec.stored_command``), kept with its first event."""
    envelopes: list[EventEnvelope] = []
    stored: list[bytes] = []
    before_seat: object = stored  # nothing yet
    for event in events:
        own = event_seat(event, seat)
        table = tbl.evolve(table, event, tbl.Origin(own, command_id))
        payload = encoder.encode(event)
        spectator = tbl.redact(table, event, None)
        secret = {}
        public = b""
        if spectator is not event:  # the chain covers what a spectator sees and a salted commitment to the rest
            public = encoder.encode(spectator)
            secret = {"public": msgspec.Raw(public), "commitment": commitment(seed, game_id, table.version, payload)}
        tag = tag_of(event)
        raw = msgspec.Raw(payload)
        # the chain's link (``contracts.envelope.link_of`` of the envelope below, built without it: the envelope is
        # made once, with its hash, instead of made and copied by ``seal``); an event that hides nothing: the chain
        # covers the event itself
        link = ChainLink(game_id, table.version, tag, command_id, own, recorded_at, head,
                         secret["public"] if secret else raw, secret["commitment"] if secret else "")
        sealed = EventEnvelope(
            game_id=game_id, seq=table.version, type=tag, payload=raw, command_id=command_id,
            seat=own, recorded_at=recorded_at, prev_hash=head, hash=link_hash(link), sent_at=sent_at, chain=CHAIN,
            traceparent=traceparent, **secret,
        )
        head = sealed.hash
        envelopes.append(sealed)
        first = body if not stored else None
        if tag.startswith("table."):
            stored += stored_forms([sealed], sealed.prev_hash, first)
        else:  # msgspec writes the tag first: the compact form holds it
            stored.append(stored_form(payload, head, public, sealed.commitment,
                                      None if own == before_seat else (command_id, recorded_at, own), first,
                                      table.game))
        before_seat = own
    return Sealed(table, head, envelopes, stored)
