"""Coming home: gold and artifacts laid out for good, equipment back; artifacts bought for 5 gold; 3-gold cards
replace laid-out 1-gold cards when those run out; the round of a third artifact is the last, most gold among the
seats with all three wins, ties share."""

from __future__ import annotations

import msgspec

from contracts.karawane import (
    ArtifactBought,
    BuyArtifact,
    CameHome,
    CaravanStepped,
    EndTurn,
    Equip,
    GameOver,
    GoldExchanged,
    GoodsTraded,
    MoveEnded,
    SeatScore,
    Step,
    StopMoving,
    Trade,
    TurnEnded,
    TurnStarted,
)
from domain.karawane import GAME, data, rules
from tests.domain.karawane.support import at, cell, play, spec, with_seat

replace = msgspec.structs.replace
NEXT_TO_HOME = cell(6, 0)


def test_a_caravan_coming_home_lays_out_its_gold_and_artifacts_and_gives_its_equipment_back():
    s = at(spec(), 0, NEXT_TO_HOME, gold=3, artifacts=("carpet",), goods=1, water_skins=1)
    s.state = with_seat(s.state, 0, ones=2)
    play(s, 0, Step(to=data.HOME))
    state = s.when(0, StopMoving()).then([MoveEnded(seat=0, desert=False),
                                          CameHome(seat=0, gold=3, artifacts=("carpet",), returned=2)])
    me = state.players[0]
    assert me.hand == rules.Hand() and (me.ones, me.artifacts) == (5, ("carpet",))
    assert state.supply.goods == 20 and state.supply.water_skins == 20 and state.supply.ones == 21
    assert state.stage == rules.HOME and GAME.view(state, None).players[0].gold == 5


def test_artifacts_are_bought_at_home_for_5_gold_each():
    s = spec()
    s.state = with_seat(s.state, 0, ones=11, artifacts=("carpet",))
    play(s, 0, Equip(), StopMoving())
    assert s.state.stage == rules.HOME
    assert [c for c in GAME.legal_commands(s.state, 0) if isinstance(c, BuyArtifact)] == [
        BuyArtifact(artifact="amulet"), BuyArtifact(artifact="lamp")]
    s.when(0, BuyArtifact(artifact="carpet")).then_error("has_artifact")
    play(s, 0, BuyArtifact(artifact="amulet"))
    state = s.when(0, BuyArtifact(artifact="lamp")).then(
        [ArtifactBought(seat=0, artifact="lamp", ones=5, threes=0)])
    assert state.players[0].ones == 1 and state.players[0].artifacts == ("carpet", "amulet", "lamp")
    assert state.ending and state.supply.artifacts == (5, 4, 4)
    s.given(s.decide(0, BuyArtifact(artifact="lamp")))
    assert [c for c in GAME.legal_commands(s.state, 0) if isinstance(c, BuyArtifact)] == []


def test_payment_uses_3_gold_cards_and_gives_change_only_when_it_must():
    p = rules.Seat(ones=2, threes=1)
    assert rules.payment(p, rules.Pile()) == (2, 1, 0)
    assert rules.payment(rules.Seat(ones=1, threes=2), rules.Pile()) == (0, 2, 1)
    assert rules.payment(rules.Seat(ones=1, threes=1), rules.Pile()) is None
    s = spec()
    s.state = with_seat(s.state, 0, ones=4)
    play(s, 0, Equip(), StopMoving())
    s.when(0, BuyArtifact(artifact="lamp")).then_error("cannot_pay")


def test_artifacts_are_bought_only_at_home():
    s = at(spec(), 0, cell(5, 0))
    s.state = with_seat(s.state, 0, ones=5)
    s.when(0, BuyArtifact(artifact="lamp")).then_error("wrong_phase")


def test_when_the_1_gold_cards_run_out_3_gold_cards_replace_laid_out_ones():
    s = at(spec(), 0, cell(4, 0), goods=2)
    s.state = with_seat(s.state, 1, ones=7)
    s.state = with_seat(s.state, 2, ones=2)
    s.state = replace(s.state, supply=replace(s.state.supply, ones=2))
    play(s, 0, Step(to=cell(3, 0)), StopMoving())
    state = s.when(0, Trade(goods=2)).then([GoodsTraded(seat=0, goods=2, clue=(cell(3, 0),)),
                                            GoldExchanged(seat=1, threes=2)])
    assert (state.players[1].ones, state.players[1].threes, state.players[1].gold) == (1, 2, 7)
    assert state.supply.ones == 6 and state.supply.threes == 8


def test_the_round_of_a_third_artifact_is_played_to_its_end_and_the_richest_complete_seats_share_the_win():
    s = spec(seats=3, first=0)
    s.state = with_seat(s.state, 0, ones=20, artifacts=("carpet",))  # the richest, but not complete
    s.state = with_seat(s.state, 1, ones=7, artifacts=("carpet", "amulet"))
    s.state = with_seat(s.state, 2, ones=2, artifacts=("carpet", "amulet", "lamp"))
    play(s, 0, Equip(), StopMoving(), EndTurn())
    play(s, 1, Equip(), StopMoving(), BuyArtifact(artifact="lamp"))
    events = s.decide(1, EndTurn())
    assert events == [TurnEnded(seat=1), TurnStarted(seat=2, round=1)]  # the round goes on
    s.given(events)
    play(s, 2, Equip(), StopMoving())
    events = s.decide(2, EndTurn())
    scores = (SeatScore(gold=20, artifacts=("carpet",)), SeatScore(gold=2, artifacts=("carpet", "amulet", "lamp")),
              SeatScore(gold=2, artifacts=("carpet", "amulet", "lamp")))
    assert events == [TurnEnded(seat=2), GameOver(scores=scores, winners=(1, 2))]
    state = s.given(events).state
    result = GAME.result(state)
    assert result.scores == (20, 2, 2) and result.winners == (1, 2)
    assert GAME.flow(state).awaiting == () and GAME.legal_commands(state, 0) == []
    s.when(0, EndTurn()).then_error("game_over")


