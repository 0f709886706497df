"""The end of the action (ruby bonuses, the draw, the refill, ruby cards tucked, the turn passed), the end of the
game with its tie-breaks, and the solo game with its challenges; given/when/then and the rulebook's examples."""

from __future__ import annotations

import msgspec

from contracts.istanbul import (
    BonusRuby,
    CaravanReturned,
    CaravanTurned,
    Draw,
    GameOver,
    LocationRevealed,
    LocationTaken,
    PlayLocation,
    RubyCardPlaced,
    SoloCardDiscarded,
    TakeBonus,
    TurnStarted,
)
from domain.istanbul import GAME, data, rules
from tests.domain.istanbul.support import act, answer_all, at_act, card_of, spec, with_sheet

replace = msgspec.structs.replace


def test_filling_the_last_box_of_a_lira_section_gives_its_ruby_and_lira_beyond_the_sheet_are_lost():
    s = at_act("8", sheets={0: {"lira": 18}})
    events = answer_all(s, {0: act("8")})
    assert BonusRuby(seat=0, bonus="lira-1") in events and s.state.players[0].rubies == 1
    s = at_act("8", sheets={0: {"lira": 38, "ruby_bonuses": ("lira-1",), "rubies": 1}})
    events = answer_all(s, {0: act("8")})
    me = s.state.players[0]
    assert BonusRuby(seat=0, bonus="lira-2") in events and me.rubies == 2 and me.lira == 40


def test_filling_a_goods_bonus_column_in_all_four_rows_gives_its_ruby_once():
    s = at_act("1", sheets={0: {"goods": (4, 5, 5, 5)}})
    events = answer_all(s, {0: act("1")})
    assert [e for e in events if isinstance(e, BonusRuby)] == [BonusRuby(seat=0, bonus="goods-5")]
    assert s.state.players[0].ruby_bonuses == ("goods-5",)


def test_after_playing_the_hand_card_the_seat_takes_a_face_up_card_and_the_display_is_refilled():
    s = at_act("8", deck=(card_of("9", 1),))
    answer_all(s, {})
    assert GAME.flow(s.state).phase == "draw" and GAME.flow(s.state).awaiting == (0,)
    assert GAME.legal_commands(s.state, 0) == [Draw("left"), Draw("right"), Draw("deck")]
    s.when(1, Draw(source="left")).then_error("not_your_turn")
    left = s.state.display[0]
    events = s.decide(0, Draw(source="left"))
    assert events[:2] == [LocationTaken(seat=0, slot="left", card=left), LocationRevealed(card=card_of("9", 1), slot="right")]
    s.given(events)
    assert s.state.players[0].hand == (left,) and events[-1] == TurnStarted(seat=1, round=1)


def test_after_playing_a_face_up_card_there_is_no_draw_and_the_turn_passes_clockwise():
    s = spec(2, ["1", "5"], first=1)
    s.given(s.decide(1, PlayLocation(source="left")))
    events = answer_all(s, {})
    assert not any(isinstance(e, LocationTaken) for e in events)
    assert events[-1] == TurnStarted(seat=0, round=1)
    s.given(s.decide(0, PlayLocation(source="left")))
    assert answer_all(s, {})[-1] == TurnStarted(seat=1, round=2)  # back to the first player: a new round


def test_no_ruby_card_is_tucked_once_the_ruby_deck_is_empty():
    s = at_act("A", sheets={0: {"goods": (4, 0, 1, 0)}})
    s.state = replace(s.state, ruby_deck=())
    answer_all(s, {0: act("A")})
    events = s.decide(0, Draw(source="left"))
    assert not any(isinstance(e, RubyCardPlaced) for e in events)


def test_drawing_from_an_empty_location_deck_is_refused():
    s = at_act("8")
    answer_all(s, {})
    s.state = replace(s.state, location_deck=())
    s.when(0, Draw(source="deck")).then_error("empty_deck")


def test_the_game_ends_at_once_when_the_display_cannot_be_refilled():
    s = at_act("8")
    answer_all(s, {})
    s.state = replace(s.state, location_deck=())
    events = s.decide(0, Draw(source="left"))
    assert isinstance(events[-1], GameOver) and events[-1].reason == "display"
    s.given(events)
    assert GAME.result(s.state) is not None and GAME.flow(s.state).awaiting == ()


def play_turn(s, seat):
    s.given(s.decide(seat, PlayLocation(source="left")))
    return answer_all(s, {})


