"""A turn of Istanbul, given/when/then: playing a card, the other seats following (an action icon or a bonus
action) or taking a bonus action, their answers secret and resolved clockwise, and what is refused."""

from __future__ import annotations

from contracts.istanbul import (
    Action,
    Answered,
    BonusTaken,
    GuildDrawn,
    LocationPlayed,
    PlayGuild,
    PlayLocation,
    TakeBonus,
)
from domain.istanbul import GAME, data, rules
from tests.domain.istanbul.support import act, answer_all, at_act, spec, with_sheet

L = rules.LOC_INDEX


def test_the_tea_house_example_every_seat_may_use_8_4_9_13_b_or_d():
    s = at_act("8", seats=3, sheets={1: {"goods": (8, 8, 8, 8), "lira": 40, "cards": ("fabric/spice",)}})
    locations = {c.location for c in GAME.legal_commands(s.state, 1) if hasattr(c, "location")}
    assert locations == {"8", "4", "9", "13", "B", "D"}


def test_the_active_seat_plays_its_hand_or_a_face_up_card():
    s = spec(2, ["8", "1"], display=("2", "3"))
    assert GAME.legal_commands(s.state, 0) == [PlayLocation("hand"), PlayLocation("left"), PlayLocation("right")]
    [event] = s.decide(0, PlayLocation(source="right"))
    assert isinstance(event, LocationPlayed) and data.LOCATION_CARDS[event.card].location == "3"
    s.when(1, PlayLocation(source="hand")).then_error("not_your_turn")


def test_every_seat_answers_a_location_card_at_once():
    s = at_act("8", seats=3)
    assert GAME.flow(s.state).awaiting == (0, 1, 2)
    s.given(s.decide(2, TakeBonus()))
    assert GAME.flow(s.state).awaiting == (0, 1)
    s.when(2, TakeBonus()).then_error("already_answered")


def test_a_follower_crosses_an_action_icon_of_the_location_it_used():
    s = at_act("8", seats=3)
    answer_all(s, {0: act("8"), 1: act("4", via="icon")})
    p1 = s.state.players[1]
    assert p1.icons[L["4"]] == 1 and p1.lira == 1 and len(p1.cards) == 1


def test_the_active_seat_uses_the_card_freely_and_the_others_do_not():
    s = at_act("8", seats=3)
    s.when(0, act("8", via="icon")).then_error("wrong_via")
    s.when(1, act("8")).then_error("wrong_via")


def test_a_follower_without_an_icon_left_or_a_bonus_action_is_refused():
    s = at_act("8", seats=3, sheets={1: {"icons": tuple(4 if loc == "8" else 0 for loc in data.LOCATIONS)}})
    s.when(1, act("8", via="icon")).then_error("no_icon_left")
    s.when(1, act("8", via="bonus")).then_error("no_bonus_action")


def test_a_follower_may_cross_a_filled_bonus_action_instead():
    s = at_act("8", seats=3, sheets={1: {"bonus": 2}})
    answer_all(s, {0: act("8"), 1: act("8", via="bonus")})
    p1 = s.state.players[1]
    assert (p1.bonus, p1.bonus_x, p1.lira, p1.icons[L["8"]]) == (2, 1, 4, 0)


def test_a_seat_that_does_not_use_the_card_gains_a_bonus_action_none_when_its_section_is_full():
    s = at_act("8", seats=3, sheets={2: {"bonus": 10}})
    events = answer_all(s, {0: act("8")})
    assert BonusTaken(seat=1, gained=True) in events and BonusTaken(seat=2, gained=False) in events
    assert s.state.players[1].bonus == 1 and s.state.players[2].bonus == 10


def test_with_one_or_two_players_the_thick_icons_of_3_7_8_12_are_crossed_at_setup():
    two, three = spec(2, ["1", "5"]).state, spec(3, ["1", "5", "10"]).state
    for loc in data.LOCATIONS:
        assert two.players[0].icons[L[loc]] == (1 if loc in ("3", "7", "8", "12") else 0)
        assert three.players[0].icons[L[loc]] == 0


