"""Every guild card, caravan card and fountain, given/when/then (data: domain/istanbul/data.py)."""

from __future__ import annotations

import pytest

from contracts.istanbul import (
    Act,
    ChooseFountain,
    Draw,
    FountainRevealed,
    FountainTaken,
    GoodsCardDrawn,
    GuildDrawn,
    GuildKept,
    KeepGuild,
    LocationRevealed,
    PlayGuild,
    PlayLocation,
)
from domain.istanbul import GAME, data, rules
from tests.domain.istanbul.support import act, answer_all, at_act, card_of, fountain_card, spec, with_sheet

FIRST_GOODS_CARD = data.GOODS_CARDS[0]  # the goods deck in data order: "fabric/fabric" on top


def guild_turn(card: int, command: Act, **sheet) -> rules.State:
    s = spec(2, ["1", "5"])
    s.state = with_sheet(s.state, 0, guild=(card,), lira=data.GUILD[card].cost + sheet.pop("lira", 0), **sheet)
    s.given(s.decide(0, PlayGuild(card=card)))
    s.given(s.decide(0, command))
    return s.state


def sheet_of(state):
    return state.players[0]


GUILD_CASES = [
    # card, command, sheet before, what the sheet shows after
    (1, Act(goods=("fabric", "spice"), upgrades=("8",)), {}, lambda p: p.goods == (1, 1, 0, 0) and p.upgrades[2] == 1),
    (2, Act(fill=("bonus", "lira")), {}, lambda p: p.bonus == 1 and p.lira == 3),
    (3, Act(goods=("fabric", "fruit", "jewelry", "spice")), {}, lambda p: p.goods == (1, 1, 1, 1) and p.lira == 3 + 1),
    (4, Act(goods=("fruit",) * 4), {}, lambda p: p.goods == (0, 0, 4, 0)),
    (5, Act(), {"goods": (4, 0, 1, 0)}, lambda p: p.rubies == 1 and p.lira - p.lira_x == 5),
    (6, Act(), {"goods": (4, 0, 1, 0)}, lambda p: p.rubies == 1 and p.guild == (1,)),
    (7, Act(goods=("jewelry",), fill=("spice",)), {"goods": (0, 4, 0, 1)},
     lambda p: p.rubies == 1 and p.goods == (0, 5, 0, 2) and p.goods_x == (0, 4, 0, 1)),
    (8, Act(upgrades=("14",)), {"goods": (0, 4, 0, 1)},
     lambda p: p.rubies == 1 and p.cards == (FIRST_GOODS_CARD,) and p.upgrades[4] == 1),
    (9, Act(goods=("fruit",), fill=("bonus",)), {}, lambda p: len(p.cards) == 2 and p.goods[2] == 1 and p.bonus == 1),
    (10, Act(goods=("fabric", "fabric", "spice")), {"goods": (2, 1, 0, 0)},
     lambda p: p.rubies == 1 and p.goods_x == (2, 1, 0, 0)),
    (11, Act(goods=("fruit",), discard="spice/spice"), {"goods": (0, 0, 1, 0), "cards": ("spice/spice",)},
     lambda p: p.rubies == 1 and p.cards == () and p.goods_x == (0, 0, 1, 0)),
    (12, Act(letter="C"), {"goods": (0, 4, 0, 1)},
     lambda p: p.rubies == 1 and p.palace_rubies == (0, 0, 1, 0) and len(p.cards) == 1 and p.guild == (1,)),
    (13, Act(discard="fabric/spice", fill=("fruit",)), {"cards": ("fabric/spice",)},
     lambda p: p.rubies == 1 and p.cards == () and p.goods[2] == 1),
    (14, Act(), {}, lambda p: p.rubies == 1),
    (15, Act(goods=("jewelry",)), {}, lambda p: p.rubies == 1 and p.goods[3] == 1),
    (16, Act(), {}, lambda p: p.rubies == 1 and len(p.cards) == 1 and p.guild == (1,)),
]