def test_a_tenth_ruby_ends_the_game_after_the_round_the_first_players_right_hand_neighbour_plays_last():
    s = at_act("2", seats=3, first=0, sheets={0: {"rubies": 9, "lira": 10}})
    events = answer_all(s, {0: act("2")})
    events = s.decide(0, Draw(source="deck"))
    s.given(events)
    assert s.state.players[0].rubies == 10 and events[-1] == TurnStarted(seat=1, round=1)
    assert play_turn(s, 1)[-1] == TurnStarted(seat=2, round=1)
    last = play_turn(s, 2)[-1]
    assert isinstance(last, GameOver) and last.reason == "rubies" and last.winners == (0,)
    assert GAME.result(s.state).scores == (10, 0, 0)


def test_rubies_beyond_ten_are_counted():
    state = spec(2, ["1", "5"]).state
    state = with_sheet(state, 0, rubies=12)
    state = with_sheet(state, 1, rubies=11)
    over = rules._game_over(state, "rubies")
    assert [x.rubies for x in over.scores] == [12, 11] and over.winners == (0,)


def test_the_tie_break_example_one_goods_card_three_lira_six_goods_and_a_bonus_action_make_12():
    p = rules.Seat(cards=("fabric/spice",), lira=5, lira_x=2, goods=(3, 2, 2, 0), goods_x=(1, 0, 0, 0),
                   bonus=2, bonus_x=1)
    assert rules.tiebreak(p) == 12


def test_a_ruby_tie_is_broken_by_uncrossed_boxes_then_the_victory_is_shared():
    state = spec(3, ["1", "5", "10"]).state
    for seat, lira in ((0, 3), (1, 5), (2, 5)):
        state = with_sheet(state, seat, rubies=10, lira=lira)
    assert rules._game_over(state, "rubies").winners == (1, 2)
    state = with_sheet(state, 2, lira=6)
    assert rules._game_over(state, "rubies").winners == (2,)


# --- solo -----------------------------------------------------------------------------------------------

def test_solo_after_each_turn_the_left_card_is_discarded_and_used_as_an_opponent_would():
    s = at_act("8", seats=1, display=("2", "4"), deck=(card_of("4"),))  # the refill: a card marked right
    answer_all(s, {0: act("8")})
    events = s.decide(0, Draw(source="right"))  # takes the 4; the 2 stays, left of the card the refill adds
    s.given(events)
    discarded = [e for e in events if isinstance(e, SoloCardDiscarded)]
    assert discarded == [SoloCardDiscarded(card=s.state.played, after_turn=True)] and GAME.flow(s.state).phase == "solo"
    assert data.LOCATION_CARDS[s.state.played].location == "2"
    s.when(0, act("2")).then_error("wrong_via")
    assert TakeBonus() in GAME.legal_commands(s.state, 0)
    events = s.decide(0, TakeBonus())
    s.given(events)
    assert events[-1] == TurnStarted(seat=0, round=2) and s.state.players[0].bonus == 1
    assert len(s.state.display) == 2  # refilled after the discard: « pour en avoir toujours 2 de disponible »


def test_solo_the_display_is_refilled_after_the_discarded_card_so_each_turn_starts_with_two_face_up_cards():
    """« Après chacun de vos tours, défaussez la carte Lieu de gauche » with the 2-player rules' « remettez une carte
    Lieu pour en avoir toujours 2 de disponible »; the solo mark places a card « à gauche ou à droite de celle
    présente sur la table »: one card is there at every refill, so the display is refilled after the discard too."""
    s = at_act("8", seats=1, display=("2", "4"), deck=(card_of("9"), card_of("13")))  # both marked left
    answer_all(s, {0: act("8")})
    s.given(s.decide(0, Draw(source="right")))  # takes the 4; the 9 goes left of the 2 and is discarded
    assert s.state.played == card_of("9") and s.state.display == (card_of("2", 1),)
    events = s.decide(0, TakeBonus())
    s.given(events)
    refill = LocationRevealed(card=card_of("13"), slot="left")
    assert refill in events and events.index(refill) < events.index(TurnStarted(seat=0, round=2))
    assert s.state.display == (card_of("13"), card_of("2", 1))
    assert {PlayLocation(source="left"), PlayLocation(source="right")} <= set(GAME.legal_commands(s.state, 0))


