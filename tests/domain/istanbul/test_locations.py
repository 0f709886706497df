"""Every location of the sheet, given/when/then: the active seat (0) uses the played card freely; what it gains,
what it spends, and what is refused with which code."""

from __future__ import annotations

import pytest

from contracts.istanbul import CaravanReturned, CaravanTurned, GoodsCardDrawn, GuildDrawn, RubyCardPlaced
from contracts.istanbul import Draw
from domain.istanbul import GAME, data, rules
from tests.domain.istanbul.support import act, answer_all, at_act

UPG = rules.UPG_INDEX
GOOD = rules.GOOD_INDEX


def goods(state: rules.State, seat: int = 0) -> dict[str, int]:
    return dict(zip(data.GOODS, state.players[seat].goods))


def crossed(state: rules.State, seat: int = 0) -> dict[str, int]:
    return dict(zip(data.GOODS, state.players[seat].goods_x))


def upgrades(**levels: int) -> tuple[int, ...]:
    ups = [0] * len(data.UPGRADABLE)
    for loc, n in levels.items():
        ups[UPG[loc.lstrip("_")]] = n
    return tuple(ups)


def refused(s, seat, command, code):
    s.when(seat, command).then_error(code)


@pytest.mark.parametrize("loc,good", [("1", "fabric"), ("5", "spice"), ("10", "fruit")])
@pytest.mark.parametrize("level,gained", [(0, 2), (1, 3), (2, 4)])
def test_a_warehouse_gives_its_goods_two_then_three_then_four_with_upgrades(loc, good, level, gained):
    s = at_act(loc, sheets={0: {"upgrades": upgrades(**{"_" + loc: level})}})
    answer_all(s, {0: act(loc)})
    assert goods(s.state)[good] == gained


@pytest.mark.parametrize("level,count", [(0, 1), (1, 2), (2, 3)])
def test_the_black_market_gives_one_to_three_goods_of_choice(level, count):
    s = at_act("14", sheets={0: {"upgrades": upgrades(_14=level)}})
    choice = ("fabric", "jewelry", "spice")[:count]
    refused(s, 0, act("14", goods=choice + ("fruit",)), "bad_choice")
    answer_all(s, {0: act("14", goods=choice)})
    assert sum(goods(s.state).values()) == count and all(goods(s.state)[g] == 1 for g in choice)


def test_a_good_with_no_empty_box_left_is_lost():
    s = at_act("1", sheets={0: {"goods": (7, 0, 0, 0)}})
    answer_all(s, {0: act("1")})
    assert goods(s.state)["fabric"] == data.GOODS_ROW


def test_the_gem_merchant_turns_ten_lira_into_a_ruby():
    s = at_act("2", sheets={0: {"lira": 12}})
    answer_all(s, {0: act("2")})
    me = s.state.players[0]
    assert (me.rubies, me.lira, me.lira_x) == (1, 12, 10)


def test_the_gem_merchant_is_refused_with_nine_lira():
    s = at_act("2", sheets={0: {"lira": 12, "lira_x": 3}})
    refused(s, 0, act("2"), "cannot_use")


def test_the_great_market_spends_two_identical_goods_for_three_lira_and_a_box():
    s = at_act("3", sheets={0: {"goods": (0, 3, 0, 0)}})
    refused(s, 0, act("3", goods=("fabric",), fill=("bonus",)), "bad_choice")  # no fabric
    answer_all(s, {0: act("3", goods=("spice",), fill=("bonus",))})
    me = s.state.players[0]
    assert crossed(s.state)["spice"] == 2 and me.lira == 3 and me.bonus == 1


def test_a_goods_card_pays_goods_its_surplus_lost_and_the_boxes_pay_the_rest():
    s = at_act("3", sheets={0: {"goods": (0, 1, 0, 0), "cards": ("fabric/spice",)}})
    answer_all(s, {0: act("3", goods=("spice",), cards=("fabric/spice",), fill=("lira",))})
    me = s.state.players[0]
    assert me.cards == () and crossed(s.state)["spice"] == 1 and goods(s.state)["fabric"] == 0
    assert s.state.goods_discard == ("fabric/spice",) and me.lira == 4 and me.goods_cards_played == 1


def test_a_goods_card_that_pays_nothing_is_refused():
    s = at_act("3", sheets={0: {"goods": (0, 2, 0, 0), "cards": ("fabric/fruit",)}})
    refused(s, 0, act("3", goods=("spice",), cards=("fabric/fruit",), fill=("lira",)), "bad_choice")


def test_the_great_market_is_refused_without_two_identical_goods():
    s = at_act("3", sheets={0: {"goods": (1, 1, 1, 1)}})
    refused(s, 0, act("3", goods=("spice",), fill=("lira",)), "cannot_use")


def test_the_post_office_gives_a_goods_card_and_a_lira():
    s = at_act("4")
    events = answer_all(s, {0: act("4")})
    assert GoodsCardDrawn(seat=0, card=data.GOODS_CARDS[0]) in events
    me = s.state.players[0]
    assert me.cards == (data.GOODS_CARDS[0],) and me.lira == 1
    drawn = next(e for e in events if isinstance(e, GoodsCardDrawn))
    assert GAME.redact(drawn, 1).card is None and GAME.redact(drawn, 0) is drawn


