"""Buildings (after the action, one per turn, costs and points) and the nine cards."""

from __future__ import annotations

import pytest

from contracts.yspahan import (
    Build,
    BuildingBuilt,
    CamelsTaken,
    CaravanScored,
    CardDrawn,
    CardPlayed,
    CubePlaced,
    CubeShipped,
    DeckShuffled,
    DiceSelected,
    EndTurn,
    GoldTaken,
    GoodsExchanged,
    GoodsSold,
    Options,
    PlaceCube,
    PlayCard,
    SelectDice,
    TurnEnded,
)
from domain.chance import Chance
from domain.yspahan import GAME
from domain.yspahan.rules import legal_commands
from tests.domain.harness import Spec
from tests.domain.yspahan.support import built, camels, caravan, cubes, draws, gold, new_day, opening, roll

FULL = (1, 1, 2, 2, 3, 4, 5, 6, 6)


def turn(seats=3, *history, top=(), hand=()) -> Spec:
    """Seat 0 at the start of its turn (dice rolled) with ``hand`` and ``history``."""
    return Spec(GAME, seats).given(
        opening(seats, top=tuple(top) + tuple(hand))[:1]
        + draws(0, *hand)
        + list(history)
        + [new_day(seats), roll(0, *FULL)]
    )


def after_action(seats=3, *history, hand=()) -> Spec:
    """Seat 0 after drawing a card with the vase group (so its turn does not end by itself)."""
    spec = turn(seats, *history, hand=hand, top=("take_camels",) if "take_camels" not in hand else ("take_gold",))
    spec.given(spec.decide(0, SelectDice(floor="vase", action="card")))
    assert spec.state.step == "after"
    return spec


# --- buildings ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("building", "cost"),
    [
        ("pen", (2, 0)),
        ("stall", (2, 2)),
        ("hammam", (2, 2)),
        ("caravanserai", (3, 3)),
        ("bazaar", (4, 4)),
        ("crane", (4, 4)),
    ],
)
def test_each_building_costs_what_the_rulebook_says(building, cost):
    spec = after_action(3, camels(0, 4), gold(0, 2))
    spec.when(0, Build(building=building)).then_starts_with(
        [BuildingBuilt(seat=0, building=building, camels=cost[0], gold=cost[1], points=0)]
    )


def test_buildings_score_0_0_5_5_5_10_in_the_order_built():
    spec = after_action(3, camels(0, 20), gold(0, 20))
    points = []
    for i, building in enumerate(("crane", "pen", "bazaar", "stall", "hammam", "caravanserai")):
        if i:
            spec.given([TurnEnded(seat=spec.state.current)] * (3 - spec.state.turn) + [new_day(3)])
            spec.given([roll(0, *FULL)])
            spec.given(spec.decide(0, SelectDice(floor="vase", action="card")))
        events = spec.decide(0, Build(building=building))
        spec.given(events)
        points.append(events[0].points)
    assert points == [0, 0, 5, 5, 5, 10]
    assert spec.state.players[0].score == 25 and spec.state.players[0].reserve == 18


def test_a_building_marker_is_a_reserve_cube_and_costs_are_paid_to_the_supply():
    spec = after_action(3, camels(0, 4), gold(0, 2))
    after = spec.when(0, Build(building="bazaar")).then_starts_with([])
    assert (after.players[0].camels, after.players[0].gold, after.players[0].reserve) == (0, 0, 23)
    assert (after.camel_supply, after.gold_supply) == (25, 25 - 6 - 2 + 4)


def test_one_building_per_turn():
    spec = after_action(3, camels(0, 10), gold(0, 10))
    spec.given(spec.decide(0, Build(building="pen")))
    spec.when(0, Build(building="stall")).then_error("built_this_turn")
    assert not any(isinstance(c, Build) for c in legal_commands(spec.state, 0))


def test_each_building_once_per_player():
    spec = after_action(3, *built(0, "pen"), camels(0, 10))
    spec.when(0, Build(building="pen")).then_error("already_built")
    spec.when(0, Build(building="tower")).then_error("no_such_building")


def test_a_building_must_be_paid():
    spec = after_action(3, camels(0, 1))
    spec.when(0, Build(building="pen")).then_error("not_enough_camels")
    spec = after_action(3, camels(0, 4))
    spec.when(0, Build(building="bazaar")).then_error("not_enough_gold")


def test_building_comes_after_the_dice_action():
    spec = turn(3, camels(0, 4))
    spec.when(0, Build(building="pen")).then_error("build_after_action")


def test_building_is_optional_and_the_turn_ends_with_end_turn():
    spec = after_action(3, camels(0, 4))
    assert EndTurn() in legal_commands(spec.state, 0)
    spec.when(0, EndTurn()).then([TurnEnded(seat=0)])


# --- cards ----------------------------------------------------------------------------------------------


def test_take_camels_card_takes_three_camels():
    spec = turn(3, hand=("take_camels",))
    spec.when(0, PlayCard(card="take_camels")).then(
        [CardPlayed(seat=0, card="take_camels"), CamelsTaken(seat=0, count=3)]
    )


