"""The desert phase: owed after a move that left the known sector or started outside it; the places crossed this
turn (not the starting hex unless entered again) may be used, each use a public clue; then water and thieves, or
the caravan is lost with its hand, placed at home at its next turn (which loses its move), and plays the turn after."""

from __future__ import annotations

import msgspec
import pytest

from contracts.karawane import (
    ArtifactTaken,
    BuyArtifact,
    BuyWater,
    CaravanLost,
    CaravanReplaced,
    CaravanSupplied,
    DriversHired,
    EndTurn,
    Equip,
    GoodsTraded,
    HireDrivers,
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
    TurnStarted,
    WaterBought,
)
from domain.karawane import GAME, rules
from domain.kernel import RuleViolation
from tests.domain.karawane.support import at, cell, play, spec, with_seat

replace = msgspec.structs.replace
EDGE, KNOWN_2, KNOWN_3 = cell(4, 0), cell(5, 0), cell(6, 0)
CITY, OASIS, SERAI, TOWER = cell(3, 0), cell(3, 1), cell(3, 2), cell(2, 0)


def desert(path, thieves=1, start=EDGE, seats=3, rules_revision=rules.RULES, **hand):
    """Seat 0 starts its turn at ``start`` holding ``hand``, moves along ``path`` and stops: the desert phase."""
    s = at(spec(seats=seats, thieves=thieves, rules_revision=rules_revision), 0, start, **hand)
    play(s, 0, *[Step(to=c) for c in path])
    if len(path) < 3:
        play(s, 0, StopMoving())
    return s


# --- when the desert phase is owed, and what counts as crossed ------------------------------------------

def test_a_move_that_leaves_the_known_sector_owes_the_desert_phase():
    s = desert([CITY], goods=1)
    assert s.state.stage == rules.DESERT and s.state.turn.desert
    assert not any(isinstance(c, EndTurn) for c in GAME.legal_commands(s.state, 0))
    s.when(0, EndTurn()).then_error("wrong_phase")


def test_a_move_from_the_desert_into_the_known_sector_owes_it_but_uses_no_place():
    s = at(spec(), 0, CITY, goods=2, water_skins=1, camel_drivers=2)
    events = play(s, 0, Step(to=EDGE), Step(to=KNOWN_2), Step(to=KNOWN_3))
    assert events[-1] == MoveEnded(seat=0, desert=True)
    s.when(0, Trade(goods=1)).then_error("not_crossed")  # the starting hex is not crossed
    legal = GAME.legal_commands(s.state, 0)
    assert {type(c) for c in legal} == {Supply, PlayMap, PlayGenie}  # a token after the move, then the law


def test_the_starting_hex_counts_when_the_caravan_enters_it_again():
    s = at(spec(), 0, CITY, goods=2)
    play(s, 0, Step(to=EDGE), Step(to=CITY), StopMoving())
    assert Trade(goods=2) in GAME.legal_commands(s.state, 0)


def test_a_seat_can_only_use_a_place_its_caravan_really_crossed():
    s = desert([OASIS], goods=2, gold=1)
    s.when(0, Trade(goods=1)).then_error("not_crossed")
    s.when(0, HireDrivers(count=1)).then_error("not_crossed")
    s.when(0, TakeArtifact(artifact="carpet")).then_error("not_crossed")
    s.when(0, Supply(water="skin", thieves="caravanserai")).then_error("no_water")
    s.when(0, Supply(water="oasis", thieves="caravanserai")).then_error("not_crossed")


# --- trade ----------------------------------------------------------------------------------------------

def test_any_number_of_goods_are_traded_for_1_gold_cards_at_a_face_down_city():
    s = desert([CITY, TOWER], goods=4, camel_drivers=2)
    state = s.when(0, Trade(goods=4)).then([GoodsTraded(seat=0, goods=4, clue=(TOWER, CITY), face_down=True)])
    assert state.players[0].hand.goods == 0 and state.players[0].hand.gold == 4
    assert state.supply.ones == 20 and state.supply.goods == 20
    [clue] = GAME.view(state, None).clues
    assert clue.kind == "city" and clue.cells == (TOWER, CITY) and clue.seat == 0
    s.when(0, Trade(goods=5)).then_error("no_goods")
    s.when(0, Trade(goods=0)).then_error("bad_count")


