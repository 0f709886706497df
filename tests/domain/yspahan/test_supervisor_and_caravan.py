"""The supervisor's move, the cubes it ships, the owners' camels, the caravan and the Caravanserai."""

from __future__ import annotations

from contracts.yspahan import (
    ActionEnded,
    CaravanScored,
    CardDrawn,
    CubeShipped,
    DiceSelected,
    KeepCube,
    LetCubeGo,
    MoveSupervisor,
    Options,
    SelectDice,
    ShipCube,
    ShipmentChosen,
    SupervisorMoved,
    TurnEnded,
)
from domain.yspahan import GAME, board
from domain.yspahan.rules import flow, legal_commands
from domain.yspahan.state import caravan_capacity
from tests.domain.harness import Spec
from tests.domain.yspahan.support import built, camels, caravan, cubes, gold, new_day, opening, roll, supervisor_at

# 1 camels, 2 bag, 3 barrel, 4 chest, 5 vase, 6 gold
FULL = (1, 1, 2, 2, 3, 4, 5, 6, 6)


def moving(seats=3, *history, floor="barrel", at="C", options=None) -> Spec:
    """Seat 0 moves the supervisor from ``at`` with the group of ``floor`` (barrel: value 3)."""
    spec = Spec(GAME, seats, options).given(
        opening(seats)[:1] + [supervisor_at(at)] + list(history) + [new_day(seats), roll(0, *FULL)]
    )
    spec.given(spec.decide(0, SelectDice(floor=floor, action="supervisor")))
    return spec


def squares(spec: Spec, seat: int = 0) -> set[str]:
    return {c.square for c in legal_commands(spec.state, seat)}


def test_the_supervisor_moves_exactly_the_dice_value_for_free():
    spec = moving(3)  # from C, value 3, 2 gold
    spec.when(0, MoveSupervisor(square="W3")).then_starts_with([SupervisorMoved(seat=0, square="W3", gold=0)])
    assert {"W3", "E3", "N3", "S3"} <= squares(spec)


def test_each_gold_lengthens_or_shortens_the_move_by_one_square():
    spec = moving(3)  # 2 gold: distances 1 to 5
    assert squares(spec) == {f"{a}{i}" for a, n in (("W", 5), ("E", 5), ("N", 4), ("S", 5)) for i in range(1, n + 1)}
    spec.when(0, MoveSupervisor(square="W5")).then_starts_with([SupervisorMoved(seat=0, square="W5", gold=2)])
    spec.when(0, MoveSupervisor(square="W6")).then_error("not_enough_gold")
    spec.when(0, MoveSupervisor(square="Q9")).then_error("no_such_square")


def test_the_supervisor_may_stay_when_its_move_is_reduced_to_zero():
    spec = moving(3, gold(0, 1))  # 3 gold, value 3
    spec.when(0, MoveSupervisor(square="C")).then_starts_with([SupervisorMoved(seat=0, square="C", gold=3)])


def test_the_supervisor_never_enters_a_square_twice_in_one_move():
    # From W2 with a 2: W2-W1-W2 would reverse; ending on W2 again costs 2 gold like staying.
    spec = moving(3, floor="bag", at="W2")
    spec.when(0, MoveSupervisor(square="W2")).then_starts_with([SupervisorMoved(seat=0, square="W2", gold=2)])
    spec2 = Spec(GAME, 3).given(opening(3)[:1] + [supervisor_at("W2"), gold(0, -2), new_day(3), roll(0, *FULL)])
    spec2.given(spec2.decide(0, SelectDice(floor="bag", action="supervisor")))
    assert squares(spec2) == {"W4", "C"}  # no gold: exactly 2 squares, never back over W1


def test_the_supervisor_cannot_go_past_an_arms_end():
    spec = Spec(GAME, 3).given(opening(3)[:1] + [supervisor_at("N3"), gold(0, -2), new_day(3), roll(0, *FULL)])
    spec.given(spec.decide(0, SelectDice(floor="barrel", action="supervisor")))  # value 3, no gold
    assert squares(spec) == {"C"}


def test_the_hammam_adjusts_up_to_three_squares_for_free_and_gold_adds_more():
    spec = moving(3, *built(0, "hammam"), gold(0, -2))  # no gold
    assert squares(spec) == {"C"} | {
        f"{a}{i}" for a in "WENS" for i in range(1, 7) if (a, i) not in (("N", 5), ("N", 6))
    }
    spec = moving(3, *built(0, "hammam"))  # 2 gold: 0..8 squares
    spec.when(0, MoveSupervisor(square="W8")).then_starts_with([SupervisorMoved(seat=0, square="W8", gold=2)])
    spec.when(0, MoveSupervisor(square="W6")).then_starts_with([SupervisorMoved(seat=0, square="W6", gold=0)])


def test_a_cube_facing_the_supervisor_goes_to_the_caravan_and_scores_on_entry():
    spec = moving(3, *cubes(1, "BARREL-3.1"))  # seat 1 has no camel
    spec.when(0, MoveSupervisor(square="S3")).then_starts_with(
        [
            SupervisorMoved(seat=0, square="S3", gold=0),
            CubeShipped(seat=1, shop="BARREL-3.1", camel=False, points=2),
            ActionEnded(seat=0),
        ]
    )


