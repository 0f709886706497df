"""The rulebook's example (section 7), as far as the text allows: player A's trip home (a genie brings the city it
knows next to it, it crosses the city and the oasis, trades three goods, claims the oasis, shows two camel drivers
against one thief), player B's genie sends A's caravan to an outer hex of another sector, player C's map token pins
it there (C then knows A holds three gold and two camel drivers, so at most one water skin, and A is two turns from
the known sector); A's dilemma (a genie for the oasis it knows, or a map token on the hex where it stops: not both);
and player B's plan, built on what the others told by taking their amulets: the one hex all their amulet clues share
is the mausoleum.

The text places A's oasis off the hex where A stops (C reveals that hex, yet A can still summon a genie to move « l'oasis
qu'il connaît depuis le dernier tour »): A moves over the city, then the oasis, then one hex more.

Seats: A = 0, B = 1, C = 2. The board (K-1) and the hexes are this test's: the text's pictures are lost."""

from __future__ import annotations

from contracts.karawane import (
    ArtifactTaken,
    CameHome,
    CaravanStepped,
    CaravanSupplied,
    EndTurn,
    GameOver,
    GenieSummoned,
    GoodsTraded,
    HexesSwapped,
    HexLooked,
    HexRevealed,
    MoveEnded,
    PlayGenie,
    PlayMap,
    Step,
    StopMoving,
    Supply,
    SwapWith,
    TakeArtifact,
    Trade,
    TurnEnded,
)
from domain.karawane import GAME, data, rules
from tests.domain.karawane.support import at, cell, distance, play, spec, with_seat

A_AT, NEXT_TO_A, OASIS, A_STOPS = cell(1, 2), cell(2, 2), cell(3, 1), cell(2, 1)  # the red oasis; a plain hex
KNOWN_CITY = cell(4, 4)  # the blue city, five hexes away: too far for one turn
OUTER = cell(7, 7)  # an outer hex of the blue sector
B_AT = cell(3, 5)  # B, next to the ruins (3, 4), two hexes from the known sector


def a_pinned_in_the_outer_row():
    """A's trip, B's genie and C's map token; the spec after C's token, and A's CaravanSupplied."""
    s = spec(seats=3, first=0, thieves=1)
    city, oasis = s.state.board[KNOWN_CITY], s.state.board[OASIS]
    s.state = with_seat(s.state, 0, ones=2, artifacts=("carpet", "amulet"), seen=tuple(sorted((city, oasis))))
    s = at(s, 0, A_AT, goods=3, camel_drivers=2, water_skins=1)
    assert distance(A_AT, KNOWN_CITY) > data.MOVE

    # A plays a genie: the hex next to it swaps with the city it knows; it moves over the city, then the oasis, on
    assert play(s, 0, PlayGenie(hex=NEXT_TO_A), SwapWith(hex=KNOWN_CITY)) == [
        GenieSummoned(seat=0, hex=NEXT_TO_A), HexesSwapped(seat=0, a=NEXT_TO_A, b=KNOWN_CITY)]
    assert play(s, 0, Step(to=NEXT_TO_A), Step(to=OASIS), Step(to=A_STOPS)) == [
        CaravanStepped(seat=0, to=NEXT_TO_A), CaravanStepped(seat=0, to=OASIS), CaravanStepped(seat=0, to=A_STOPS),
        HexLooked(seat=0, hex=A_STOPS, kind="desert"), MoveEnded(seat=0, desert=True)]
    crossed = tuple(sorted((NEXT_TO_A, OASIS, A_STOPS)))
    # it trades its three goods for three gold (a face-down city: no limit)
    assert play(s, 0, Trade(goods=3)) == [GoodsTraded(seat=0, goods=3, clue=crossed, face_down=True)]
    # it claims the oasis (no water skin spent) and shows its two camel drivers against the one thief
    [supplied, *_] = play(s, 0, Supply(water="oasis", thieves="show"))
    assert supplied == CaravanSupplied(seat=0, water="oasis", thieves="show", shown=2, oasis_clue=crossed)
    assert s.state.players[0].hand == rules.Hand(camel_drivers=2, water_skins=1, gold=3)
    # « il doit seulement retourner à la maison pour gagner »: 2 gold laid out + 3 in hand buy the lamp
    a = s.state.players[0]
    assert rules.payment(rules.Seat(ones=a.ones + a.hand.gold), s.state.supply) == (5, 0, 0)

    # B plays a genie too: A's hex swaps with an outer hex of another sector, A's caravan travels along
    s = at(s, 1, B_AT, water_skins=2, camel_drivers=2)
    assert play(s, 1, PlayGenie(hex=A_STOPS), SwapWith(hex=OUTER))[-1] == HexesSwapped(seat=1, a=A_STOPS, b=OUTER,
                                                                                        carried=(0,))
    assert s.state.players[0].cell == OUTER
    play(s, 1, Step(to=cell(3, 4)), StopMoving(), Supply(water="skin", thieves="show"))

    # C reveals the hex under A's caravan: no genie moves it any more
    s = at(s, 2, cell(5, 2))
    assert play(s, 2, PlayMap(hex=OUTER)) == [HexRevealed(seat=2, hex=OUTER, kind="desert")]
    return s, supplied


