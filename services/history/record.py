"""A game's portable record (issue #10 section 4): one JSON document holding the header, every accepted command,
every event with its envelope and hash, and the seed with its commitment, that anyone can check without the
server (``services.history.verify.verify_record`` re-runs the commands through the rules). ``GET
/games/{id}/record`` and ``souk export`` give it; ``souk archive`` writes one per finished game before removing
the game's hot keys; ``souk import`` makes one a game again.

Layout (``Record``; a ``.souk.json`` file):

- ``format`` ("souk.record") and ``version`` (1): what reads it.
- ``header``: what the events give (``header_of``; ``verify`` checks each field against them but
  ``archived_at``, which they cannot give): the game's id, name, title, seats, options, players' names, status
  (over or cancelled), result, creation and end times, the number of events and the chain head (the last
  event's hash), whether the game is unfair (its creator chose the seed), the game it is a rematch of, the game
  whose record it was imported from, and for a fork the game and version its position comes from (its CreateGame holds that position's events).
- ``seed`` (hex) and ``seed_hash``, the commitment published at creation (sha256 of the seed): ``GameCreated``
  holds the commitment, ``GameEnded`` the seed. The game's chance is that seed mixed with the seats' entropy
  (their ``SeatJoined``), committed by ``GameStarted.chance_hash``: ``verify`` checks it (``tbl.check_chance``).
- ``events``: every ``EventEnvelope`` as the game stream holds it (``payload``, and for an event that hides
  something ``public`` and ``commitment``; ``hash``/``prev_hash`` chain them: ``contracts.envelope.chain_hash``).
- ``commands``: every accepted command (``RecordedCommand``), in order: the version it was decided on (its events
  follow from the next one), its id, its seat, and its body as JSON. None in records written before Souk kept
  commands (2026-11-23): their events cannot be re-run. A command carries no token: the rules check a seat's
  command against the token hash its SeatJoined recorded, and the verifier decides it with that hash (the engine
  checked the sender's token against it when the command came); a command without a seat is the platform's, or
  the creator's.
"""

from __future__ import annotations

from itertools import islice, takewhile
from typing import Any

import msgspec

from contracts.envelope import GENESIS_HASH, EventEnvelope
from contracts.table import ForkedFrom, GameCreated
from domain import table as tbl
from services.history.audit import verify_audit
from services.engine.sealing import command_seat
from services.store.codec import command_of, decode_stream, encoder, fold_stream, origins, same_command

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
    unfair: bool = False  # the creator chose the seed (CreateGame.unfair)
    rematch_of: str = ""
    archived_at: float = 0.0
    imported_from: str = ""  # `souk import`: the game whose record this game was made from
    forked_from: ForkedFrom | None = None  # a fork: the finished game and the version its position comes from


class RecordedCommand(msgspec.Struct, frozen=True, kw_only=True):
    """One accepted command: decided on the game at ``version``, its events are ``version + 1`` and on."""

    version: int
    command_id: str
    seat: int | None
    command: msgspec.Raw  # the command's JSON, e.g. {"type":"yspahan.PlaceCube","shop":"CHEST-4.4"}


class Record(msgspec.Struct, frozen=True, kw_only=True):
    format: str = FORMAT
    version: int = VERSION
    header: RecordHeader
    seed: str  # hex
    seed_hash: str  # sha256 hex of the seed, published at creation (GameCreated.seed_hash)
    events: tuple[EventEnvelope, ...]
    commands: tuple[RecordedCommand, ...] | None = None  # None: a record of before Souk kept commands


_decoder = msgspec.json.Decoder(Record)


class RecordError(ValueError):
    """A record that cannot be made or read, said in one line."""


def make(game_id: str, envelopes: list[EventEnvelope], seed: bytes, archived_at: float = 0.0,
         commands: dict[int, Any] | None = None) -> Record:
    """The record of a finished game from its events, its seed, and its commands as the store keeps them
    (``EventStore.read_with_commands``: stored bodies by the seq of each one's first event; None: not read)."""
    if not envelopes:
        raise RecordError(f"game {game_id}: no events")
    table = fold_stream(envelopes)
    if table.status not in (tbl.OVER, tbl.CANCELLED):
        raise RecordError(f"game {game_id} is {table.status}, not finished")
    header = header_of(game_id, table, envelopes, archived_at)
    recorded = None if not commands else recorded_commands(table.game, envelopes, commands)
    return Record(header=header, seed=seed.hex(), seed_hash=table.seed_hash, events=tuple(envelopes),
                  commands=recorded)