@pytest.mark.parametrize("card,command,sheet,check", GUILD_CASES, ids=[f"guild-{c[0]}" for c in GUILD_CASES])
def test_each_guild_card_costs_its_lira_and_does_its_action(card, command, sheet, check):
    state = guild_turn(card, command, **sheet)
    me = sheet_of(state)
    assert me.lira_x >= data.GUILD[card].cost and me.guild_played == 1
    assert check(me), me


def test_guild_card_12_names_its_palace_letter():
    s = spec(2, ["1", "5"])
    s.state = with_sheet(s.state, 0, guild=(12,), lira=4, goods=(0, 4, 0, 1))
    s.given(s.decide(0, PlayGuild(card=12)))
    s.when(0, Act()).then_error("bad_choice")
    s.when(0, Act(letter="A")).then_error("bad_choice")  # A costs fabric: not held


def caravan(card: int, command: Act, seats: int = 2, **sheet) -> tuple[rules.State, list]:
    s = at_act("6", seats=seats, caravan=card, sheets={0: sheet})
    events = answer_all(s, {0: command})
    return s.state, events


def test_caravan_card_1_gives_three_identical_goods():
    state, _ = caravan(1, act("6", goods=("spice",) * 3))
    assert state.players[0].goods == (0, 3, 0, 0)


def test_caravan_card_1_refuses_three_different_goods():
    s = at_act("6", caravan=1)
    s.when(0, act("6", goods=("fabric", "fruit", "spice"))).then_error("bad_choice")


def test_caravan_card_2_gives_three_different_goods():
    state, _ = caravan(2, act("6", goods=("fabric", "fruit", "jewelry")))
    assert state.players[0].goods == (1, 0, 1, 1)


def test_caravan_card_3_gives_two_lira_and_a_goods_card():
    state, events = caravan(3, act("6"))
    assert state.players[0].lira == 2 and GoodsCardDrawn(seat=0, card=FIRST_GOODS_CARD) in events


def test_caravan_card_4_draws_two_guild_cards_one_kept_one_discarded():
    s = at_act("6", caravan=4)
    events = answer_all(s, {0: act("6")})
    assert [e for e in events if isinstance(e, GuildDrawn)] == [
        GuildDrawn(seat=0, card=1, to_keep=True), GuildDrawn(seat=0, card=2, to_keep=True)
    ]
    assert GAME.flow(s.state).phase == "keep" and GAME.flow(s.state).awaiting == (0,)
    assert GAME.legal_commands(s.state, 0) == [KeepGuild(card=1), KeepGuild(card=2)]
    s.when(0, KeepGuild(card=3)).then_error("not_to_keep")
    s.when(0, Draw(source="left")).then_error("wrong_phase")
    [kept, *_] = s.decide(0, KeepGuild(card=2))
    assert kept == GuildKept(seat=0, kept=2, discarded=1)
    assert GAME.redact(kept, 1).kept is None
    s.given(s.decide(0, KeepGuild(card=2)))
    assert s.state.players[0].guild == (2,) and s.state.guild_discard == (1,)


def test_caravan_card_5_gives_four_lira():
    state, _ = caravan(5, act("6"))
    assert state.players[0].lira == 4


def test_caravan_card_6_does_palace_a_or_b_then_gives_a_goods_card():
    state, events = caravan(6, act("6", letter="B"), goods=(4, 0, 1, 0))
    me = state.players[0]
    assert me.rubies == 1 and me.palace_rubies == (0, 1, 0, 0) and len(me.cards) == 1
    s = at_act("6", caravan=6, sheets={0: {"goods": (0, 4, 0, 1)}})
    s.when(0, act("6", letter="C")).then_error("cannot_use")  # only A or B, and they cost fabric