def test_player_a_trip_home_and_player_c_map_token():
    s, supplied = a_pinned_in_the_outer_row()
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


def test_player_a_dilemma_a_genie_for_the_oasis_leaves_no_map_token_for_the_hex_where_it_stops():
    """« S'il paye un Génie pour déplacer l'oasis qu'il connaît ... il aura suffisamment d'eau mais il ne pourra pas
    jouer de jeton coté carte sur l'hexagone où il finira son déplacement car il ne peut jouer qu'un jeton par tour »."""
    s, _ = a_pinned_in_the_outer_row()
    s.state = replace_turn(s.state, 0)
    on_the_way, stop = cell(7, 6), cell(7, 4)
    assert OASIS in {h.cell for h in GAME.view(s.state, 0).hexes if h.kind == "oasis" and not h.face_up}
    play(s, 0, PlayGenie(hex=OASIS), SwapWith(hex=on_the_way))  # the oasis it knows, onto its way home
    play(s, 0, Step(to=on_the_way), Step(to=cell(7, 5)), Step(to=stop))
    s.when(0, PlayMap(hex=stop)).then_error("token_used")  # the hex where it stops stays movable by a genie
    s.when(0, Supply(water="oasis", thieves="show")).then_starts_with(
        [CaravanSupplied(seat=0, water="oasis", thieves="show", shown=2,
                         oasis_clue=tuple(sorted((on_the_way, cell(7, 5), stop))))])  # its skin is kept for later


# --- player B: the mausoleum from the others' amulet clues ----------------------------------------------

MAUSOLEUM = cell(5, 5)
RUINS, BETWEEN, B_HERE, KNOWN_EDGE = cell(2, 5), cell(3, 4), cell(1, 6), cell(4, 3)
B_PLACES = (
    {"city": (3, 0), "oasis": (3, 1), "caravanserai": (3, 2), "tower": (2, 0)},
    {"city": (7, 7), "oasis": (6, 7), "caravanserai": (7, 6), "mausoleum": (5, 5)},
    {"city": (0, 7), "oasis": (1, 7), "caravanserai": (0, 4), "ruins": (2, 5)},
)


def take_an_amulet(s, seat, start, path):
    s = at(s, seat, start, water_skins=1, camel_drivers=2)
    play(s, seat, *[Step(to=c) for c in path])
    assert play(s, seat, TakeArtifact(artifact="amulet"))[0].clue == tuple(sorted(path))
    play(s, seat, Supply(water="skin", thieves="show"))
    return s