def test_take_gold_card_takes_three_gold():
    spec = turn(3, hand=("take_gold",))
    spec.when(0, PlayCard(card="take_gold")).then([CardPlayed(seat=0, card="take_gold"), GoldTaken(seat=0, count=3)])


def test_cards_are_played_any_number_of_times_during_ones_turn_only():
    spec = turn(3, hand=("take_gold", "take_gold", "take_camels"))
    spec.given(spec.decide(0, PlayCard(card="take_gold")))
    spec.given(spec.decide(0, PlayCard(card="take_gold")))
    spec.given(spec.decide(0, SelectDice(floor="chest", action="card")))
    spec.given(spec.decide(0, PlayCard(card="take_camels")))
    assert spec.state.players[0].gold == 8 and spec.state.players[0].camels == 3
    spec.when(1, PlayCard(card="take_gold")).then_error("not_your_turn")


def test_the_place_cube_card_follows_the_souk_rules():
    spec = turn(3, *cubes(1, "VASE-3.1"), *cubes(0, "BAG-3.1"), hand=("place_cube",))
    spec.when(0, PlayCard(card="place_cube", shop="VASE-3.2")).then_error("souk_taken")
    spec.when(0, PlayCard(card="place_cube", shop="BAG-4.1")).then_error("finish_your_souk")
    spec.when(0, PlayCard(card="place_cube", shop="BAG-3.1")).then_error("shop_taken")
    spec.when(0, PlayCard(card="place_cube")).then_error("bad_card_arguments")
    spec.when(0, PlayCard(card="place_cube", shop="VASE-2.1")).then(
        [CardPlayed(seat=0, card="place_cube"), CubePlaced(seat=0, shop="VASE-2.1", by_card=True)]
    )
    shops = {c.shop for c in legal_commands(spec.state, 0) if isinstance(c, PlayCard)}
    assert "BAG-3.2" in shops and "BAG-4.1" not in shops and "VASE-3.2" not in shops and "CHEST-4.1" in shops


def test_the_sell_camels_card_scores_two_points_per_camel_up_to_four():
    spec = turn(3, camels(0, 6), hand=("sell_camels",))
    spec.when(0, PlayCard(card="sell_camels", count=5)).then_error("bad_count")
    spec.when(0, PlayCard(card="sell_camels", count=0)).then_error("bad_count")
    spec.when(0, PlayCard(card="sell_camels", count=4)).then(
        [CardPlayed(seat=0, card="sell_camels"), GoodsSold(seat=0, camels=4, gold=0, points=8)]
    )
    spec = turn(3, camels(0, 2), hand=("sell_camels",))
    spec.when(0, PlayCard(card="sell_camels", count=3)).then_error("not_enough_camels")


def test_the_sell_gold_card_scores_one_point_per_gold_up_to_ten():
    spec = turn(3, gold(0, 10), hand=("sell_gold",))
    spec.when(0, PlayCard(card="sell_gold", count=11)).then_error("bad_count")
    spec.when(0, PlayCard(card="sell_gold", count=10)).then(
        [CardPlayed(seat=0, card="sell_gold"), GoodsSold(seat=0, camels=0, gold=10, points=10)]
    )
    spec = turn(3, hand=("sell_gold",))
    spec.when(0, PlayCard(card="sell_gold", count=3)).then_error("not_enough_gold")


def test_the_exchange_card_trades_gold_and_camels_one_for_one():
    spec = turn(3, camels(0, 1), hand=("exchange",))
    spec.when(0, PlayCard(card="exchange", count=2, give="gold")).then(
        [CardPlayed(seat=0, card="exchange"), GoodsExchanged(seat=0, give="gold", count=2)]
    )
    after = spec.when(0, PlayCard(card="exchange", count=1, give="camels")).then_starts_with([])
    assert (after.players[0].gold, after.players[0].camels) == (3, 0)
    spec.when(0, PlayCard(card="exchange", count=2, give="camels")).then_error("not_enough_camels")
    spec.when(0, PlayCard(card="exchange", count=1)).then_error("bad_card_arguments")
    spec.when(0, PlayCard(card="exchange", count=0, give="gold")).then_error("bad_count")


def test_the_caravan_card_sends_a_reserve_cube_and_scores_without_a_caravanserai_draw():
    spec = turn(3, *built(0, "caravanserai"), hand=("caravan_cube",))
    spec.when(0, PlayCard(card="caravan_cube")).then(
        [CardPlayed(seat=0, card="caravan_cube"), CubeShipped(seat=0, shop=None, camel=False, points=2)]
    )


def test_the_caravan_card_can_fill_the_caravan():
    spec = turn(3, *caravan(1, 1, 1, 1, 1, 1, 1, 1), hand=("caravan_cube",))
    spec.when(0, PlayCard(card="caravan_cube")).then_starts_with(
        [
            CardPlayed(seat=0, card="caravan_cube"),
            CubeShipped(seat=0, shop=None, camel=False, points=0),
            CaravanScored(points=(3, 24, 0), emptied=True),
        ]
    )