def test_with_four_players_the_thick_bonus_box_is_crossed_and_five_use_it():
    assert spec(4, ["1", "5", "10", "14"]).state.players[0].bonus_boxes == 10
    assert spec(5, ["1", "5", "10", "14", "4"]).state.players[0].bonus_boxes == 11
    assert spec(3, ["1", "5", "10"]).state.side == "1-3" and spec(4, ["1", "5", "10", "14"]).state.side == "4-5"


def test_answers_stay_secret_until_every_seat_answered():
    s = at_act("8", seats=3)
    [answered] = s.decide(1, act("4", via="icon"))
    s.given([answered])
    assert GAME.redact(answered, 2) == Answered(seat=1, action=None, bonus=None)
    assert GAME.redact(answered, None) == Answered(seat=1, action=None, bonus=None)
    assert GAME.redact(answered, 1) is answered
    assert GAME.view(s.state, 2).you.answer is None and GAME.view(s.state, 1).you.answer == Action("4", "icon")
    assert GAME.view(s.state, 2).players[1].answered


def test_answers_resolve_clockwise_from_the_active_seat_whatever_their_order():
    s = at_act("9", seats=3, first=0, sheets={1: {"bonus": 1}, 2: {"bonus": 1}})
    events = []
    for seat, command in ((2, act("9", via="bonus")), (1, act("9", via="bonus")), (0, act("9"))):
        new = s.decide(seat, command)
        s.given(new)
        events += new
    assert [e.seat for e in events if isinstance(e, GuildDrawn)] == [0, 1, 2]
    assert [s.state.players[i].guild for i in range(3)] == [(1,), (2,), (3,)]


def test_a_guild_card_is_used_by_the_active_seat_alone():
    s = spec(3, ["1", "5", "10"])
    s.state = with_sheet(s.state, 0, guild=(14,), lira=7)
    [played] = s.decide(0, PlayGuild(card=14))
    s.given([played])
    assert GAME.flow(s.state).awaiting == (0,)
    s.when(0, TakeBonus()).then_error("guild_turn")
    s.when(1, TakeBonus()).then_error("not_your_turn")
    from contracts.istanbul import Act

    s.given(s.decide(0, Act()))
    me = s.state.players[0]
    assert (me.rubies, me.lira_x, me.guild, me.guild_played) == (1, 7, (), 1)
    assert s.state.guild_discard == (14,)


def test_a_guild_card_is_refused_when_its_cost_cannot_be_paid_or_it_is_not_held():
    s = spec(3, ["1", "5", "10"])
    s.state = with_sheet(s.state, 0, guild=(14,), lira=6)
    s.when(0, PlayGuild(card=14)).then_error("cannot_pay")
    s.when(0, PlayGuild(card=13)).then_error("not_your_card")
    assert PlayGuild(card=14) not in GAME.legal_commands(s.state, 0)


def test_a_guild_card_whose_action_cannot_be_done_is_refused():
    s = spec(3, ["1", "5", "10"])
    s.state = with_sheet(s.state, 0, guild=(5,), lira=10)  # palace A: no goods
    s.when(0, PlayGuild(card=5)).then_error("cannot_use")


def test_legal_commands_are_exactly_what_decide_accepts_in_an_answer():
    s = at_act("8", seats=3, sheets={1: {"goods": (3, 3, 3, 3), "bonus": 1, "cards": ("fabric/spice",), "lira": 12}})
    legal = GAME.legal_commands(s.state, 1)
    assert len(legal) == len(set(map(repr, legal)))
    for command in legal:
        s.decide(1, command)  # accepted (raises otherwise)


def test_undo_barriers_are_chance_and_reveals_and_a_secret_answer_is_not_one():
    s = at_act("8", seats=3)
    [answered] = s.decide(1, act("4", via="icon"))
    assert not GAME.is_barrier(answered)
    assert not GAME.is_barrier(LocationPlayed(seat=0, source="left", card=1))
    assert GAME.is_barrier(LocationPlayed(seat=0, source="hand", card=1))  # the hand's card is shown
    s.given([answered])
    events = answer_all(s, {})
    assert all(GAME.is_barrier(e) for e in events if type(e).__name__ in ("Acted", "BonusTaken", "GoodsCardDrawn"))