def test_solo_the_game_ends_at_once_when_the_display_cannot_be_refilled_after_the_discard():
    s = at_act("8", seats=1, display=("2", "4"))
    answer_all(s, {0: act("8")})
    s.given(s.decide(0, Draw(source="right")))
    s.state = replace(s.state, location_deck=())
    events = s.decide(0, TakeBonus())
    assert isinstance(events[-1], GameOver) and events[-1].reason == "display"


def test_solo_a_ruby_taken_in_the_turn_raises_the_letters_price_before_the_discarded_card_is_used():
    """« Après chacun de vos tours, défaussez la carte Lieu de gauche »: the turn's end of the action (« Ajoutez 1
    carte Rubis pour chaque lettre ... où au moins 1 Rubis a été obtenu à ce tour ») is done before the discard; the
    discarded card's use, as an opponent's, tucks its own ruby cards afterwards."""
    rubies = (0, 1, 2, 3, 4, 5, 6, 7, 14, 8, 9, 10, 11, 12, 13, 15, 16, 17, 18, 19)  # tucked next: 14, then 8
    s = at_act("A", seats=1, sheets={0: {"goods": (8, 0, 8, 0)}}, display=("3", "4"), deck=(card_of("4"),),
               ruby_order=rubies)
    answer_all(s, {0: act("A")})  # 4 fabric and 1 fruit (ruby cards 0 and 4) for a ruby
    events = s.decide(0, Draw(source="right"))  # takes the 4; the 3 (adjacent to A) stays left and is discarded
    s.given(events)
    tucked = RubyCardPlaced(letter="A", card=14, tucked=True)
    assert events.index(tucked) < events.index(SoloCardDiscarded(card=card_of("3", 1), after_turn=True))
    assert rules.price(s.state, "A") == ("fabric",) * 4 + ("fruit",) * 2
    events = s.decide(0, act("A", via="icon"))
    s.given(events)
    assert s.state.players[0].goods_x == (8, 0, 3, 0) and s.state.players[0].rubies == 2
    assert RubyCardPlaced(letter="A", card=8, tucked=True) in events and s.state.palace[0] == (0, 4, 14, 8)


def test_solo_the_caravan_card_used_in_the_turn_is_replaced_before_the_discarded_card_is_used():
    """« Si quelqu'un a utilisé une carte Caravane à ce tour, remettez celle-ci ... sous le paquet » ends the turn,
    before the discard: the discarded card's use sees the next caravan card, which then goes under the deck too."""
    s = at_act("6", seats=1, caravan=5, display=("7", "4"), deck=(card_of("4"),))
    answer_all(s, {0: act("6")})  # caravan card 5: 4 lira
    events = s.decide(0, Draw(source="right"))  # the 7 (adjacent to 6) stays left and is discarded
    s.given(events)
    assert events.index(CaravanReturned(card=5)) < events.index(SoloCardDiscarded(card=card_of("7", 1), after_turn=True))
    assert s.state.caravan == 1
    events = s.decide(0, act("6", via="icon", goods=("fabric",) * 3))  # caravan card 1: 3 identical goods
    s.given(events)
    assert s.state.players[0].goods == (3, 0, 0, 0) and s.state.players[0].lira == 4
    assert CaravanReturned(card=1) in events and CaravanTurned(card=2) in events and s.state.caravan == 2


def test_a_solo_discard_stored_before_the_turn_was_settled_first_keeps_the_turns_letters_and_caravan():
    """Old streams: ``SoloCardDiscarded`` without ``after_turn`` came before the turn's tucks and caravan return,
    which were done after the use, together with the use's; folding it must keep them owed."""
    old = msgspec.json.decode(b'{"type":"istanbul.SoloCardDiscarded","card":20}', type=SoloCardDiscarded)
    assert old == SoloCardDiscarded(card=20) and not old.after_turn
    state = replace(spec(1, ["1"], display=("3", "4")).state, stage=rules.AFTER, letters_taken=("A",),
                    caravan_used=True)
    assert rules.evolve(state, old).letters_taken == ("A",) and rules.evolve(state, old).caravan_used
    new = rules.evolve(state, SoloCardDiscarded(card=20, after_turn=True))
    assert new.letters_taken == () and not new.caravan_used
    # the stored bytes stay what they were: a payload re-encoded (verify, records) is the one that was hashed
    assert msgspec.json.encode(old) == b'{"type":"istanbul.SoloCardDiscarded","card":20}'