def test_caravan_card_7_does_palace_c_or_d_then_gives_a_good_of_choice():
    state, _ = caravan(7, act("6", letter="D", goods=("fruit",)), goods=(0, 4, 0, 1))
    me = state.players[0]
    assert me.rubies == 1 and me.palace_rubies == (0, 0, 0, 1) and me.goods[2] == 1


def test_caravan_card_8_gives_a_goods_card_or_a_good_an_upgrade_or_a_box_and_a_lira():
    state, events = caravan(8, act("6", upgrades=("10",)))
    me = state.players[0]
    assert len(me.cards) == 1 and me.upgrades[3] == 1 and me.lira == 1
    state, events = caravan(8, act("6", goods=("spice",), fill=("bonus",)))
    me = state.players[0]
    assert me.cards == () and me.goods[1] == 1 and me.bonus == 1 and me.lira == 1


def fountain_turn(reward: str, seats: int = 3, sheets: dict | None = None):
    """Seat 0 plays the left display card; the refill turns up the fountain ``reward``."""
    s = spec(seats, ["1", "5", "10"][:seats], deck=(fountain_card(reward),))
    for seat, fields in (sheets or {}).items():
        s.state = with_sheet(s.state, seat, **fields)
    s.given(s.decide(0, PlayLocation(source="left")))
    events = answer_all(s, {})  # every seat takes a bonus action
    return s, events


def test_the_lira_fountain_gives_every_seat_a_lira_and_the_display_is_refilled():
    s, events = fountain_turn("lira")
    card = fountain_card("lira")
    assert FountainRevealed(card=card, reward="lira") in events
    assert all(p.lira == 1 for p in s.state.players)
    assert card in s.state.location_discard and len(s.state.display) == 2
    revealed = [e for e in events if isinstance(e, LocationRevealed)]
    assert len(revealed) == 1 and data.LOCATION_CARDS[revealed[0].card].fountain is None


def test_the_goods_card_fountain_deals_a_goods_card_to_every_seat_clockwise():
    s, events = fountain_turn("goods_card")
    assert [e.seat for e in events if isinstance(e, GoodsCardDrawn)] == [0, 1, 2]


def test_the_good_fountain_waits_for_every_seats_choice():
    s, events = fountain_turn("good")
    assert GAME.flow(s.state).phase == "fountain" and GAME.flow(s.state).awaiting == (0, 1, 2)
    s.when(1, ChooseFountain(upgrade="1")).then_error("bad_fountain")
    s.when(1, PlayLocation(source="hand")).then_error("wrong_phase")
    for seat, good in ((2, "jewelry"), (0, "fabric"), (1, "spice")):
        s.given(s.decide(seat, ChooseFountain(good=good)))
    assert [p.goods for p in s.state.players] == [(1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 0, 1)]
    assert s.state.fountain is None and len(s.state.display) == 2 and GAME.flow(s.state).phase == "turn"


def test_the_upgrade_fountain_skips_a_seat_with_every_square_crossed():
    s, events = fountain_turn("upgrade", sheets={2: {"upgrades": (2, 2, 2, 2, 2)}})
    assert FountainTaken(seat=2, reward="upgrade") in events
    assert GAME.flow(s.state).awaiting == (0, 1)
    s.when(0, ChooseFountain(good="fabric")).then_error("bad_fountain")
    s.given(s.decide(0, ChooseFountain(upgrade="8")))
    s.given(s.decide(1, ChooseFountain(upgrade="1")))
    assert s.state.players[0].upgrades[2] == 1 and s.state.players[1].upgrades[0] == 1


def test_a_fountain_drawn_from_the_deck_is_resolved_and_another_card_drawn():
    s = at_act("8", deck=(fountain_card("lira"), card_of("9", 1)))
    answer_all(s, {})
    events = s.decide(0, Draw(source="deck"))
    s.given(events)
    assert s.state.players[0].hand == (card_of("9", 1),)
    assert all(p.lira == 1 for p in s.state.players)