def test_the_caravanserai_does_the_face_up_caravan_card_which_then_goes_under_its_deck():
    s = at_act("6", caravan=5)  # caravan card 5: 4 lira
    answer_all(s, {0: act("6")})
    assert s.state.players[0].lira == 4 and s.state.caravan_used
    events = s.decide(0, Draw(source="left"))
    assert CaravanReturned(card=5) in events and CaravanTurned(card=1) in events
    s.given(events)
    assert s.state.caravan == 1 and s.state.caravan_deck[-1] == 5


def test_the_coffee_roaster_gives_two_goods_of_choice():
    s = at_act("7")
    refused(s, 0, act("7", goods=("spice", "fabric")), "bad_choice")  # lists are sorted
    answer_all(s, {0: act("7", goods=("fabric", "spice"))})
    assert goods(s.state) == {"fabric": 1, "spice": 1, "fruit": 0, "jewelry": 0}


@pytest.mark.parametrize("level,lira", [(0, 4), (1, 6), (2, 8)])
def test_the_tea_house_gives_four_six_or_eight_lira(level, lira):
    s = at_act("8", sheets={0: {"upgrades": upgrades(_8=level)}})
    answer_all(s, {0: act("8")})
    assert s.state.players[0].lira == lira


def test_the_guild_hall_gives_a_guild_card_seen_by_its_seat_only():
    s = at_act("9", guild_order=(7, *[g for g in range(1, 17) if g != 7]))
    events = answer_all(s, {0: act("9")})
    drawn = next(e for e in events if isinstance(e, GuildDrawn))
    assert drawn == GuildDrawn(seat=0, card=7) and s.state.players[0].guild == (7,)
    assert GAME.redact(drawn, 1).card is None


def test_the_small_market_turns_a_goods_card_into_five_lira():
    s = at_act("11", sheets={0: {"cards": ("fruit/spice",)}})
    answer_all(s, {0: act("11", discard="fruit/spice")})
    me = s.state.players[0]
    assert me.cards == () and me.lira == 5 and s.state.goods_discard == ("fruit/spice",)


def test_the_small_market_is_refused_without_a_goods_card():
    refused(at_act("11"), 0, act("11", discard="fruit/spice"), "cannot_use")


def test_the_catacombs_do_another_locations_action_and_cross_only_their_own_icon():
    s = at_act("12", seats=3, sheets={1: {"lira": 10}})
    refused(s, 0, act("12", target="12"), "bad_target")
    refused(s, 0, act("12"), "bad_target")
    answer_all(s, {0: act("12", target="8"), 1: act("12", via="icon", target="2")})
    p0, p1 = s.state.players[0], s.state.players[1]
    assert p0.lira == 4 and p0.icons == (0,) * 18
    assert p1.rubies == 1 and p1.icons[rules.LOC_INDEX["12"]] == 1 and p1.icons[rules.LOC_INDEX["2"]] == 0


@pytest.mark.parametrize("played", ["11", "13", "C", "D"])
def test_the_catacombs_cannot_be_reached_through_11_13_c_or_d(played):
    s = at_act(played, sheets={0: {"goods": (8, 8, 8, 8)}})
    refused(s, 0, act("12", target="8"), "not_reachable")
    assert all(c.location != "12" for c in GAME.legal_commands(s.state, 0) if hasattr(c, "location"))


def test_abundance_gives_up_to_two_upgrades_on_one_or_two_locations():
    s = at_act("13", seats=3, sheets={1: {"bonus": 1}})
    refused(s, 0, act("13", upgrades=("1", "5", "8")), "bad_choice")
    answer_all(s, {0: act("13", upgrades=("1", "1")), 1: act("13", via="bonus", upgrades=("14", "5"))})
    assert s.state.players[0].upgrades == upgrades(_1=2)
    assert s.state.players[1].upgrades == upgrades(_5=1, _14=1) and s.state.players[1].bonus_x == 1


def test_abundance_cannot_raise_a_location_past_its_two_grey_squares():
    s = at_act("13", sheets={0: {"upgrades": upgrades(_1=2)}})
    refused(s, 0, act("13", upgrades=("1",)), "bad_choice")


def test_a_palace_letter_spends_the_goods_shown_for_a_ruby_and_a_ruby_card_is_tucked_there():
    s = at_act("A", sheets={0: {"goods": (4, 0, 1, 0)}})
    assert rules.price(s.state, "A") == ("fabric",) * 4 + ("fruit",)  # 2 players: a second card at setup
    answer_all(s, {0: act("A")})
    me = s.state.players[0]
    assert me.rubies == 1 and me.goods_x == (4, 0, 1, 0) and me.palace_rubies == (1, 0, 0, 0)
    events = s.decide(0, Draw(source="left"))
    assert RubyCardPlaced(letter="A", card=8, tucked=True) in events
    s.given(events)
    assert len(rules.price(s.state, "A")) == 6  # one good more


def test_a_palace_letter_is_refused_when_its_goods_cannot_be_paid():
    s = at_act("A", sheets={0: {"goods": (4, 0, 0, 0), "cards": ("fabric/spice",)}})
    refused(s, 0, act("A"), "cannot_use")


def test_a_palace_letter_may_be_paid_with_goods_cards():
    s = at_act("A", sheets={0: {"goods": (2, 0, 0, 0), "cards": ("fabric/fabric", "fabric/fruit")}})
    answer_all(s, {0: act("A", cards=("fabric/fabric", "fabric/fruit"))})
    me = s.state.players[0]
    assert me.rubies == 1 and me.cards == () and me.goods_x == (1, 0, 0, 0)