def test_only_what_is_laid_out_counts():
    s = spec(seats=2, first=0)
    s.state = with_seat(s.state, 1, ones=9, artifacts=("carpet", "amulet"))
    s.state = with_seat(s.state, 0, artifacts=("carpet", "amulet", "lamp"))
    s = at(s, 1, cell(5, 0), artifacts=("lamp",))  # all three, but one in hand: not home yet
    play(s, 1, Step(to=cell(5, 1)), StopMoving())
    events = s.decide(1, EndTurn())
    assert isinstance(events[-1], GameOver) and events[-1].winners == (0,)


def test_a_caravan_passing_through_home_comes_home_at_that_moment_and_may_buy_after_its_move():
    """5.5: « L'or et les artefacts sont sauvegardés au moment où une caravane revient à la maison. Quand votre
    caravane atteint l'hexagone de départ [...], vous placez les cartes or et les cartes artefacts de votre main face
    visible »; 5.2: « les joueurs peuvent utiliser les options de chacun des hexagones traversés et pas seulement de
    celui où la caravane s'arrête ». The move need not end there; it does not equip (5.1: at the start of a turn)."""
    s = at(spec(), 0, NEXT_TO_HOME, gold=2, artifacts=("carpet",), water_skins=1)
    s.state = with_seat(s.state, 0, ones=3)
    play(s, 0, Step(to=data.HOME))
    events = s.decide(0, Step(to=NEXT_TO_HOME))
    assert events == [CameHome(seat=0, gold=2, artifacts=("carpet",), returned=1),
                      CaravanStepped(seat=0, to=NEXT_TO_HOME)]  # laid out on the home hex, before it leaves
    me = s.given(events).state.players[0]
    assert me.hand == rules.Hand() and (me.ones, me.artifacts) == (5, ("carpet",)) and me.cell == NEXT_TO_HOME
    state = s.when(0, Step(to=data.HOME)).then([CaravanStepped(seat=0, to=data.HOME),  # home again, third step:
                                                MoveEnded(seat=0, desert=False)])  # it came home once this turn
    assert state.stage == rules.HOME
    s = at(spec(), 0, NEXT_TO_HOME, gold=2)
    s.state = with_seat(s.state, 0, ones=3)
    play(s, 0, Step(to=data.HOME), Step(to=NEXT_TO_HOME))
    state = s.when(0, StopMoving()).then([MoveEnded(seat=0, desert=False)])
    assert state.stage == rules.HOME and BuyArtifact(artifact="lamp") in GAME.legal_commands(state, 0)
    assert not any(isinstance(c, Equip) for c in GAME.legal_commands(state, 0))
    s.given(s.decide(0, StopMoving()))
    assert state.players[0].cell == NEXT_TO_HOME and s.decide(0, BuyArtifact(artifact="lamp")) == [ArtifactBought(seat=0, artifact="lamp", ones=5, threes=0)]


def test_gold_laid_out_on_coming_home_is_exchanged_when_the_1_gold_cards_have_run_out():
    """« Si les cartes montrant un coffre d'or s'épuisent, vous pouvez échanger l'or se trouvant devant vous en cartes
    or avec trois coffres » (5.5): the pile can run out before anyone has three 1-gold cards laid out; the gold
    laid out on coming home is then exchanged, so that the desert cities can pay again."""
    s = at(spec(), 0, NEXT_TO_HOME, gold=2)
    s.state = with_seat(s.state, 0, ones=1)
    s.state = replace(s.state, supply=replace(s.state.supply, ones=0))  # the pile ran out (no laid-out triple then)
    play(s, 0, Step(to=data.HOME))
    state = s.when(0, StopMoving()).then([MoveEnded(seat=0, desert=False),
                                          CameHome(seat=0, gold=2, artifacts=(), returned=0),
                                          GoldExchanged(seat=0, threes=1)])
    me = state.players[0]
    assert (me.ones, me.threes, me.gold) == (0, 1, 3) and state.supply.ones == 3 and state.supply.threes == 9


def test_a_caravan_that_equips_and_stays_at_home_does_not_come_home_and_keeps_what_it_took():
    """« revient à la maison », « atteint l'hexagone de départ » (5.5): a return; a caravan that never left has not
    returned. It may still buy: « Si la caravane est à la maison (l'hexagone de départ), le joueur actif peut acheter
    des artefacts »."""
    s = spec()
    s.state = with_seat(s.state, 0, ones=5)
    play(s, 0, Equip(camel_drivers=2, water_skins=3, goods=1))
    state = s.when(0, StopMoving()).then([MoveEnded(seat=0, desert=False)])
    assert state.stage == rules.HOME and state.players[0].hand == rules.Hand(camel_drivers=2, water_skins=3, goods=1)
    assert BuyArtifact(artifact="lamp") in GAME.legal_commands(state, 0)


def test_under_revision_1_passing_through_home_is_not_coming_home():
    """The rules as the game landed (``Options.rules`` 1), which the games created before revision 2 keep."""
    s = at(spec(rules_revision=1), 0, NEXT_TO_HOME, gold=2)
    events = play(s, 0, Step(to=data.HOME), Step(to=NEXT_TO_HOME), StopMoving())
    assert not any(isinstance(e, CameHome) for e in events) and s.state.players[0].hand.gold == 2
    assert events[1] == CaravanStepped(seat=0, to=NEXT_TO_HOME)
