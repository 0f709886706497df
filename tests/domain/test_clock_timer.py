"""A game's own timer at the table (issue #19: Samarkand's real-time countdown is one): the table asks the game's
``timer(state)`` after each command, keeps a running key's due, fires ``tick`` through the platform's ``Tick``, and
pauses the seats' clocks while it runs (docs/rules-decisions.md, Clocks)."""

from __future__ import annotations

import pytest

from contracts.table import ClocksSet, GameEnded, GameTimer, SeatClock, Tick, Timeout
from domain import table as tbl
from tests.domain.clock_toy import TOY_TIMED, Moved, Ticked, toy_games  # noqa: F401 - the fixture
from tests.domain.test_clocks import CLOCK, Clocked

pytestmark = pytest.mark.usefixtures("toy_games")


def timed(**options) -> Clocked:
    return Clocked(game="toytimed", start=0.0, **options)


def test_the_start_runs_the_games_timer_and_due_lists_its_tick():
    game = timed(timer=5.0)
    assert game.started[-1] == ClocksSet(at=0.0, clocks=(SeatClock(None, 0.0),) * 2, timer=GameTimer("m0", 5.0))
    assert tbl.due(game.table) == (tbl.Due(5.0, "tick", None, "m0"),) and tbl.next_due(game.table) == 5.0


def test_a_new_key_starts_the_timer_again_and_a_tick_for_the_old_key_is_not_due():
    game = timed(timer=5.0)
    assert game.move(0, 2.0) == [Moved(0), ClocksSet(at=2.0, clocks=(SeatClock(None, 0.0),) * 2,
                                                     timer=GameTimer("m1", 7.0))]
    game.refused(None, Tick("m0", 5.0), 8.0, "not_due")  # made moot by the move
    game.refused(None, Tick("m1", 7.0), 6.9, "not_due")  # not yet
    game.refused(None, Tick("m1", 8.0), 8.0, "not_due")  # not its due
    assert game.platform(Tick("m1", 7.0), 7.0) == [Ticked("m1"), ClocksSet(
        at=7.0, clocks=(SeatClock(None, 0.0),) * 2, timer=GameTimer("m2", 12.0))]
    game.refused(None, Tick("m1", 7.0), 7.5, "not_due")  # fired once


def test_a_command_that_leaves_the_timers_key_as_it_was_keeps_its_due(monkeypatch):
    monkeypatch.setattr(type(TOY_TIMED), "timer", lambda self, state: ("round", 5.0))
    game = timed(timer=5.0, simultaneous=True)
    assert game.table.timer == GameTimer("round", 5.0)
    assert game.move(0, 1.0) == [Moved(0)]  # nothing changed: no ClocksSet
    assert game.table.timer == GameTimer("round", 5.0)


def test_a_timer_whose_key_stays_after_its_tick_runs_again_from_the_tick(monkeypatch):
    monkeypatch.setattr(type(TOY_TIMED), "timer", lambda self, state: ("round", 5.0))
    game = timed(timer=5.0, moves=50)
    assert game.table.timer == GameTimer("round", 5.0)
    events = game.platform(Tick("round", 5.0), 6.0)
    assert events == [Ticked("round"), ClocksSet(at=6.0, clocks=(SeatClock(None, 0.0),) * 2,
                                                 timer=GameTimer("round", 11.0))]


def test_the_last_tick_that_ends_the_game_sets_no_clocks():
    game = timed(timer=5.0, moves=1)
    events = game.platform(Tick("m0", 5.0), 5.0)
    assert [type(e) for e in events] == [Ticked, GameEnded] and tbl.due(game.table) == ()


def test_the_seats_clocks_pause_while_the_games_timer_runs():
    # the timer runs after an even number of moves: seat 0's turns are paced by it, seat 1's by its clock
    game = timed(timer=5.0, timer_every=2, clock=CLOCK)
    assert game.started[-1] == ClocksSet(at=0.0, clocks=(SeatClock(None, 60.0),) * 2, timer=GameTimer("m0", 5.0))
    assert tbl.due(game.table) == (tbl.Due(5.0, "tick", None, "m0"),)  # no timeout while the timer runs
    game.refused(None, Timeout(0, 70.0), 80.0, "not_due")
    # seat 0 moved under the timer: its clock never ran, its reserve is as it was (no increment: not on its clock)
    assert game.move(0, 3.0)[-1] == ClocksSet(at=3.0, clocks=(SeatClock(None, 60.0), SeatClock(73.0, 60.0)))
    assert tbl.due(game.table) == (tbl.Due(73.0, "timeout", 1),)
    # seat 1 moved on its clock (within per_decision: +5); the timer runs again, no clock runs
    assert game.move(1, 10.0)[-1] == ClocksSet(at=10.0, clocks=(SeatClock(None, 60.0), SeatClock(None, 65.0)),
                                               timer=GameTimer("m2", 15.0))


def test_a_game_with_timer_hooks_whose_timer_does_not_run_and_no_seat_clocks_sets_no_clocks():
    # (Samarkand stepwise: its game has the hooks, its timer never runs; its events stay what they were)
    game = timed(timer=0.0)
    assert not any(isinstance(e, ClocksSet) for e in game.events + game.move(0, 1.0))
    assert tbl.due(game.table) == () and game.table.clocks == ()


def test_the_views_show_a_running_game_timer_to_everyone():
    from contracts.table import ClockView, SeatClockView

    game = timed(timer=5.0)
    expected = ClockView(seats=(SeatClockView(0), SeatClockView(1)), timer=GameTimer("m0", 5.0), at=0.0)
    assert all(view.clock == expected for view in tbl.views(game.table, "g").values())