def test_only_two_goods_a_turn_at_a_face_up_city():
    s = desert([CITY], goods=4)
    s.state = replace(s.state, face_up=(s.state.board[CITY],))
    s.when(0, Trade(goods=3)).then_error("city_limit")
    assert [c.goods for c in GAME.legal_commands(s.state, 0) if isinstance(c, Trade)] == [1, 2]
    play(s, 0, Trade(goods=1))
    s.when(0, Trade(goods=2)).then_error("city_limit")
    s.when(0, Trade(goods=1)).then_starts_with([GoodsTraded(seat=0, goods=1, clue=(CITY,), face_down=False)])


def test_trading_stops_when_the_1_gold_cards_run_out():
    s = desert([CITY], goods=4)
    s.state = replace(s.state, supply=replace(s.state.supply, ones=2))
    s.when(0, Trade(goods=3)).then_error("supply_empty")


# --- artifacts ------------------------------------------------------------------------------------------

def test_a_crossed_magic_place_gives_its_artifact_one_of_each_kind_per_seat():
    s = desert([CITY, TOWER])
    state = s.when(0, TakeArtifact(artifact="carpet")).then(
        [ArtifactTaken(seat=0, artifact="carpet", clue=(TOWER, CITY))])
    assert state.players[0].hand.artifacts == ("carpet",) and state.supply.artifacts == (4, 5, 5)
    s.given(s.decide(0, TakeArtifact(artifact="carpet")))
    s.when(0, TakeArtifact(artifact="carpet")).then_error("has_artifact")
    s.when(0, TakeArtifact(artifact="lamp")).then_error("not_crossed")
    s.when(0, TakeArtifact(artifact="sword")).then_error("no_such_artifact")


def test_an_artifact_laid_out_at_home_is_not_taken_again_and_the_hand_limit_holds():
    s = desert([CITY, TOWER])
    s.state = with_seat(s.state, 0, artifacts=("carpet",))
    s.when(0, TakeArtifact(artifact="carpet")).then_error("has_artifact")
    s = desert([CITY, TOWER], goods=6)
    s.when(0, TakeArtifact(artifact="carpet")).then_error("hand_full")


# --- oasis and caravanserai purchases -------------------------------------------------------------------

def test_one_gold_buys_as_many_water_skins_as_the_hand_holds_at_a_crossed_oasis():
    s = desert([OASIS], gold=1, goods=2)
    assert max(c.count for c in GAME.legal_commands(s.state, 0) if isinstance(c, BuyWater)) == 4
    s.when(0, BuyWater(count=5)).then_error("hand_full")
    state = s.when(0, BuyWater(count=4)).then([WaterBought(seat=0, count=4, clue=(OASIS,))])
    assert state.players[0].hand == rules.Hand(goods=2, water_skins=4) and state.supply.ones == 24
    assert GAME.view(state, 2).clues[0].kind == "oasis"


def test_one_gold_hires_camel_drivers_at_a_crossed_caravanserai_and_gold_is_needed():
    s = desert([OASIS, SERAI], gold=1)
    state = s.when(0, HireDrivers(count=5)).then([DriversHired(seat=0, count=5, clue=(OASIS, SERAI))])
    assert state.players[0].hand == rules.Hand(camel_drivers=5)
    s = desert([OASIS, SERAI])
    s.when(0, HireDrivers(count=1)).then_error("no_gold")
    s.when(0, BuyWater(count=1)).then_error("no_gold")


# --- water and thieves ----------------------------------------------------------------------------------

def test_a_crossed_oasis_waters_the_caravan_and_tells_everyone():
    s = desert([OASIS], thieves=0)
    assert GAME.legal_commands(s.state, 0)[-2:] == [Supply(water="oasis", thieves="clear"),
                                                  Supply(water=None, thieves="clear")]
    events = s.when(0, Supply(water="oasis", thieves="clear")).then_starts_with(
        [CaravanSupplied(seat=0, water="oasis", thieves="clear", oasis_clue=(OASIS,)), TurnEnded(seat=0)])
    assert GAME.view(events, None).clues[0].kind == "oasis"


