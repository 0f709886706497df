"""The real-time countdown at the table (issue #19): ``domain.table.decide(..., now=)`` with a fake time source,
the table keeping the game's timer (``ClocksSet.timer``), ``domain.table.due`` naming its tick, the platform's
``Tick`` closing the value, the seats' clocks paused while the countdown runs. No Redis: ``Worker`` below does
what the clock worker does with ``due`` (sends ``Tick(key, due)`` for no seat once the time source reaches it).

Three players (the bank sells the fourth type); each value shows for 0.5 s.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from contracts.samarkand import Answered, ChooseCard, GoodsDisputed, Pass, Stop, StopCall, ValueClosed
from contracts.table import (
    BotMoved,
    ClocksSet,
    CreateGame,
    GameEnded,
    GameTimer,
    JoinSeat,
    PlayFor,
    Resign,
    SeatClock,
    Tick,
)
from domain import table as tbl
from domain.chance import Chance
from domain.kernel import RuleViolation
from domain.samarkand import GAME, rules
from tests.domain.harness import token_hash
from tests.domain.samarkand.support import ensure_registered

ensure_registered()

SEED = b"realtime-table"
REALTIME = {"countdown_mode": "realtime", "countdown_interval_ms": 500}


class FakeTime:
    """The engine's clock, moved by hand."""

    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start

    def advance(self, seconds: float) -> float:
        self.now += seconds
        return self.now


class Worker:
    """A table driven at the fake time's instants; ``run_until(t)`` fires every tick ``due`` names up to ``t``, at
    its due instant (a perfect clock worker)."""

    def __init__(self, seats: int = 3, options: dict | None = None, time: FakeTime | None = None) -> None:
        self.time = time or FakeTime()
        self.table, self.events = tbl.EMPTY, []
        self.log: list[tuple[int | None, Any, float, list]] = []  # (seat, command, now, events)
        self.platform(CreateGame("samarkand", "rt", seats, dict(REALTIME if options is None else options)))
        for seat in range(seats):
            self.platform(JoinSeat(f"p{seat}", token_hash(seat)))

    def _apply(self, seat: int | None, command: Any) -> list:
        token = None if seat is None else token_hash(seat)
        now = self.time.now
        events = tbl.decide(self.table, seat, token, command, Chance(SEED, self.table.version), now=now)
        self.table = tbl.fold(events, self.table)
        self.events.extend(events)
        self.log.append((seat, command, now, events))
        return events

    def platform(self, command: Any) -> list:
        return self._apply(None, command)

    def seat(self, seat: int, command: Any) -> list:
        return self._apply(seat, command)

    def ticks(self) -> list[tbl.Due]:
        return [d for d in tbl.due(self.table) if d.kind == "tick"]

    def run_until(self, t: float) -> None:
        while True:
            ticks = [d for d in self.ticks() if d.at <= t]
            if not ticks:
                break
            self.time.now = ticks[0].at
            self.platform(Tick(ticks[0].key, ticks[0].at))
        self.time.now = t

    def choose_all(self) -> list:
        """Every seat puts its lowest card face down now: the last choice reveals them, the countdown starts."""
        out = []
        for seat in range(self.table.seats):
            out = self.seat(seat, ChooseCard(value=self.table.state.players[seat].hand[0]))
        return out


def test_a_stepwise_table_keeps_no_clocks_and_nothing_is_due():
    game = Worker(options={})
    game.choose_all()
    assert not any(isinstance(e, ClocksSet) for e in game.events) and tbl.due(game.table) == ()
    assert tbl.clock_view(game.table) is None


def test_the_reveal_starts_the_timer_of_ten_and_due_names_its_tick():
    game = Worker()
    assert not any(isinstance(e, ClocksSet) for e in game.events)  # choosing is not timed by the rules
    reveal = game.choose_all()
    assert reveal[-1] == ClocksSet(at=1_000.0, clocks=(SeatClock(None, 0.0),) * 3, timer=GameTimer("1:10", 1_000.5))
    assert tbl.due(game.table) == (tbl.Due(1_000.5, "tick", None, "1:10"),)
    assert tbl.next_due(game.table) == 1_000.5
    assert tbl.views(game.table, "g")[None].clock.timer == GameTimer("1:10", 1_000.5)


def test_a_tick_before_its_due_or_for_another_value_is_not_due():
    game = Worker()
    game.choose_all()
    game.time.advance(0.499)
    for tick in (Tick("1:10", 1_000.5), Tick("1:9", 1_000.499), Tick("1:10", 1_000.499)):
        with pytest.raises(RuleViolation) as exc:
            game.platform(tick)
        assert exc.value.code == "not_due"


def test_the_tick_closes_the_value_at_its_due_and_the_next_value_shows_for_the_interval_from_then():
    game = Worker()
    game.choose_all()
    game.time.advance(0.7)  # the worker is 0.2 s late: the next value still shows its whole interval
    events = game.platform(Tick("1:10", 1_000.5))
    assert events == [ValueClosed(value=10),
                      ClocksSet(at=1_000.7, clocks=(SeatClock(None, 0.0),) * 3, timer=GameTimer("1:9", 1_001.2))]
    assert game.table.state.value == 9


