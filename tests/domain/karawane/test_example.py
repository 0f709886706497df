"""The rulebook's example (section 7), as far as the text allows: player A's trip home (a genie brings the city it
knows next to it, it trades three goods and claims the oasis, shows two camel drivers against one thief), player
B's genie sends A's caravan to an outer hex of another sector, player C's map token pins it there; C then knows A
holds three gold and two camel drivers, so at most one water skin, and A is two turns from the known sector.

Seats: A = 0, B = 1, C = 2. The board (K-1) and the hexes are this test's: the text's pictures are lost."""

from __future__ import annotations

from contracts.karawane import (
    CaravanStepped,
    CaravanSupplied,
    GenieSummoned,
    GoodsTraded,
    HexesSwapped,
    HexRevealed,
    MoveEnded,
    PlayGenie,
    PlayMap,
    Step,
    StopMoving,
    Supply,
    SwapWith,
    Trade,
)
from domain.karawane import GAME, data, rules
from tests.domain.karawane.support import at, cell, distance, play, spec, with_seat

A_AT, NEXT_TO_A, OASIS = cell(1, 2), cell(2, 2), cell(3, 1)  # the red oasis, next to the hex beside A
KNOWN_CITY = cell(4, 4)  # the blue city, five hexes away: too far for one turn
OUTER = cell(7, 7)  # an outer hex of the blue sector
B_AT = cell(3, 5)  # B, next to the ruins (3, 4), two hexes from the known sector


def test_player_a_trip_home_and_player_c_map_token():
    s = spec(seats=3, first=0, thieves=1)
    city, oasis = s.state.board[KNOWN_CITY], s.state.board[OASIS]
    s.state = with_seat(s.state, 0, ones=2, artifacts=("carpet", "amulet"), seen=tuple(sorted((city, oasis))))
    s = at(s, 0, A_AT, goods=3, camel_drivers=2, water_skins=1)
    assert distance(A_AT, KNOWN_CITY) > data.MOVE

    # A plays a genie: the hex next to it swaps with the city it knows; it moves over the city, then the oasis
    assert play(s, 0, PlayGenie(hex=NEXT_TO_A), SwapWith(hex=KNOWN_CITY)) == [
        GenieSummoned(seat=0, hex=NEXT_TO_A), HexesSwapped(seat=0, a=NEXT_TO_A, b=KNOWN_CITY)]
    assert play(s, 0, Step(to=NEXT_TO_A), Step(to=OASIS), StopMoving()) == [
        CaravanStepped(seat=0, to=NEXT_TO_A), CaravanStepped(seat=0, to=OASIS), MoveEnded(seat=0, desert=True)]
    # it trades its three goods for three gold (a face-down city: no limit)
    assert play(s, 0, Trade(goods=3)) == [GoodsTraded(seat=0, goods=3, clue=(OASIS, NEXT_TO_A), face_down=True)]
    # it claims the oasis (no water skin spent) and shows its two camel drivers against the one thief
    [supplied, *_] = play(s, 0, Supply(water="oasis", thieves="show"))
    assert supplied == CaravanSupplied(seat=0, water="oasis", thieves="show", shown=2,
                                       oasis_clue=(OASIS, NEXT_TO_A))
    assert s.state.players[0].hand == rules.Hand(camel_drivers=2, water_skins=1, gold=3)

    # B plays a genie too: A's hex swaps with an outer hex of another sector, A's caravan travels along
    s = at(s, 1, B_AT, water_skins=2, camel_drivers=2)
    assert play(s, 1, PlayGenie(hex=OASIS), SwapWith(hex=OUTER))[-1] == HexesSwapped(seat=1, a=OASIS, b=OUTER,
                                                                                      carried=(0,))
    assert s.state.players[0].cell == OUTER
    play(s, 1, Step(to=cell(3, 4)), StopMoving(), Supply(water="skin", thieves="show"))

    # C reveals the hex under A's caravan: no genie moves it any more
    s = at(s, 2, cell(5, 2))
    assert play(s, 2, PlayMap(hex=OUTER)) == [HexRevealed(seat=2, hex=OUTER, kind="oasis")]
    state = s.state
    c_view = GAME.view(state, 2)
    a_public = c_view.players[0]
    assert (a_public.hand, a_public.gold_in_hand, a_public.cell) == (6, 3, OUTER)
    # C knows 3 gold (traded in view) and 2 camel drivers (shown): A holds at most one water skin
    assert a_public.hand - a_public.gold_in_hand - supplied.shown == 1
    assert c_view.you.water_skins == 0 and c_view.players[0] == GAME.view(state, None).players[0]
    # A's caravan cannot be brought closer by a genie, and it is two turns from the known sector
    s.state = replace_turn(state, 0)
    s.when(0, PlayGenie(hex=OUTER)).then_error("face_up")
    assert min(distance(OUTER, k) for k in data.KNOWN_CELLS) > data.MOVE


def replace_turn(state, seat):
    return rules.evolve(state, rules.TurnStarted(seat=seat, round=state.round))
