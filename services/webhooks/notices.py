"""What a game's new events mean for its webhooks: the notices (``WebhookNotice``), folded from the events alone, so
that any worker, at any time, reading them again, makes the same ones with the same keys.

- ``turn``: after a command, a seat awaited for a decision it did not owe before: it was not awaited, or its own
  move was just decided by someone else (a bot's ``PlayFor`` for it) and it owes the next one. A seat's own command
  leading to its next decision makes none (its player is in the app), nor does a decision a bot plays (the seat is
  out of the game, or absent until it sends a command).
- ``clock_low``: a seat's deadline (a ``ClocksSet``) minus the lesser of ``low_share`` of the time it had (from the
  ``ClocksSet`` that set that deadline) and ``low_s``: made due then, and cancelled when a later ``ClocksSet`` gives
  the seat another deadline or none, or the game ends.
- ``undo_requested``: to each seat an ``UndoRequested`` asks.
- ``game_ended``: to every seat, and once (seat None) to the game's own URL.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from contracts.api import WebhookNotice
from contracts.envelope import EventEnvelope
from contracts.table import BotMoved, ClocksSet, GameEnded, SeatClock, UndoRequested
from domain import table as tbl
from services.store.codec import event_decoder, game_name, same_command


@dataclass(frozen=True, slots=True)
class Thresholds:
    low_share: float = 0.2  # of the time a seat had for its decision ...
    low_s: float = 60.0  # ... or this many seconds, whichever is less, before its deadline: "clock low"


@dataclass(slots=True)
class Followed:
    """A game as the webhook worker follows it: its table, and each seat's clock_low notice made for its current
    deadline (seat -> (deadline, notice key)), to cancel when that deadline goes."""

    table: tbl.Table = tbl.EMPTY
    low: dict[int, tuple[float, str]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Due:
    """A notice and when it is due (its event's time; a clock_low's: before the deadline)."""

    notice: WebhookNotice
    at: float


def key(game_id: str, version: int, kind: str, seat: int | None) -> str:
    return f"{game_id}:{version}:{kind}:{'' if seat is None else seat}"


def follow(followed: Followed, game_id: str, envelopes: Sequence[EventEnvelope], thresholds: Thresholds
           ) -> tuple[list[Due], list[str]]:
    """Folds ``envelopes`` (the events right after ``followed.table``) into ``followed``; returns the notices they
    make, and the keys of clock_low notices they cancel."""
    made: list[Due] = []
    cancelled: list[str] = []
    start = 0
    while start < len(envelopes):
        end = start + 1
        while end < len(envelopes) and same_command(envelopes[end - 1], envelopes[end]):
            end += 1
        _command(followed, game_id, envelopes[start:end], thresholds, made, cancelled)
        start = end
    return made, cancelled


def _command(followed: Followed, game_id: str, run: Sequence[EventEnvelope], thresholds: Thresholds,
             made: list[Due], cancelled: list[str]) -> None:
    """One command's events: the turns are judged on the table before and after the whole command (inside it the
    table passes through states no reader sees, e.g. started and not yet set up)."""
    before = followed.table
    table = before
    decided_for: set[int] = set()
    for env in run:
        decode = event_decoder(table.game if table.exists else game_name(env)).decode
        event = decode(env.payload)
        table = tbl.evolve(table, event, tbl.Origin(env.seat, env.command_id))
        if env.seat is not None:
            decided_for.add(env.seat)
        if isinstance(event, BotMoved):
            decided_for.add(event.seat)
        elif isinstance(event, UndoRequested):
            for seat in event.asked:
                made.append(Due(_notice(table, game_id, env, "undo_requested", seat, to_version=event.to_version,
                                        by_seat=event.seat), env.recorded_at))
        elif isinstance(event, ClocksSet):
            _clocks(followed, table, game_id, env, event, thresholds, made, cancelled)
        elif isinstance(event, GameEnded):
            for seat in (None, *range(table.seats)):
                made.append(Due(_notice(table, game_id, env, "game_ended", seat, scores=event.scores,
                                        winners=event.winners), env.recorded_at))
    followed.table = table
    if table.status != tbl.PLAYING:  # over (or never started): no clock runs
        cancelled += [k for _, k in followed.low.values()]
        followed.low.clear()
        return
    was = set(tbl.flow(before).awaiting) if before.status == tbl.PLAYING else set()
    last = run[-1]
    for seat in tbl.flow(table).awaiting:
        new_decision = seat not in was or seat in decided_for
        if new_decision and last.seat != seat and not tbl.bot_plays(table, seat):  # a bot's decision: no news
            made.append(Due(_notice(table, game_id, last, "turn", seat), last.recorded_at))


def _clocks(followed: Followed, table: tbl.Table, game_id: str, env: EventEnvelope, event: ClocksSet,
            thresholds: Thresholds, made: list[Due], cancelled: list[str]) -> None:
    seats = max(len(event.clocks), table.seats)
    for seat in range(seats):  # a seat without a clock in the event has no deadline now
        clock = event.clocks[seat] if seat < len(event.clocks) else SeatClock(None, 0.0)
        current = followed.low.get(seat)
        if current is not None and current[0] == clock.deadline:
            continue  # the same deadline: its notice stands
        if current is not None:
            cancelled.append(current[1])
            del followed.low[seat]
        if clock.deadline is None:
            continue
        had = max(0.0, clock.deadline - event.at)
        notice = _notice(table, game_id, env, "clock_low", seat, deadline=clock.deadline)
        followed.low[seat] = (clock.deadline, notice.key)
        made.append(Due(notice, clock.deadline - min(thresholds.low_share * had, thresholds.low_s)))


def _notice(table: tbl.Table, game_id: str, env: EventEnvelope, kind: str, seat: int | None, **more: Any
            ) -> WebhookNotice:
    return WebhookNotice(key(game_id, env.seq, kind, seat), kind, game_id, env.seq, seat, table.game, table.title,
                         env.recorded_at, **more)