def test_player_b_finds_the_mausoleum_where_the_others_amulet_clues_overlap_and_wins():
    """« il sait où est le mausolée car tous les autres joueurs ont déjà une amulette et le joueur B se rappelle
    l'hexagone commun que tous les joueurs ont traversé le tour où ils ont réclamé une amulette » — then a genie brings
    the mausoleum between the ruins and the known sector, B crosses both magic places and ends in the known sector,
    and goes home with its third artifact."""
    s = spec(seats=3, first=2, thieves=1, places=B_PLACES)
    assert rules.back(s.state.board[BETWEEN]) == "green" and distance(RUINS, BETWEEN) == 1
    assert distance(BETWEEN, KNOWN_EDGE) == 1 and distance(B_HERE, RUINS) == 1
    # A and C each took an amulet, on paths that share one hex only
    s = take_an_amulet(s, 0, cell(5, 3), [cell(5, 4), MAUSOLEUM, cell(5, 6)])
    s = take_an_amulet(s, 2, cell(6, 3), [cell(6, 4), MAUSOLEUM, cell(4, 6)])

    # B never looked at the mausoleum, yet the public clues pin it: the one cell all amulet clues share
    s.state = with_seat(s.state, 1, artifacts=("carpet",))  # « Il a seulement acquis un tapis volant »
    b_view = GAME.view(s.state, 1)
    assert {h.cell: h.kind for h in b_view.hexes}[MAUSOLEUM] is None
    amulets = [set(c.cells) for c in b_view.clues if c.kind == "mausoleum"]
    assert {c.seat for c in b_view.clues if c.kind == "mausoleum"} == {0, 2}
    assert set.intersection(*amulets) == {MAUSOLEUM} and b_view.clues == GAME.view(s.state, None).clues

    # B's turn: a genie swaps the mausoleum between the ruins and the known sector; the clues follow the hex
    s = at(s, 1, B_HERE, water_skins=1, camel_drivers=2)
    play(s, 1, PlayGenie(hex=MAUSOLEUM), SwapWith(hex=BETWEEN))
    amulets = [set(c.cells) for c in GAME.view(s.state, 1).clues if c.kind == "mausoleum"]
    assert set.intersection(*amulets) == {BETWEEN}
    events = play(s, 1, Step(to=RUINS), Step(to=BETWEEN), Step(to=KNOWN_EDGE))
    assert [e.kind for e in events if isinstance(e, HexLooked)] == ["ruins", "mausoleum"]
    assert [type(e) for e in play(s, 1, TakeArtifact(artifact="lamp"), TakeArtifact(artifact="amulet"))] == [
        ArtifactTaken, ArtifactTaken]
    play(s, 1, Supply(water="skin", thieves="show"))
    assert s.state.players[1].cell == KNOWN_EDGE  # in the known sector: no genie moves it now

    # next turn: home, with the third artifact laid out; the round ends and B wins
    s = at(s, 1, KNOWN_EDGE)
    events = play(s, 1, Step(to=cell(5, 2)), Step(to=cell(6, 1)), Step(to=data.HOME))
    assert events[-1] == CameHome(seat=1, gold=0, artifacts=("lamp", "amulet"), returned=2)
    assert rules.complete(s.state.players[1])
    events = play(s, 1, EndTurn())
    assert events[0] == TurnEnded(seat=1) and isinstance(events[-1], GameOver) and events[-1].winners == (1,)


def test_a_map_token_on_the_mausoleum_would_have_spoilt_player_b_plan():
    """« il aurait perdu son avantage si un des autres joueurs ... jouait un jeton carte sur le mausolée (de sorte qu'il
    ne puisse pas le déplacer) »."""
    s = spec(seats=3, first=2, thieves=1, places=B_PLACES)
    s = at(s, 0, cell(5, 3))
    play(s, 0, PlayMap(hex=MAUSOLEUM))
    s = at(s, 1, B_HERE)
    s.when(1, PlayGenie(hex=MAUSOLEUM)).then_error("face_up")


def replace_turn(state, seat):
    return rules.evolve(state, rules.TurnStarted(seat=seat, round=state.round))
