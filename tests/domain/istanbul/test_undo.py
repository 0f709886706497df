"""Undo with Istanbul (the platform's policy, domain.table; the game's barriers, ``GAME.is_barrier``): a secret
answer is taken back before the turn resolves; the answer that resolves the turn shows every seat the others'
choices and cannot be."""

from __future__ import annotations

from contracts.istanbul import Answered, LocationPlayed, PlayLocation, TakeBonus
from contracts.table import RequestUndo, UndoApplied
from domain import table as tbl
from domain.istanbul import GAME
from tests.domain.harness import Played, encoded


def started(undo: str = "own_turn") -> tuple[Played, int]:
    played = Played(GAME, 3, {"undo": undo})
    while tbl.flow(played.table).phase == "fountain":  # a fountain's choice at setup
        seat = tbl.flow(played.table).awaiting[0]
        played.send(seat, played.legal(seat)[0])
    return played, tbl.flow(played.table).awaiting[0]


def test_an_answer_is_taken_back_before_the_turn_resolves():
    played, active = started()
    [event] = played.send(active, PlayLocation(source="left"))  # a face-up card: no barrier
    assert isinstance(event, LocationPlayed) and not GAME.is_barrier(event)
    other = (active + 1) % 3
    before = played.table.version
    [answered] = played.send(other, TakeBonus())
    assert isinstance(answered, Answered) and not GAME.is_barrier(answered)
    assert played.send(other, RequestUndo(to_version=before)) == [UndoApplied(before, other)]
    assert other in tbl.flow(played.table).awaiting
    assert encoded(played.table.state) == encoded(tbl.fold(played.events[:before]).state)


def test_the_answer_that_resolves_the_turn_cannot_be_taken_back():
    played, active = started("with_consent")
    played.send(active, PlayLocation(source="left"))
    for seat in ((active + 1) % 3, (active + 2) % 3):
        played.send(seat, TakeBonus())
    before = played.table.version
    events = played.send(active, TakeBonus())
    assert any(GAME.is_barrier(e) for e in events)  # BonusTaken: every answer shown
    assert played.refused(active, RequestUndo(to_version=before)) == "undo_not_allowed"