def test_otherwise_a_water_skin_is_paid_and_one_who_holds_one_must_pay_it():
    s = desert([CITY], thieves=0, water_skins=2)
    s.when(0, Supply(water=None, thieves="clear")).then_error("must_pay")
    state = s.when(0, Supply(water="skin", thieves="clear")).state_after()
    assert state.players[0].hand.water_skins == 1 and state.supply.water_skins == 19


def test_a_zero_thief_card_needs_no_protection():
    s = desert([CITY], thieves=0, water_skins=1)
    s.when(0, Supply(water="skin", thieves="driver")).then_error("no_thieves")
    assert [c.thieves for c in GAME.legal_commands(s.state, 0) if isinstance(c, Supply)] == ["clear"]


def test_more_camel_drivers_than_thieves_are_shown_and_kept():
    s = desert([CITY], thieves=2, water_skins=1, camel_drivers=2)
    s.when(0, Supply(water="skin", thieves="show")).then_error("too_few_drivers")
    s.when(0, Supply(water="skin", thieves="clear")).then_error("thieves_about")
    s = desert([CITY], thieves=1, water_skins=1, camel_drivers=2)
    events = s.when(0, Supply(water="skin", thieves="show")).then_starts_with(
        [CaravanSupplied(seat=0, water="skin", thieves="show", shown=2)])
    assert events.players[0].hand.camel_drivers == 2


def test_or_one_camel_driver_is_paid_or_a_crossed_caravanserai_shelters_it():
    s = desert([CITY], thieves=2, water_skins=1, camel_drivers=1)
    state = s.when(0, Supply(water="skin", thieves="driver")).state_after()
    assert state.players[0].hand.camel_drivers == 0 and state.supply.camel_drivers == 15
    s = desert([OASIS, SERAI], thieves=2)
    state = s.when(0, Supply(water="oasis", thieves="caravanserai")).then_starts_with(
        [CaravanSupplied(seat=0, water="oasis", thieves="caravanserai", oasis_clue=(OASIS, SERAI),
                         caravanserai_clue=(OASIS, SERAI))])
    assert {c.kind for c in GAME.view(state, 1).clues} == {"oasis", "caravanserai"}
    s = desert([OASIS], thieves=1, camel_drivers=1)
    s.when(0, Supply(water="oasis", thieves=None)).then_error("must_pay")


@pytest.mark.parametrize("water,thieves,cause", [(None, "show", "water"), ("oasis", None, "thieves")])
def test_a_caravan_not_in_order_is_lost_with_its_whole_hand(water, thieves, cause):
    hand = dict(camel_drivers=2, gold=2, artifacts=("carpet",)) if cause == "water" else dict(gold=2, goods=3)
    s = desert([OASIS], thieves=1, **hand)
    s.state = with_seat(s.state, 0, ones=4, artifacts=("lamp",))
    events = s.decide(0, Supply(water=water, thieves=thieves))
    assert events[:3] == [CaravanLost(seat=0, cause=cause, cards=5), TurnEnded(seat=0), TurnStarted(seat=1, round=1)]
    state = s.given(events).state
    me = state.players[0]
    assert me.cell is None and me.lost and me.hand == rules.Hand()
    assert (me.ones, me.artifacts) == (4, ("lamp",))  # what is laid out at home is safe
    assert state.supply == rules.Pile()  # every card of the hand went back


def test_a_lost_caravan_is_placed_at_home_next_turn_without_moving_and_plays_the_turn_after():
    s = desert([OASIS], thieves=1, seats=2)
    play(s, 0, Supply(water=None, thieves=None))
    assert s.state.active == 1
    events = play(s, 1, Equip(), StopMoving(), EndTurn())
    assert [type(e).__name__ for e in events[-2:]] == ["TurnStarted", "CaravanReplaced"]
    assert events[-1] == CaravanReplaced(seat=0)
    assert s.state.players[0].cell == rules.data.HOME and not s.state.players[0].lost
    assert s.state.stage == rules.HOME and s.state.turn.moved  # its move is lost
    assert play(s, 0, EndTurn()) == [TurnEnded(seat=0), TurnStarted(seat=1, round=2)]
    play(s, 1, Equip(), StopMoving(), EndTurn())
    assert s.state.active == 0 and s.state.stage == rules.EQUIP  # it plays normally again