def test_a_stop_keeps_the_timer_and_is_settled_by_the_tick_with_the_others_of_its_value():
    game = Worker()
    game.choose_all()
    game.time.advance(0.1)
    assert game.seat(1, Stop(target=0)) == [Answered(seat=1, value=10, stop=True, target=0)]  # no ClocksSet
    game.time.advance(0.3)
    game.seat(2, Stop(target=0))
    game.run_until(1_000.5)
    closed = game.log[-1][3]
    assert closed[0] == ValueClosed(value=10, stops=(StopCall(seat=1, target=0), StopCall(seat=2, target=0)))
    settled = closed[1]  # one dispute: discarded, or the dean's if he is one of the two
    assert (settled.seats if isinstance(settled, GoodsDisputed) else settled.disputants) == (1, 2)


def test_pass_is_refused_at_the_table_too():
    game = Worker()
    game.choose_all()
    with pytest.raises(RuleViolation) as exc:
        game.seat(0, Pass())
    assert exc.value.code == "no_pass_in_realtime"


def test_a_round_nobody_stops_ends_after_ten_intervals_and_the_timer_stops():
    game = Worker()
    game.choose_all()
    start = game.time.now
    game.run_until(start + 10 * 0.5)
    closes = [(now, e.value) for _, _, now, events in game.log for e in events if isinstance(e, ValueClosed)]
    assert closes == [(start + (11 - v) * 0.5, v) for v in range(10, 0, -1)]
    assert game.table.state.phase == rules.CHOOSING and game.table.state.round == 2
    assert game.table.timer is None and tbl.due(game.table) == ()
    assert game.log[-1][3][-1] == ClocksSet(at=start + 5.0, clocks=(SeatClock(None, 0.0),) * 3, timer=None)


def test_the_seats_clocks_pause_while_the_countdown_runs():
    game = Worker(options={**REALTIME, "clock": {"per_decision": 30}})
    t0 = game.time.now
    assert [d.kind for d in tbl.due(game.table)] == ["timeout"] * 3  # choosing: each seat's clock runs
    game.choose_all()
    assert tbl.due(game.table) == (tbl.Due(t0 + 0.5, "tick", None, "1:10"),)  # the countdown: only its timer
    assert all(c.deadline is None for c in game.table.clocks)
    game.run_until(t0 + 5.0)
    assert sorted(d.kind for d in tbl.due(game.table)) == ["timeout"] * 3  # choosing again: 30 s each
    assert all(c.deadline == t0 + 5.0 + 30 for c in game.table.clocks)


def test_a_whole_real_time_game_at_the_tables_instants_ends_and_re_runs_to_the_same_events():
    rng = random.Random(19)
    game = Worker()
    while game.table.status != tbl.OVER:
        game.run_until(game.time.advance(rng.expovariate(1 / 0.3)))
        if game.table.status == tbl.OVER:
            break
        awaiting = tbl.flow(game.table).awaiting
        if not awaiting:
            continue
        seat = rng.choice(awaiting)
        legal = GAME.legal_commands(game.table.state, seat)
        if game.table.state.phase == rules.COUNTDOWN and rng.random() < 0.8:
            continue  # the value may run out
        game.seat(seat, rng.choice(legal))
    assert isinstance(game.events[-1], GameEnded)
    assert sum(isinstance(e, Tick) for _, e, _, _ in game.log) >= 80
    # a record's re-run: every command again at its own instant gives the same events
    table = tbl.EMPTY
    for seat, command, now, events in game.log:
        token = None if seat is None else token_hash(seat)
        again = tbl.decide(table, seat, token, command, Chance(SEED, table.version), now=now)
        assert msgspec.json.encode(again) == msgspec.json.encode(events)
        table = tbl.fold(again, table)


def test_a_bot_plays_a_resigned_seat_in_real_time_by_stopping_when_it_is_asked():
    """A seat out of the game is played by a bot at once (``due`` names it); in real time its only legal commands
    are stops, and its stop is settled by the tick with the others of the value."""
    game = Worker(seats=4, options=REALTIME)
    game.seat(3, Resign())
    for seat in range(3):
        game.seat(seat, ChooseCard(value=game.table.state.players[seat].hand[0]))
    assert [(d.kind, d.seat) for d in tbl.due(game.table)] == [("bot", 3)]
    played = game.platform(PlayFor(3, "random", msgspec.to_builtins(ChooseCard(value=1))))
    assert played[0] == BotMoved(3, "random") and isinstance(played[-1], ClocksSet)  # the reveal: the timer runs
    assert sorted((d.kind, d.seat) for d in tbl.due(game.table)) == [("bot", 3), ("tick", None)]
    stop = GAME.legal_commands(game.table.state, 3)[0]
    assert isinstance(stop, Stop)
    game.platform(PlayFor(3, "random", msgspec.to_builtins(stop)))
    assert [(d.kind, d.seat) for d in tbl.due(game.table)] == [("tick", None)]  # one stop a value
    game.run_until(game.time.now + 0.5)
    closed = next(e for e in game.log[-1][3] if isinstance(e, ValueClosed))
    assert closed.stops == (StopCall(seat=3, target=stop.target),)
