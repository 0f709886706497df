"""Verifying a game's record as anyone can, without the server: ``verify_record(record) -> Verdict``.

It checks what ``record.verify`` checks (the hash chain from the genesis to the header's head, each commitment
against its payload, the seed against the commitment published at creation and the one revealed at the end, every
field of the header against the events, naming in ``unverified`` those they cannot determine), then re-runs every
recorded command through the rules (``domain.table.decide`` with ``Chance(seed, version)`` and ``now`` the
``recorded_at`` of its first event, as the engine does)
and seals the events they give as the engine does
(``services.engine.sealing``): each must equal the recorded envelope byte for byte (its payload, what a spectator
sees, the commitment, the hash...). The first event that differs is named. A record whose commands are missing
(written before Souk kept them) does not verify: its events could have been made up and hashed again.

``rerun`` is the re-run itself, also used by ``souk import`` (the same commands under a new game id) and ``souk
bench history`` (its speed, events/s).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import msgspec

from contracts.envelope import GENESIS_HASH, EventEnvelope
from contracts.table import CreateGame
from domain import table as tbl
from domain.chance import Chance
from domain.kernel import RuleViolation
from services.engine.sealing import Sealed, seal_events
from services.history.record import UNVERIFIED, Record, RecordedCommand, verify as verify_structure
from services.store.codec import command_decoder, encoder, same_command, stored_command


@dataclass(frozen=True)
class Verdict:
    ok: bool
    events: int  # in the record
    commands: int  # in the record
    problems: tuple[str, ...] = ()
    first_difference: int | None = None  # the seq of the first event the re-run does not give as recorded
    rerun: int = 0  # events the re-run gave equal to the record's
    unverified: tuple[str, ...] = ()  # the header's fields the events cannot determine (record.UNVERIFIED)

    def summary(self) -> str:
        if self.ok:
            return (f"OK: {self.events} events and {self.commands} commands: every command re-run by the rules "
                    "gives the recorded events byte for byte; the hash chain and the seed hold")
        return self.problems[0]

    def to_builtins(self) -> dict[str, Any]:
        return {"ok": self.ok, "events": self.events, "commands": self.commands, "problems": list(self.problems),
                "first_difference": self.first_difference, "summary": self.summary(),
                "unverified": list(self.unverified)}


RULES_DIFFER = ("the hash chain, the commitments and the seed hold: only the re-run differs, so either the events were "
                "made up and hashed again, or the game was played under rules this server changed without keeping "
                "them as a revision (a game keeps its rules revision: docs/rules-decisions.md, Rules revisions)")


class Difference(Exception):
    """The re-run does not give the record: ``seq`` is the first event that differs."""

    def __init__(self, seq: int, message: str) -> None:
        super().__init__(message)
        self.seq = seq
        self.message = message


def chance_seed(record: Record) -> bytes:
    """The server's seed the record reveals, which ``record.verify`` checks against its commitment
    (GameCreated.seed_hash). Re-running a command gives ``Chance(seed, version)`` to ``tbl.decide``, which mixes
    the seats' entropy into it once the game has started (``domain.chance.game_seed``), as the engine's does; that
    the mix is the one GameStarted committed to is ``record.verify``'s check."""
    return bytes.fromhex(record.seed)


def _authorities(table: tbl.Table, seat: int | None) -> list[str | None]:
    """The token hashes a recorded command is decided with, in turn: a seat's command with the hash its SeatJoined
    recorded (the engine checked the sender's token against it); a command without a seat as the platform's (no
    token), then as the creator's (the creator's hash, from GameCreated)."""
    if seat is not None:
        player = table.players[seat] if 0 <= seat < len(table.players) else None
        return [player.token_hash if player is not None else None]
    return [None, table.creator_hash] if table.creator_hash else [None]


def _shown(raw: bytes, limit: int = 300) -> str:
    text = bytes(raw).decode(errors="replace")
    return text if len(text) <= limit else text[:limit] + "..."


