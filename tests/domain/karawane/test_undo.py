"""Undo with 1001 Karawane (the platform's policy, domain.table; the game's barriers, ``GAME.is_barrier``): a step
in the known sector is taken back; a step that looked at a hex, a revealed hex, a thief card cannot be."""

from __future__ import annotations

from contracts.karawane import Equip, PlayMap, Step
from contracts.table import RequestUndo, UndoApplied
from domain import table as tbl
from domain.karawane import GAME, data
from tests.domain.harness import Played, encoded
from tests.domain.karawane import support  # noqa: F401  (registers the game)


def started() -> tuple[Played, int]:
    played = Played(GAME, 2, {"undo": "own_turn"})
    return played, tbl.flow(played.table).awaiting[0]


def test_equipping_and_a_step_in_the_known_sector_are_taken_back():
    played, seat = started()
    before = played.table.version
    played.send(seat, Equip(camel_drivers=2, water_skins=2))
    played.send(seat, Step(to=data.cell(6, 0)))
    assert played.send(seat, RequestUndo(to_version=before)) == [UndoApplied(before, seat)]
    assert encoded(played.table.state) == encoded(tbl.fold(played.events[:before]).state)


def test_a_hex_revealed_is_not_taken_back():
    played, seat = started()
    played.send(seat, Equip())
    before = played.table.version
    [revealed] = played.send(seat, PlayMap(hex=data.cell(0, 0)))
    assert GAME.is_barrier(revealed)
    assert played.refused(seat, RequestUndo(to_version=before)) == "undo_not_allowed"