def test_the_owner_may_discard_a_camel_to_keep_the_cube_and_send_one_from_reserve():
    spec = moving(3, *cubes(1, "BARREL-3.1"), camels(1, 1))
    spec.given(spec.decide(0, MoveSupervisor(square="S3")))
    assert flow(spec.state).awaiting == (1,) and flow(spec.state).turn_seat == 0  # another seat, in seat 0's turn
    assert flow(spec.state).phase == "ship_answer"
    assert legal_commands(spec.state, 1) == [KeepCube(), LetCubeGo()]
    assert legal_commands(spec.state, 0) == []
    spec.when(0, KeepCube()).then_error("not_your_turn")
    after = spec.when(1, KeepCube()).then_starts_with([CubeShipped(seat=1, shop="BARREL-3.1", camel=True, points=2)])
    assert after.shops[board.SHOP_INDEX["BARREL-3.1"]] == 1 and after.players[1].camels == 0
    assert after.players[1].reserve == 24 - 2 and after.caravan == (1,)
    assert flow(after).turn_seat == 1  # seat 0 had nothing left to do: its turn ended


def test_keeping_a_cube_needs_a_reserve_cube():
    spec = moving(3, *cubes(1, "BARREL-3.1"), camels(1, 1), options=Options(cubes_per_player=1))
    after = spec.when(0, MoveSupervisor(square="S3")).then_starts_with(
        [SupervisorMoved(seat=0, square="S3", gold=0), CubeShipped(seat=1, shop="BARREL-3.1", camel=False, points=2)]
    )
    assert after.players[1].camels == 1


def test_the_mover_chooses_the_order_of_two_shipped_cubes():
    spec = moving(3, *cubes(1, "BAG-3.1"), *cubes(2, "BARREL-2.1"), floor="camels")  # value 1 -> S1
    spec.given(spec.decide(0, MoveSupervisor(square="S1")))
    assert flow(spec.state).phase == "ship_order" and flow(spec.state).awaiting == (0,)
    assert legal_commands(spec.state, 0) == [ShipCube(shop="BAG-3.1"), ShipCube(shop="BARREL-2.1")]
    spec.when(0, ShipCube(shop="BAG-3.2")).then_error("shop_not_pending")
    spec.when(0, ShipCube(shop="BARREL-2.1")).then(
        [
            ShipmentChosen(seat=0, shop="BARREL-2.1"),
            CubeShipped(seat=2, shop="BARREL-2.1", camel=False, points=2),
            CubeShipped(seat=1, shop="BAG-3.1", camel=False, points=2),
            ActionEnded(seat=0),
            TurnEnded(seat=0),
        ]
    )


def test_the_movers_own_cubes_are_shipped_too():
    spec = moving(3, *cubes(0, "BARREL-3.1"))
    spec.when(0, MoveSupervisor(square="S3")).then_starts_with(
        [SupervisorMoved(seat=0, square="S3", gold=0), CubeShipped(seat=0, shop="BARREL-3.1", camel=False, points=2)]
    )


def test_caravan_entry_points_are_two_one_zero_by_row():
    spec = moving(3, *caravan(1, 1, 1, 2, 2, 2, 1), *cubes(2, "BARREL-3.1"))  # 3 players: rows of 3
    spec.when(0, MoveSupervisor(square="S3")).then_starts_with(
        [SupervisorMoved(seat=0, square="S3", gold=0), CubeShipped(seat=2, shop="BARREL-3.1", camel=False, points=0)]
    )
    spec = moving(3, *caravan(1, 1, 1), *cubes(2, "BARREL-3.1"))
    spec.when(0, MoveSupervisor(square="S3")).then_starts_with(
        [SupervisorMoved(seat=0, square="S3", gold=0), CubeShipped(seat=2, shop="BARREL-3.1", camel=False, points=1)]
    )


def test_the_caravan_has_twelve_camels_with_four_players_and_nine_with_three():
    assert caravan_capacity(4, Options()) == 12
    assert caravan_capacity(3, Options()) == 9
    assert caravan_capacity(2, Options()) == 12
    assert caravan_capacity(2, Options(caravan_width_2p=3)) == 9


def test_a_full_caravan_is_scored_and_emptied_at_once():
    spec = moving(3, *caravan(1, 2, 1, 2, 1, 2, 1, 2), *cubes(2, "BARREL-3.1"))
    after = spec.when(0, MoveSupervisor(square="S3")).then_starts_with(
        [
            SupervisorMoved(seat=0, square="S3", gold=0),
            CubeShipped(seat=2, shop="BARREL-3.1", camel=False, points=0),
            CaravanScored(points=(0, 4 * 3, 5 * 3), emptied=True),
        ]
    )
    assert after.caravan == ()
    assert after.players[1].reserve == 24 and after.players[2].reserve == 24


def test_the_caravanserai_draws_a_card_for_each_of_its_owners_cubes_sent_to_the_caravan():
    spec = Spec(GAME, 3).given(
        opening(3, top=("take_gold", "exchange"))[:1]
        + built(1, "caravanserai")
        + cubes(1, "BAG-3.1", "BARREL-2.1")
        + [camels(1, 1), new_day(3), roll(0, *FULL)]
    )
    spec.given(spec.decide(0, SelectDice(floor="camels", action="supervisor")))
    spec.given(spec.decide(0, MoveSupervisor(square="S1")))
    spec.given(spec.decide(0, ShipCube(shop="BAG-3.1")))
    events = spec.decide(1, KeepCube())  # kept with a camel: its reserve cube goes, still a card
    assert events == [
        CubeShipped(seat=1, shop="BAG-3.1", camel=True, points=2),
        CardDrawn(seat=1, card="take_gold"),
        CubeShipped(seat=1, shop="BARREL-2.1", camel=False, points=2),
        CardDrawn(seat=1, card="exchange"),
        ActionEnded(seat=0),
        TurnEnded(seat=0),
    ]


def test_selecting_the_supervisor_action_records_the_groups_value():
    spec = Spec(GAME, 3).given(opening(3) + [roll(0, *FULL)])
    spec.when(0, SelectDice(floor="vase", action="supervisor")).then(
        [DiceSelected(seat=0, floor="vase", action="supervisor", dice=1, value=5)]
    )