def test_a_lost_caravan_s_player_may_play_a_token_and_buy_in_the_turn_its_caravan_is_placed_at_home():
    """5.4.3: « Au prochain tour, il remet sa caravane dans l'hexagone de départ mais ne peut pas encore déplacer sa
    caravane »: only the move is lost. The tokens are the player's (« Chaque joueur prend une caravane [...] et quatre
    jetons »), and a caravan at home may buy (« Si la caravane est à la maison [...] le joueur actif peut acheter des
    artefacts »); it does not equip (5.1: only a turn that *starts* at home)."""
    s = desert([OASIS], thieves=1, seats=2)
    s.state = with_seat(s.state, 0, ones=5)
    play(s, 0, Supply(water=None, thieves=None))
    events = play(s, 1, Equip(), StopMoving(), EndTurn())
    assert events[-2:] == [TurnStarted(seat=0, round=2), CaravanReplaced(seat=0)]
    assert s.state.active == 0 and s.state.players[0].cell == rules.data.HOME
    legal = GAME.legal_commands(s.state, 0)
    assert EndTurn() in legal and PlayMap(hex=TOWER) in legal and BuyArtifact(artifact="lamp") in legal
    assert not any(isinstance(c, (Equip, Step, StopMoving)) for c in legal)
    s.when(0, Step(to=KNOWN_3)).then_error("wrong_phase")
    s.when(0, Equip()).then_error("wrong_phase")
    play(s, 0, PlayMap(hex=TOWER), BuyArtifact(artifact="lamp"))
    assert s.state.players[0].tokens == 3 and s.state.players[0].artifacts == ("lamp",)
    assert s.decide(0, EndTurn()) == [TurnEnded(seat=0), TurnStarted(seat=1, round=2)]


def test_a_caravan_may_cross_the_desert_without_water_and_be_in_order_at_the_end():
    s = desert([OASIS, SERAI], thieves=2)
    assert Supply(water="oasis", thieves="caravanserai") in GAME.legal_commands(s.state, 0)


# --- what counts as crossed, pinned ---------------------------------------------------------------------

def test_a_caravan_that_stays_on_its_desert_hex_owes_the_desert_phase_and_uses_nothing():
    """5.4: the phase is owed by a caravan that « a commencé son mouvement à partir d'un hexagone de désert »; its
    starting hex is not usable « tant que vous ne vous déplacez pas à nouveau sur lui »."""
    s = at(spec(thieves=1), 0, OASIS, water_skins=1, camel_drivers=1)
    events = s.decide(0, StopMoving())
    assert events == [MoveEnded(seat=0, desert=True)]
    s.given(events)
    assert s.state.stage == rules.DESERT
    s.when(0, Supply(water="oasis", thieves="driver")).then_error("not_crossed")
    assert {c.water for c in GAME.legal_commands(s.state, 0) if isinstance(c, Supply)} == {"skin"}


def test_a_hex_crossed_then_swapped_away_by_a_genie_after_the_move_stays_usable():
    """« le joueur actif peut se servir de tout qu'il a rencontré sous les hexagones pendant le mouvement »: what was
    crossed was crossed, wherever a genie (played after the move) sends it."""
    s = desert([CITY, OASIS], thieves=0, goods=3)
    play(s, 0, PlayGenie(hex=CITY), SwapWith(hex=cell(0, 7)))  # the city crossed goes to the green sector
    events = s.decide(0, Trade(goods=3))
    assert events == [GoodsTraded(seat=0, goods=3, clue=(OASIS, cell(0, 7)), face_down=True)]
    s.given(events).when(0, Supply(water="oasis", thieves="clear")).then_starts_with(
        [CaravanSupplied(seat=0, water="oasis", thieves="clear", oasis_clue=(OASIS, cell(0, 7)))])


