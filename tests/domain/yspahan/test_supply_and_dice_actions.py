"""Supply (yellow dice, the roll, the tower) and the actions of a dice group."""

from __future__ import annotations

from contracts.yspahan import (
    ActionEnded,
    CamelsTaken,
    CardDrawn,
    CubePlaced,
    DiceRolled,
    DiceSelected,
    EndTurn,
    GoldTaken,
    PlaceCube,
    PlacementBegan,
    PlayCard,
    RollDice,
    SelectDice,
)
from domain.chance import Chance
from domain.yspahan import GAME
from domain.yspahan.rules import flow, legal_commands
from tests.domain.harness import Spec
from tests.domain.yspahan.support import built, cubes, draws, gold, new_day, opening, roll

# A roll with every floor used: 1 camels, 2 bag, 3 barrel, 4 chest, 5 vase, 6 gold.
FULL = (1, 1, 2, 2, 3, 4, 5, 6, 6)


def at_supply(seats: int = 3, *history) -> Spec:
    return Spec(GAME, seats).given(opening(seats) + list(history))


def at_action(seats: int = 3, *history, dice=FULL, yellow=()) -> Spec:
    return Spec(GAME, seats).given(opening(seats) + list(history) + [roll(0, *dice, yellow=yellow)])


# --- supply -----------------------------------------------------------------------------------------------


def test_the_first_player_buys_yellow_dice_for_one_gold_each_and_rolls_them_with_nine_white_dice():
    spec = at_supply(3)
    chance = Chance(spec.seed, 1)
    white, yellow = chance.roll(9), chance.roll(2)
    after = spec.when(0, RollDice(yellow=2)).then([DiceRolled(seat=0, white=white, yellow=yellow)])
    assert after.players[0].gold == 0 and after.gold_supply == 25 - 6 + 2
    assert sum(w + y for _, w, y in after.tower) == 11


def test_only_the_first_player_rolls():
    assert legal_commands(at_supply(3).state, 1) == []
    at_supply(3).when(1, RollDice()).then_error("not_your_turn")


def test_at_most_three_yellow_dice_are_bought():
    spec = at_supply(3, gold(0, 5))
    assert legal_commands(spec.state, 0) == [RollDice(yellow=n) for n in range(4)]
    spec.when(0, RollDice(yellow=4)).then_error("bad_yellow_count")
    spec.when(0, RollDice(yellow=-1)).then_error("bad_yellow_count")


def test_yellow_dice_cost_gold_the_roller_has():
    spec = at_supply(3)  # 2 gold
    assert legal_commands(spec.state, 0) == [RollDice(yellow=n) for n in range(3)]
    spec.when(0, RollDice(yellow=3)).then_error("not_enough_gold")


def test_no_card_is_played_and_no_dice_selected_before_the_roll():
    spec = Spec(GAME, 3).given(opening(3, top=("take_gold",)) + draws(0, "take_gold"))
    spec.when(0, SelectDice(floor="camels", action="floor")).then_error("not_now")
    spec.when(0, PlayCard(card="take_gold")).then_error("not_now")


def test_all_dice_equal_go_to_the_camels():
    spec = at_action(3, dice=(4,) * 9, yellow=(4,))
    assert spec.state.tower[0] == (4, 9, 1)
    assert all(f == (0, 0, 0) for f in spec.state.tower[1:])


def test_the_yellow_dice_leave_the_tower_after_the_first_players_action():
    spec = at_action(3, dice=(1, 1, 3, 3, 4, 4, 6, 6, 6), yellow=(2, 3))
    assert spec.state.tower[1] == (2, 0, 1) and spec.state.tower[2] == (3, 2, 1)
    spec.given(spec.decide(0, SelectDice(floor="gold", action="floor")))
    assert spec.state.tower[1] == (0, 0, 0)  # the Sac had only a yellow die
    assert spec.state.tower[2] == (3, 2, 0)


# --- dice actions -----------------------------------------------------------------------------------------


def test_the_camel_floor_gives_one_camel_per_die():
    at_action(3).when(0, SelectDice(floor="camels", action="floor")).then(
        [
            DiceSelected(seat=0, floor="camels", action="floor", dice=2, value=1),
            CamelsTaken(seat=0, count=2),
            ActionEnded(seat=0),
        ]
    )


def test_the_enclos_and_a_discarded_card_each_add_a_camel():
    spec = Spec(GAME, 3).given(opening(3, top=("sell_gold",)) + built(0, "pen") + draws(0, "sell_gold"))
    spec.given([new_day(3), roll(0, *FULL)])
    events = spec.when(0, SelectDice(floor="camels", action="floor", discard="sell_gold")).then_starts_with(
        [DiceSelected(seat=0, floor="camels", action="floor", discard="sell_gold", dice=3, value=1)]
    )
    assert events.players[0].camels == 4 and events.discard == ("sell_gold",)


def test_the_gold_floor_gives_one_gold_per_die_and_two_more_with_the_echoppe():
    spec = Spec(GAME, 3).given(opening(3) + built(0, "stall") + [new_day(3), roll(0, *FULL)])
    spec.when(0, SelectDice(floor="gold", action="floor")).then_starts_with(
        [DiceSelected(seat=0, floor="gold", action="floor", dice=2, value=6), GoldTaken(seat=0, count=4)]
    )


