"""Undo at a table with clocks (issue #19 with issue #10's undo; docs/rules-decisions.md, Clocks): the table's
clock events between moves do not stop a seat taking back its own moves; an undo puts the clocks back as they were
where it takes the game (time ran on: no time is won by moving and undoing); no undo goes back over a timeout, a
seat leaving, or a bot's move."""

from __future__ import annotations

import pytest

from contracts.table import ClocksSet, PlayFor, RequestUndo, Resign, SeatClock, Timeout, UndoApplied
from domain import table as tbl
from tests.domain.clock_toy import toy_games  # noqa: F401 - the fixture
from tests.domain.test_clocks import CLOCK, MOVE, Clocked

pytestmark = pytest.mark.usefixtures("toy_games")


def test_a_seat_takes_back_its_own_move_over_the_clocks_its_move_set():
    game = Clocked(clock=CLOCK, start=0.0)
    assert isinstance(game.move(0, 5.0)[-1], ClocksSet)
    # the version the start's game events end at (its ClocksSet, a table event, is not a position of the game)
    [before] = tbl.undo_targets(game.table, 0)
    assert before == game.table.version - 3
    events = game.seat(0, RequestUndo(before), 8.0)
    # the clocks as they were at `before`: seat 0's deadline where it was (the 8 s ran on), no increment kept
    assert events == [UndoApplied(before, 0), ClocksSet(at=8.0, clocks=(SeatClock(70.0, 60.0),
                                                                        SeatClock(None, 60.0)))]
    assert tbl.due(game.table) == (tbl.Due(70.0, "timeout", 0),)


def test_moving_and_taking_it_back_again_and_again_never_gives_a_seat_time():
    game = Clocked(clock=CLOCK, start=0.0)
    for now in (9.0, 18.0, 27.0, 36.0):
        game.move(0, now)
        [before] = tbl.undo_targets(game.table, 0)  # each in less than per_decision after the last undo: a fresh clock would charge nothing
        game.seat(0, RequestUndo(before), now + 0.5)
    assert game.clock(0) == SeatClock(70.0, 60.0)
    game.move(0, 69.0)  # its one decision has taken 69 s: 59 past per_decision
    assert game.clock(0) == SeatClock(None, 1.0 + 5.0)


def test_in_a_simultaneous_step_a_seat_takes_back_its_answer_and_the_others_keep_their_deadlines():
    game = Clocked(seats=3, clock=CLOCK, start=0.0, simultaneous=True)
    game.move(0, 5.0)
    [before] = tbl.undo_targets(game.table, 0)
    game.move(1, 6.0)
    [after_0] = tbl.undo_targets(game.table, 1)
    assert game.seat(1, RequestUndo(after_0), 7.0)[-1] == ClocksSet(
        at=7.0, clocks=(SeatClock(None, 65.0), SeatClock(70.0, 60.0), SeatClock(70.0, 60.0)))
    assert tbl.undo_targets(game.table, 0) == (before,)  # seat 1's answer taken back: seat 0's is its own again


def test_no_undo_goes_back_over_another_seats_timeout():
    game = Clocked(seats=3, clock=CLOCK, start=0.0, simultaneous=True)
    game.move(0, 5.0)
    [before] = tbl.undo_targets(game.table, 0)
    game.platform(Timeout(1, 70.0), 70.0)
    assert tbl.undo_targets(game.table, 0) == ()
    game.refused(0, RequestUndo(before), 71.0, "undo_not_allowed")


def test_no_undo_goes_back_over_a_seat_leaving():
    game = Clocked(seats=3, clock=CLOCK, start=0.0, simultaneous=True)
    game.move(0, 5.0)
    [before] = tbl.undo_targets(game.table, 0)
    game.seat(2, Resign(), 6.0)
    game.refused(0, RequestUndo(before), 7.0, "undo_not_allowed")


def test_a_bots_move_is_nobodys_to_take_back_and_a_seat_still_takes_back_its_own_after_it():
    game = Clocked(clock=CLOCK, start=0.0)
    game.platform(Timeout(0, 70.0), 70.0)
    game.platform(PlayFor(0, "random", MOVE), 71.0)
    for seat in (0, 1):
        assert tbl.undo_targets(game.table, seat) == ()
    before = game.table.version - 1  # the bot's move's last game event (its ClocksSet follows)
    game.move(1, 72.0)
    assert tbl.undo_targets(game.table, 1) == (before,)
    game.seat(1, RequestUndo(before), 73.0)
    assert game.clock(1) == SeatClock(141.0, 60.0) and game.clock(0) == SeatClock(None, 5.0)


def test_an_undo_granted_with_consent_puts_back_the_clocks_of_the_position_it_returns_to():
    from contracts.table import AcceptUndo, UndoAccepted, UndoRequested

    game = Clocked(clock=CLOCK, start=0.0, undo="with_consent")
    game.move(0, 5.0)
    [before] = tbl.undo_targets(game.table, 0)
    game.move(1, 10.0)
    assert game.seat(0, RequestUndo(before), 12.0) == [UndoRequested(0, before, (1,))]  # no clock changed
    assert game.seat(1, AcceptUndo(), 14.0) == [
        UndoAccepted(1), UndoApplied(before, 0),
        ClocksSet(at=14.0, clocks=(SeatClock(70.0, 60.0), SeatClock(None, 60.0)))]