def rerun(record: Record, game_id: str | None = None, imported_from: str | None = None,
          progress: Callable[[int], None] | None = None) -> Iterator[tuple[RecordedCommand, Sealed]]:
    """Each recorded command decided again on the game folded so far, with its events sealed as the engine
    seals them (under ``game_id``, default the record's), in order; ``Difference`` at the first command the rules
    refuse or whose events' payloads are not the recorded ones, and at the first event no command gave.
    ``imported_from``: ``souk import``'s first command is the record's CreateGame naming the game it comes from
    (its GameCreated then differs from the record's by that field alone)."""
    events = record.events
    game_id = game_id or record.header.game_id
    seed = chance_seed(record)
    table, head = tbl.EMPTY, GENESIS_HASH
    for number, recorded in enumerate(record.commands or (), start=1):
        at = table.version
        name = f"command {number} ({recorded.command_id})"
        if recorded.version != at:
            raise Difference(at + 1, f"event {at + 1}: {name} says it was decided at version {recorded.version}, "
                                     f"the game is at version {at} (commands out of order, or events missing)")
        if at >= len(events):
            raise Difference(at + 1, f"{name} follows the last event ({at})")
        try:
            command = command_decoder(table.game or None).decode(recorded.command)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise Difference(at + 1, f"event {at + 1}: {name} is not a command of this game: {exc}") from None
        if imported_from is not None and isinstance(command, CreateGame):
            command = msgspec.structs.replace(command, imported_from=imported_from)
        compare_payloads = not (imported_from is not None and isinstance(command, CreateGame))
        first = events[at]
        sealed, failure = None, None
        for token in _authorities(table, recorded.seat):
            try:
                # at the instant the engine decided it (its events' recorded_at): the clocks' arithmetic again
                decided = tbl.decide(table, recorded.seat, token, command, Chance(seed, at), now=first.recorded_at)
            except RuleViolation as exc:
                failure = failure or Difference(at + 1, f"event {at + 1}: the rules refuse {name} "
                                                        f"({_tag(command)}): {exc.code}: {exc.message}")
                continue
            except Exception as exc:  # noqa: BLE001 - a record is outside data: a rule that fails on it is a finding
                raise Difference(at + 1, f"event {at + 1}: the rules fail on {name}: {exc!r}") from None
            candidate = seal_events(table, decided, game_id=game_id, command_id=recorded.command_id,
                                    seat=recorded.seat, recorded_at=first.recorded_at, head=head, seed=seed,
                                    body=stored_command(_game_of(table, command), command))
            differs = _first_payload_difference(candidate.envelopes, events, at) if compare_payloads else None
            if differs is None:
                sealed = candidate
                break
            failure = failure or differs
        if sealed is None:
            assert failure is not None
            raise failure
        table, head = sealed.table, sealed.head
        if progress is not None:
            progress(len(sealed.envelopes))
        yield recorded, sealed
    if table.version < len(events):
        missing = events[table.version]
        why = " (the record holds no commands: it was written before Souk kept them)" if not record.commands else ""
        raise Difference(missing.seq, f"event {missing.seq} ({missing.type}) came from no command of the record{why}")


def _game_of(table: tbl.Table, command: Any) -> str:
    return table.game or getattr(command, "game", "")


def _tag(command: Any) -> str:
    return command.__struct_config__.tag


def _first_payload_difference(produced: list[EventEnvelope], events: tuple[EventEnvelope, ...], at: int
                              ) -> Difference | None:
    for i, env in enumerate(produced):
        seq = at + 1 + i
        if seq > len(events):
            return Difference(seq, f"event {seq} ({env.type}) is given by the rules but missing from the record")
        recorded = events[seq - 1]
        if bytes(env.payload) != bytes(recorded.payload):
            return Difference(seq, f"event {seq} ({recorded.type}) differs from what the rules give: recorded "
                                   f"{_shown(recorded.payload)}, re-run {_shown(env.payload)}")
    following = events[at + len(produced)] if at + len(produced) < len(events) else None
    if following is not None and same_command(following, events[at]):
        return Difference(following.seq, f"event {following.seq} ({following.type}) is recorded as its command's "
                                         "but the rules do not give it")
    return None


_ENVELOPE_FIELDS = ("type", "command_id", "seat", "recorded_at", "prev_hash", "hash", "chain", "public", "commitment")


def _envelope_difference(produced: EventEnvelope, recorded: EventEnvelope) -> str | None:
    """What differs between an envelope the re-run sealed and the recorded one, byte for byte (None: nothing)."""
    if _canonical(produced) == _canonical(recorded):
        return None
    for name in _ENVELOPE_FIELDS:
        mine, theirs = getattr(produced, name), getattr(recorded, name)
        mine, theirs = _json(mine), _json(theirs)
        if mine != theirs:
            return f"its {name} is {_shown(theirs, 120)} in the record, {_shown(mine, 120)} by the re-run"
    return "its envelope is not what the re-run gives"


def _json(value: Any) -> bytes:
    return bytes(value) if isinstance(value, msgspec.Raw) else encoder.encode(value)


def _canonical(env: EventEnvelope) -> bytes:
    return encoder.encode(msgspec.structs.replace(env, sent_at=0.0, traceparent=""))


def verify_record(record: Record, progress: Callable[[int], None] | None = None) -> Verdict:
    """Everything anyone can check of a record (see the module's doc); ``progress(n)`` is called as ``n`` more
    events are re-run (a bar's ``advance``)."""
    events = record.events
    commands = len(record.commands or ())
    problems = list(verify_structure(record))
    first, rerun_count = None, 0
    try:
        for _, sealed in rerun(record, progress=progress):
            for env in sealed.envelopes:
                differs = _envelope_difference(env, events[env.seq - 1])
                if differs is not None:
                    raise Difference(env.seq, f"event {env.seq} ({env.type}): {differs}")
                rerun_count += 1
    except Difference as exc:
        first = exc.seq
        structure_holds = not problems
        problems.insert(0, exc.message)
        if structure_holds:
            problems.append(RULES_DIFFER)
    return Verdict(not problems, len(events), commands, tuple(problems), first, rerun_count, UNVERIFIED)