def test_under_revision_1_the_solo_discard_comes_before_the_refill_and_the_display_keeps_one_card():
    """The rules as the game landed (``Options.rules`` 1), which the solo games created before revision 2 keep."""
    s = at_act("8", seats=1, display=("2", "4"), deck=(card_of("4"),), rules_revision=1)
    answer_all(s, {0: act("8")})
    events = s.decide(0, Draw(source="right"))
    s.given(events)
    discarded = [e for e in events if isinstance(e, SoloCardDiscarded)]
    assert discarded == [SoloCardDiscarded(card=s.state.played)] and GAME.flow(s.state).phase == "solo"
    events = s.decide(0, TakeBonus())
    s.given(events)
    assert events[-1] == TurnStarted(seat=0, round=2) and s.state.players[0].bonus == 1
    assert len(s.state.display) == 1


def test_solo_refills_place_each_card_left_or_right_by_its_mark():
    left_marked, right_marked = card_of("9"), card_of("4")  # ids 8 and 3: even ids are marked left
    assert data.LOCATION_CARDS[left_marked].mark == "left" and data.LOCATION_CARDS[right_marked].mark == "right"
    for top, discarded, kept in ((left_marked, left_marked, card_of("2", 1)), (right_marked, card_of("2", 1), right_marked)):
        s = at_act("8", seats=1, display=("2", "4"), deck=(top,))
        answer_all(s, {0: act("8")})
        s.given(s.decide(0, Draw(source="right")))  # the 2 stays; the refill goes left or right of it
        assert (s.state.played, s.state.display) == (discarded, (kept,))


def test_solo_does_not_end_at_ten_rubies():
    s = at_act("2", seats=1, sheets={0: {"rubies": 9, "lira": 10}})
    answer_all(s, {0: act("2")})
    s.given(s.decide(0, Draw(source="deck")))
    s.given(s.decide(0, TakeBonus()))
    assert s.state.stage == rules.TURN and s.state.players[0].rubies == 10


def test_the_solo_challenge_example_11_rubies_3_goods_bonuses_and_every_action_crossed_meet_7_and_9():
    state = spec(1, ["1"]).state
    icons = tuple(data.ICONS[state.side][loc] for loc in data.LOCATIONS)
    state = with_sheet(state, 0, rubies=11, ruby_bonuses=("goods-5", "goods-6", "goods-7"),
                       goods=(7, 7, 7, 7), icons=icons, goods_cards_played=2, upgrades=(2, 2, 0, 0, 0))
    over = rules._game_over(state, "display")
    assert over.column == 11 and {7, 9} <= set(over.challenges)
    assert 8 not in over.challenges and 10 not in over.challenges  # no goods-type column completed
    state = rules.evolve(state, over)
    details = GAME.result(state).details
    assert details["column"] == 11 and 7 in details["challenges"]


def test_solo_challenge_9_is_an_action_icon_crossed_at_every_location_which_one_solo_game_can_reach():
    """A solo game crosses an action icon only when it uses the discarded left card as an opponent would: one icon
    for each discarded card, so at most 36 (the location cards); the sheet has 59 icons left after setup: "every
    location action crossed" cannot mean every icon, or the text's example (challenge 9 met with 11 rubies) could
    never happen. It is one icon crossed at each location, the thick ones crossed at setup included (A-S3)."""
    state = spec(1, ["1"]).state
    me = state.players[0]
    left = sum(rules.icons_left(state, me, loc) for loc in data.LOCATIONS)
    assert left > sum(1 for card in data.LOCATION_CARDS if card.location is not None)
    once = tuple(max(crossed, 1) for crossed in me.icons)
    assert 9 in rules.solo_challenges(state, rules.Seat(icons=once))
    assert {9, 10} <= set(rules.solo_challenges(state, rules.Seat(icons=once, goods=(8, 0, 0, 0))))
    missing = tuple(0 if loc == "13" else n for n, loc in zip(once, data.LOCATIONS))
    assert 9 not in rules.solo_challenges(state, rules.Seat(icons=missing))


def test_solo_challenges_count_filled_boxes_even_crossed_ones():
    p = rules.Seat(lira=35, lira_x=30, goods=(8, 0, 0, 0), goods_x=(8, 0, 0, 0), palace_rubies=(5, 0, 1, 2))
    state = spec(1, ["1"]).state
    met = rules.solo_challenges(state, p)
    assert {2, 3, 5, 12, 13, 14} <= set(met) and 6 not in met


def test_solo_below_ten_rubies_reports_no_column():
    state = with_sheet(spec(1, ["1"]).state, 0, rubies=9)
    assert rules._game_over(state, "deck").column is None
