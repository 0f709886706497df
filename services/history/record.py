"""A game's portable record (issue #10 section 4, as far as today's data goes): one JSON document holding the
header, every event with its envelope and hash, and the seed with its commitment, that anyone can check without
the server (``verify_record``). ``souk archive`` writes one per finished game before removing the game's hot keys.

Layout (``Record``; a ``.souk.json`` file):

- ``format`` ("souk.record") and ``version`` (1): what reads it.
- ``header``: the game's id, name, title, seats, options, players' names, status (over or cancelled), result,
  creation and end times, the number of events and the chain head (the last event's hash), whether the seed was
  chosen by the creator, and the game it is a rematch of.
- ``seed`` (hex) and ``seed_hash``, the commitment published at creation (sha256 of the seed): ``GameCreated``
  holds the commitment, ``GameEnded`` the seed.
- ``events``: every ``EventEnvelope`` as the game stream holds it (``payload``, and for an event that hides
  something ``public`` and ``commitment``; ``hash``/``prev_hash`` chain them: ``contracts.envelope.chain_hash``).
- ``commands``: None for now. Issue #10 stores each accepted command's body with its events; a record will then
  carry them here, so that ``souk verify`` can decide them again.
"""

from __future__ import annotations

from typing import Any

import msgspec

from contracts.envelope import GENESIS_HASH, EventEnvelope
from contracts.table import GameCreated
from domain import table as tbl
from services.history.audit import verify_audit
from services.store.codec import decode_stream, encoder

FORMAT = "souk.record"
VERSION = 1


class RecordHeader(msgspec.Struct, frozen=True, kw_only=True):
    game_id: str
    game: str
    title: str
    seats: int
    options: Any
    players: tuple[str | None, ...]
    status: str  # over / cancelled
    result: Any = None  # contracts.table.Result when over
    created_at: float
    ended_at: float
    events: int
    head: str  # the last event's hash
    seed_chosen: bool = False
    rematch_of: str = ""
    archived_at: float = 0.0


class Record(msgspec.Struct, frozen=True, kw_only=True):
    format: str = FORMAT
    version: int = VERSION
    header: RecordHeader
    seed: str  # hex
    seed_hash: str  # sha256 hex of the seed, published at creation (GameCreated.seed_hash)
    events: tuple[EventEnvelope, ...]
    commands: tuple[Any, ...] | None = None  # the accepted commands' bodies: issue #10 adds them


_decoder = msgspec.json.Decoder(Record)


class RecordError(ValueError):
    """A record that cannot be made or read, said in one line."""


def make(game_id: str, envelopes: list[EventEnvelope], seed: bytes, archived_at: float = 0.0) -> Record:
    """The record of a finished game from its events and its seed."""
    if not envelopes:
        raise RecordError(f"game {game_id}: no events")
    table = tbl.fold(decode_stream(envelopes))
    if table.status not in (tbl.OVER, tbl.CANCELLED):
        raise RecordError(f"game {game_id} is {table.status}, not finished")
    header = RecordHeader(
        game_id=game_id, game=table.game, title=table.title, seats=table.seats,
        options=_plain(table.options), players=tuple(p.name if p else None for p in table.players),
        status=table.status, result=_plain(table.result),
        created_at=envelopes[0].recorded_at, ended_at=envelopes[-1].recorded_at, events=len(envelopes),
        head=envelopes[-1].hash, seed_chosen=table.seed_chosen, rematch_of=table.rematch_of,
        archived_at=archived_at)
    return Record(header=header, seed=seed.hex(), seed_hash=table.seed_hash, events=tuple(envelopes))


def _plain(value: Any) -> Any:
    """A value as its JSON reads back (tuples as lists), to compare what was folded with what a record holds."""
    return msgspec.json.decode(encoder.encode(value))


def encode(record: Record) -> bytes:
    return encoder.encode(record)


def decode(data: bytes) -> Record:
    try:
        record = _decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise RecordError(f"not a Souk record: {exc}") from None
    if record.format != FORMAT or record.version > VERSION:
        raise RecordError(f"not a Souk record this server reads ({record.format} version {record.version})")
    return record


def verify(record: Record) -> list[str]:
    """Everything a record lets anyone check without the server; the problems found (none: it holds).

    The hash chain from the genesis to the header's head, each commitment against its payload, the seed against
    its commitment (``seed_hash`` and the one GameCreated published) and against the one GameEnded revealed, and
    the events folded by the rules to the header's status and result."""
    try:
        bytes.fromhex(record.seed)
    except ValueError:
        return ["the seed is not hex"]
    problems = verify_audit({"seed": record.seed, "seed_hash": record.seed_hash,
                             "events": msgspec.json.decode(encoder.encode(record.events))})
    header = record.header
    envelopes = list(record.events)
    if [e.seq for e in envelopes] != list(range(1, len(envelopes) + 1)):
        problems.append("the events are not numbered 1, 2, 3... in order")
    if len(envelopes) != header.events:
        problems.append(f"the header says {header.events} events, the record holds {len(envelopes)}")
    if (envelopes[-1].hash if envelopes else GENESIS_HASH) != header.head:
        problems.append("the last event's hash is not the header's head")
    if any(e.game_id != header.game_id for e in envelopes):
        problems.append("an event belongs to another game")
    try:
        events = decode_stream(envelopes)
        table = tbl.fold(events)
    except Exception as exc:  # noqa: BLE001 - a record is outside data: whatever fails to fold is a finding
        return [*problems, f"the events do not fold by the rules: {exc}"]
    created = events[0] if events else None
    if not isinstance(created, GameCreated) or created.seed_hash != record.seed_hash:
        problems.append("the seed commitment is not the one published at creation")
    ended = getattr(events[-1], "seed", None) if events else None
    if ended is not None and ended != record.seed:
        problems.append("the seed is not the one the game revealed at its end")
    if table.status != header.status:
        problems.append(f"the events end the game {table.status!r}, the header says {header.status!r}")
    if _plain(table.result) != _plain(header.result):
        problems.append("the events give another result than the header's")
    return problems