# The header's fields the events cannot determine: taken on the word of whoever wrote the record (``souk archive``'s
# time). Every other field is what ``header_of`` derives from the events, and ``verify`` checks it against them.
UNVERIFIED = ("archived_at",)
CHECKED = ("game_id", "game", "title", "seats", "options", "players", "status", "result", "created_at", "ended_at",
           "events", "head", "unfair", "rematch_of", "imported_from", "forked_from")


def header_of(game_id: str, table: tbl.Table, envelopes: list[EventEnvelope], archived_at: float = 0.0
              ) -> RecordHeader:
    """The header the events give: ``table`` is them folded (``archived_at``, which they cannot give, apart)."""
    return RecordHeader(
        game_id=game_id, game=table.game, title=table.title, seats=table.seats,
        options=_plain(table.options), players=tuple(p.name if p else None for p in table.players),
        status=table.status, result=_plain(table.result),
        created_at=envelopes[0].recorded_at if envelopes else 0.0,
        ended_at=envelopes[-1].recorded_at if envelopes else 0.0, events=len(envelopes),
        head=envelopes[-1].hash if envelopes else GENESIS_HASH, unfair=table.unfair, rematch_of=table.rematch_of,
        archived_at=archived_at, imported_from=table.imported_from, forked_from=table.forked_from)


def header_problems(record: Record, table: tbl.Table) -> list[str]:
    """Each field of the record's header (but ``UNVERIFIED``'s) that is not what its events folded (``table``)
    give: a header that lies about its title, players, dates, unfairness or the games it names."""
    header = record.header
    expected = header_of(header.game_id, table, list(record.events), header.archived_at)
    problems = []
    for name in CHECKED:
        if name in ("events", "head", "game_id", "status", "result"):  # said by verify's own checks
            continue
        claimed, given = _plain(getattr(header, name)), _plain(getattr(expected, name))
        if claimed != given:
            problems.append(f"the header's {name} is {_brief(claimed)}, the events say {_brief(given)}")
    return problems


def _brief(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def recorded_commands(game: str, envelopes: list[EventEnvelope], stored: dict[int, Any]
                      ) -> tuple[RecordedCommand, ...]:
    """The record's commands from their stored bodies (by the seq of each one's first event)."""
    out = []
    for seq in sorted(stored):
        first = envelopes[seq - 1]
        run = list(takewhile(lambda e: same_command(e, first), islice(envelopes, seq - 1, None)))
        try:
            command = command_of(game, stored[seq])
        except ValueError as exc:
            raise RecordError(f"the command of event {seq} cannot be read: {exc}") from None
        out.append(RecordedCommand(version=seq - 1, command_id=first.command_id, seat=command_seat(run),
                                   command=msgspec.Raw(encoder.encode(command))))
    return tuple(out)


def check_fair_chance(events: list[Any], seed: str) -> list[str]:
    """A game's chance from its decoded events and its revealed server seed (hex): the seed against GameCreated's
    commitment, and the game's seed it gives mixed with the seats' entropy (their SeatJoined) against GameStarted's
    commitment (``domain.table.check_chance``). The problems found; none: it holds."""
    return tbl.check_chance(events, bytes.fromhex(seed))


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

    Every field of the header is checked against what the events give (``header_problems``) but those they cannot
    give (``UNVERIFIED``: when it was archived), which a verdict names as taken on trust.

    The hash chain from the genesis to the header's head, each commitment against its payload, the seed against
    its commitment (``seed_hash`` and the one GameCreated published) and against the one GameEnded revealed, the
    game's chance mixed from it and the seats' entropy (``check_fair_chance``), and the events folded by the rules
    to the header's status and result."""
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
        table = tbl.fold(events, origins=origins(envelopes))
    except Exception as exc:  # noqa: BLE001 - a record is outside data: whatever fails to fold is a finding
        return [*problems, f"the events do not fold by the rules: {exc}"]
    created = events[0] if events else None
    if not isinstance(created, GameCreated) or created.seed_hash != record.seed_hash:
        problems.append("the seed commitment is not the one published at creation")
    ended = getattr(events[-1], "seed", None) if events else None
    if ended is not None and ended != record.seed:
        problems.append("the seed is not the one the game revealed at its end")
    problems += check_fair_chance(events, record.seed)
    if table.status != header.status:
        problems.append(f"the events end the game {table.status!r}, the header says {header.status!r}")
    if _plain(table.result) != _plain(header.result):
        problems.append("the events give another result than the header's")
    return problems + header_problems(record, table)