def test_a_quarter_floor_places_one_cube_per_die_plus_one_with_the_palan():
    spec = Spec(GAME, 3).given(opening(3) + built(0, "crane") + [new_day(3), roll(0, *FULL)])
    spec.when(0, SelectDice(floor="bag", action="floor")).then(
        [
            DiceSelected(seat=0, floor="bag", action="floor", dice=2, value=2),
            PlacementBegan(seat=0, quarter="bag", cubes=3),
        ]
    )


def test_the_card_action_draws_the_top_card():
    spec = Spec(GAME, 3).given(opening(3, top=("exchange",)) + [roll(0, *FULL)])
    spec.when(0, SelectDice(floor="vase", action="card")).then_starts_with(
        [DiceSelected(seat=0, floor="vase", action="card", dice=1, value=5), CardDrawn(seat=0, card="exchange")]
    )


def test_a_group_taken_is_gone_for_the_next_players():
    spec = at_action(3)
    spec.given(spec.decide(0, SelectDice(floor="gold", action="floor")))
    if flow(spec.state).turn_seat == 0:
        spec.given(spec.decide(0, EndTurn()))
    assert flow(spec.state).turn_seat == 1
    spec.when(1, SelectDice(floor="gold", action="floor")).then_error("empty_floor")
    assert SelectDice(floor="gold", action="card") not in legal_commands(spec.state, 1)


def test_with_no_group_left_the_player_draws_a_card():
    spec = at_action(3, dice=(3,) * 9)
    spec.when(0, SelectDice(floor=None, action="card")).then_error("dice_remain")
    spec.given(spec.decide(0, SelectDice(floor="camels", action="supervisor")))
    spec.given(spec.decide(0, legal_commands(spec.state, 0)[0]))  # move somewhere
    while flow(spec.state).turn_seat == 0:
        spec.given(spec.decide(0, EndTurn()))
    assert legal_commands(spec.state, 1)[:1] == [SelectDice(floor=None, action="card")]
    spec.when(1, SelectDice(floor=None, action="supervisor")).then_error("bad_action")
    spec.when(1, SelectDice(floor=None, action="card")).then_starts_with(
        [DiceSelected(seat=1, floor=None, action="card"), CardDrawn(seat=1, card=spec.state.deck[0])]
    )


def test_a_card_is_discarded_for_a_die_only_with_the_floors_own_action():
    spec = Spec(GAME, 3).given(opening(3, top=("take_gold",)) + draws(0, "take_gold") + [roll(0, *FULL)])
    spec.when(0, SelectDice(floor="camels", action="supervisor", discard="take_gold")).then_error("discard_not_allowed")
    spec.when(0, SelectDice(floor="camels", action="floor", discard="sell_gold")).then_error("card_not_in_hand")


def test_an_empty_floor_cannot_be_selected_even_with_a_card():
    spec = Spec(GAME, 3).given(opening(3, top=("take_gold",)) + draws(0, "take_gold"))
    spec.given([roll(0, 1, 1, 1, 2, 2, 2, 6, 6, 6)])
    spec.when(0, SelectDice(floor="chest", action="floor", discard="take_gold")).then_error("empty_floor")
    spec.when(0, SelectDice(floor="roof", action="floor")).then_error("no_such_floor")
    spec.when(0, SelectDice(floor="bag", action="dance")).then_error("bad_action")
    spec.when(0, SelectDice(floor="bag", action="build")).then_error("bad_action")  # 2 players only


def test_filling_shops_is_refused_when_no_shop_of_the_quarter_is_open_to_the_player():
    # The Vase's three souks are started by seat 1: nothing is open to seat 0.
    spec = at_action(3, *cubes(1, "VASE-1.1", "VASE-2.1", "VASE-3.1"))
    spec.when(0, SelectDice(floor="vase", action="floor")).then_error("quarter_full")
    assert SelectDice(floor="vase", action="floor") not in legal_commands(spec.state, 0)
    assert SelectDice(floor="vase", action="supervisor") in legal_commands(spec.state, 0)


def test_cubes_beyond_the_open_shops_stay_in_reserve():
    # Seat 1 holds VASE-2 and VASE-3; only VASE-1 (one shop) is open to seat 0, who has 2 dice + a card.
    spec = Spec(GAME, 3).given(
        opening(3, top=("take_gold",)) + draws(0, "take_gold") + cubes(1, "VASE-2.1", "VASE-3.1")
    )
    spec.given([roll(0, 1, 2, 3, 4, 5, 5, 6, 6, 6)])
    spec.given(spec.decide(0, SelectDice(floor="vase", action="floor", discard="take_gold")))
    assert spec.state.cubes_left == 3
    after = spec.when(0, PlaceCube(shop="VASE-1.1")).then_starts_with(
        [CubePlaced(seat=0, shop="VASE-1.1"), ActionEnded(seat=0)]
    )
    assert after.players[0].reserve == 23


def test_a_seat_without_reserve_cubes_cannot_fill_shops():
    from contracts.yspahan import Options

    spec = Spec(GAME, 3, Options(cubes_per_player=2)).given(opening(3) + cubes(0, "BAG-3.1", "BAG-3.2"))
    spec.given([roll(0, *FULL)])
    spec.when(0, SelectDice(floor="barrel", action="floor")).then_error("no_cube_in_reserve")