def test_a_caravan_carried_onto_a_place_by_a_genie_uses_it_only_if_it_enters_it():
    """A genie before the move carries the caravan with its hex: it has not « passé » over the hex it stands on."""
    s = at(spec(thieves=0), 0, cell(2, 1), goods=2, water_skins=1)
    play(s, 0, PlayGenie(hex=cell(2, 1)), SwapWith(hex=CITY))  # its hex and the city swap: it stands at (3, 0)
    assert s.state.players[0].cell == CITY and s.state.board[cell(2, 1)] != s.state.board[CITY]
    play(s, 0, Step(to=EDGE), StopMoving())
    s.when(0, Trade(goods=1)).then_error("not_crossed")  # the city now lies at (2, 1): not entered
    s = at(spec(thieves=0), 0, cell(2, 1), goods=2, water_skins=1)
    play(s, 0, PlayGenie(hex=cell(2, 1)), SwapWith(hex=CITY), Step(to=cell(2, 1)), StopMoving())
    assert Trade(goods=2) in GAME.legal_commands(s.state, 0)


# --- a token after the move comes before the adventures -------------------------------------------------

def test_a_token_after_the_move_is_played_before_the_adventures_not_once_a_place_was_used():
    """Section 5 orders the turn: « équiper sa caravane, déplacer sa caravane, jouer un jeton, et raconter ses
    aventures » (5.1 to 5.4); 5.3 lets the token come « avant » the move instead, never after the adventures. So a seat
    cannot trade all its goods at a face-down city and then reveal that city for the others in the same turn: a
    map played after the move, before trading, caps its own trade at two (« seulement échanger deux marchandises
    par tour dans les villes [...] face visible »)."""
    s = desert([CITY, OASIS], thieves=0, goods=3)
    play(s, 0, Trade(goods=3))
    s.when(0, PlayMap(hex=CITY)).then_error("too_late")
    s.when(0, PlayGenie(hex=CITY)).then_error("too_late")
    assert not any(isinstance(c, (PlayMap, PlayGenie)) for c in GAME.legal_commands(s.state, 0))
    s = desert([CITY, OASIS], thieves=0, goods=3)
    play(s, 0, PlayMap(hex=CITY))  # after the move, before the adventures
    s.when(0, Trade(goods=3)).then_error("city_limit")
    for used in (BuyWater(count=1), TakeArtifact(artifact="carpet")):
        s = desert([OASIS, CITY, TOWER], thieves=0, gold=1)
        play(s, 0, used)
        s.when(0, PlayMap(hex=cell(0, 0))).then_error("too_late")


# --- revision 1: the rules as the game landed, which the games created before revision 2 keep ----------------

def test_under_revision_1_a_lost_caravan_s_next_turn_is_lost_at_once():
    s = desert([OASIS], thieves=1, seats=2, rules_revision=1)
    play(s, 0, Supply(water=None, thieves=None))
    events = play(s, 1, Equip(), StopMoving(), EndTurn())
    assert [type(e).__name__ for e in events[-4:]] == ["TurnStarted", "CaravanReplaced", "TurnEnded", "TurnStarted"]
    assert events[-3] == CaravanReplaced(seat=0) and events[-1] == TurnStarted(seat=1, round=2)
    assert s.state.players[0].cell == rules.data.HOME and not s.state.players[0].lost
    play(s, 1, Equip(), StopMoving(), EndTurn())
    assert s.state.active == 0 and s.state.stage == rules.EQUIP


def test_under_revision_1_a_token_may_follow_the_adventures():
    s = desert([CITY, OASIS], thieves=0, goods=3, rules_revision=1)
    play(s, 0, Trade(goods=3))
    assert PlayMap(hex=CITY) in GAME.legal_commands(s.state, 0)
    play(s, 0, PlayMap(hex=CITY))


def test_a_revision_this_build_does_not_have_is_refused_as_bad_options():
    from contracts.karawane import Options

    with pytest.raises(RuleViolation) as refused:
        GAME.check_options(3, Options(rules=rules.RULES + 1))
    assert refused.value.code == "bad_options"
    with pytest.raises(RuleViolation):
        GAME.check_options(3, Options(rules=0))