def test_the_building_cards_waive_the_camels_or_the_gold():
    spec = turn(3, gold(0, 2), hand=("build_gold_only",))
    spec.when(0, Build(building="bazaar", card="build_gold_only")).then(
        [
            CardPlayed(seat=0, card="build_gold_only"),
            BuildingBuilt(seat=0, building="bazaar", camels=0, gold=4, points=0),
        ]
    )
    spec = turn(3, camels(0, 3), hand=("build_camels_only",))
    spec.when(0, Build(building="caravanserai", card="build_camels_only")).then(
        [
            CardPlayed(seat=0, card="build_camels_only"),
            BuildingBuilt(seat=0, building="caravanserai", camels=3, gold=0, points=0),
        ]
    )


def test_a_building_card_does_not_allow_a_second_building_in_a_turn():
    spec = turn(3, camels(0, 9), gold(0, 9), hand=("build_camels_only",))
    spec.given(spec.decide(0, Build(building="caravanserai", card="build_camels_only")))
    spec.given(spec.decide(0, SelectDice(floor="vase", action="card")))
    spec.when(0, Build(building="pen")).then_error("built_this_turn")


def test_building_cards_are_played_through_build():
    spec = turn(3, hand=("build_gold_only",))
    spec.when(0, PlayCard(card="build_gold_only")).then_error("use_build_command")
    spec.when(0, Build(building="pen", card="take_gold")).then_error("not_a_build_card")
    spec.when(0, Build(building="pen", card="build_camels_only")).then_error("card_not_in_hand")


def test_a_card_not_in_hand_cannot_be_played():
    turn(3).when(0, PlayCard(card="take_gold")).then_error("card_not_in_hand")
    turn(3).when(0, PlayCard(card="joker")).then_error("no_such_card")
    turn(3, hand=("take_gold",)).when(0, PlayCard(card="take_gold", count=2)).then_error("bad_card_arguments")


def test_an_empty_deck_is_made_again_from_the_shuffled_discards():
    spec = Spec(GAME, 3).given(opening(3, top=("take_gold", "take_camels"))[:1] + draws(0, "take_gold", "take_camels"))
    rest = spec.state.deck
    spec.given(draws(1, *rest[:8]) + draws(2, *rest[8:]) + [new_day(3), roll(0, *FULL)])
    assert spec.state.deck == ()
    spec.given(spec.decide(0, PlayCard(card="take_gold")))
    spec.given(spec.decide(0, SelectDice(floor="camels", action="floor", discard="take_camels")))
    spec.given(spec.decide(0, EndTurn()))
    assert spec.state.discard == ("take_gold", "take_camels")
    order = Chance(spec.seed, 1).shuffled(("take_gold", "take_camels"))
    after = spec.when(1, SelectDice(floor="vase", action="card")).then_starts_with(
        [
            DiceSelected(seat=1, floor="vase", action="card", dice=1, value=5),
            DeckShuffled(order=order, size=2),
            CardDrawn(seat=1, card=order[0]),
        ]
    )
    assert after.deck == order[1:] and after.discard == ()


def test_with_every_card_in_hands_the_card_action_draws_nothing():
    full = list(opening(3)[0].order)
    spec = Spec(GAME, 3).given(
        opening(3)[:1] + draws(1, *full[:9]) + draws(2, *full[9:]) + [new_day(3), roll(0, *FULL)]
    )
    events = spec.decide(0, SelectDice(floor="vase", action="card"))
    assert [type(e).__name__ for e in events] == ["DiceSelected", "ActionEnded", "TurnEnded"]


def test_the_supply_is_finite_taking_gives_what_is_left_and_an_exchange_cannot_exceed_it():
    spec = Spec(GAME, 3, Options(camels_in_box=1)).given(
        opening(3, top=("take_camels", "exchange"))[:1] + draws(0, "take_camels", "exchange") + [new_day(3)]
    )
    spec.given([roll(0, *FULL)])
    spec.when(0, PlayCard(card="exchange", count=2, give="gold")).then_error("not_enough_supply")
    spec.when(0, PlayCard(card="take_camels")).then(
        [CardPlayed(seat=0, card="take_camels"), CamelsTaken(seat=0, count=1)]
    )


def test_cubes_go_to_the_selected_quarter_only():
    spec = turn(3)
    spec.given(spec.decide(0, SelectDice(floor="chest", action="floor")))
    spec.when(0, PlaceCube(shop="BAG-3.1")).then_error("wrong_quarter")
    spec.when(0, PlaceCube(shop="CHEST-9.9")).then_error("no_such_shop")
    spec.when(0, PlayCard(card="take_gold")).then_error("not_now")  # no card inside an action


def test_a_command_of_another_game_is_refused():
    from contracts.table import JoinSeat

    turn(3).when(0, JoinSeat(name="x", token_hash="y")).then_error("unknown_command")
