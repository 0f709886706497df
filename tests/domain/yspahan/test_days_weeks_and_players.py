"""Days, weeks, the first player, the end of the game, the 4-player last day and the 2-player game."""

from __future__ import annotations

from contracts.yspahan import (
    ActionEnded,
    Build,
    BuildingBuilt,
    CaravanScored,
    DayBegan,
    DiceSelected,
    EndTurn,
    PlayCard,
    SelectDice,
    SoukCompleted,
    SouksScored,
    TurnEnded,
    WeekEnded,
)
from domain.yspahan import GAME
from domain.yspahan.rules import flow, last_day_order, legal_commands, result
from tests.domain.harness import Spec
from tests.domain.yspahan.support import camels, caravan, cubes, draws, gold, new_day, opening, roll, score

FULL = (1, 1, 2, 2, 3, 4, 5, 6, 6)


def last_turn(seats: int, *history, week: int = 1, day: int = 1, first: int = 0) -> Spec:
    """The last seat of the day, its action done."""
    spec = Spec(GAME, seats).given(
        opening(seats)[:1] + list(history) + [new_day(seats, first=first, week=week, day=day)]
    )
    spec.given([roll(first, *FULL[: 8 if seats == 2 else 9])])
    order = spec.state.order
    spec.given([TurnEnded(seat=s) for s in order[:-1]] + [ActionEnded(seat=order[-1])])
    return spec


def test_each_seat_plays_in_turn_from_the_first_player():
    spec = Spec(GAME, 4).given(opening(4, first=2))
    assert spec.state.order == (2, 3, 0, 1)
    assert flow(spec.state).awaiting == (2,) and flow(spec.state).phase == "supply"


def test_at_the_end_of_a_day_the_next_seat_becomes_first_player():
    spec = last_turn(3, first=2, day=3)
    spec.when(1, EndTurn()).then([TurnEnded(seat=1), DayBegan(week=1, day=4, order=(0, 1, 2))])


def test_the_seventh_day_ends_the_week():
    spec = last_turn(3, *cubes(0, "VASE-1.1"), *caravan(1), first=0, day=7)
    after = spec.when(2, EndTurn()).then(
        [
            TurnEnded(seat=2),
            SouksScored(
                completed=(SoukCompleted(souk="VASE-1", seat=0, points=4),),
                points=(4, 0, 0),
            ),
            CaravanScored(points=(0, 1, 0), emptied=False),
            WeekEnded(week=1),
            DayBegan(week=2, day=1, order=(1, 2, 0)),
        ]
    )
    assert after.supervisor == 0 and after.shops == (-1,) * 47 and after.caravan == (1,)
    assert [p.score for p in after.players] == [4, 1, 0]


def test_unfinished_souks_score_nothing_and_go_back_to_reserve():
    spec = last_turn(3, *cubes(0, "VASE-3.1", "VASE-3.2"), day=7)
    events = spec.decide(2, EndTurn())
    assert events[1] == SouksScored(completed=(), points=(0, 0, 0))
    assert spec.given(events).state.players[0].reserve == 24


def test_the_game_ends_after_the_third_week_with_shared_victory_on_a_tie():
    spec = last_turn(3, score(0, 10), score(2, 10), score(1, 3), week=3, day=7, first=2)
    events = spec.decide(1, EndTurn())
    assert [type(e).__name__ for e in events] == ["TurnEnded", "SouksScored", "CaravanScored", "WeekEnded"]
    state = spec.given(events).state
    assert flow(state).phase == "over" and flow(state).awaiting == ()
    final = result(state)
    assert final.scores == (10, 3, 10) and final.winners == (0, 2)
    assert legal_commands(state, 0) == []
    spec.when(0, EndTurn()).then_error("game_over")


def test_no_result_before_the_end():
    assert result(last_turn(3, week=3, day=6).state) is None


def test_with_four_players_the_last_day_is_played_in_ascending_score_order():
    spec = last_turn(4, score(0, 30), score(1, 10), score(2, 20), score(3, 5), week=3, day=6, first=1)
    events = spec.decide(0, EndTurn())
    assert events[-1] == DayBegan(week=3, day=7, order=(3, 1, 2, 0))
    state = spec.given(events).state
    assert flow(state).awaiting == (3,)  # the lowest score rolls the dice


def test_on_the_last_day_tied_seats_farthest_clockwise_from_day_sixs_first_player_play_first():
    # Day 6's first player is seat 1; all tied: seat 0 is farthest clockwise (3 seats after), then 3, 2, 1.
    spec = last_turn(4, week=3, day=6, first=1)
    assert last_day_order(spec.state) == (0, 3, 2, 1)
    spec = last_turn(4, score(2, 4), score(3, 4), week=3, day=6, first=1)
    assert last_day_order(spec.state) == (0, 1, 3, 2)


def test_with_three_players_the_last_day_keeps_the_turn_order():
    spec = last_turn(3, score(0, 30), week=3, day=6, first=1)
    assert spec.decide(0, EndTurn())[-1] == DayBegan(week=3, day=7, order=(2, 0, 1))


# --- two players ----------------------------------------------------------------------------------------


def end_turn_if_open(spec: Spec, seat: int) -> None:
    if spec.state.step == "after" and spec.state.current == seat:
        spec.given(spec.decide(seat, EndTurn()))


def two(*history, yellow=()) -> Spec:
    return Spec(GAME, 2).given(
        opening(2)[:1] + list(history) + [new_day(2), roll(0, 1, 2, 3, 4, 5, 6, 6, 6, yellow=yellow)]
    )


def test_two_players_roll_eight_white_dice():
    spec = Spec(GAME, 2).given(opening(2))
    events = spec.decide(0, legal_commands(spec.state, 0)[0])
    assert len(events[0].white) == 8


def test_two_players_act_roller_other_roller_then_the_other_rolls():
    spec = Spec(GAME, 2).given(opening(2))
    assert spec.state.order == (0, 1, 0)
    spec = last_turn(2, day=2, first=0)
    spec.when(0, EndTurn()).then([TurnEnded(seat=0), DayBegan(week=1, day=3, order=(1, 0, 1))])


def test_with_two_players_yellow_dice_stay_in_the_tower_for_the_roller_only():
    spec = two(yellow=(2, 3))  # bag: white 2 + yellow 2; barrel: 3 + yellow 3
    spec.given(spec.decide(0, SelectDice(floor="vase", action="card")))
    end_turn_if_open(spec, 0)
    assert spec.state.tower[1] == (2, 1, 1)  # still there
    spec.when(1, SelectDice(floor="bag", action="floor")).then_starts_with(
        [DiceSelected(seat=1, floor="bag", action="floor", dice=1, value=2)]
    )


def test_with_two_players_a_floor_of_yellow_dice_only_is_empty_for_the_other_player():
    spec = Spec(GAME, 2).given(opening(2) + [roll(0, 1, 1, 3, 3, 5, 5, 6, 6, yellow=(2,))])
    spec.given(spec.decide(0, SelectDice(floor="camels", action="card")))
    end_turn_if_open(spec, 0)
    spec.when(1, SelectDice(floor="bag", action="floor")).then_error("empty_floor")
    assert not any(isinstance(c, SelectDice) and c.floor == "bag" for c in legal_commands(spec.state, 1))
    spec.given(spec.decide(1, SelectDice(floor="gold", action="floor")))
    end_turn_if_open(spec, 1)
    assert SelectDice(floor="bag", action="floor") in legal_commands(spec.state, 0)  # the roller's second action


def test_with_two_players_building_replaces_an_action():
    spec = two(camels(0, 2), gold(0, -2))
    spec.when(0, Build(building="pen")).then_error("build_instead_of_action")
    assert SelectDice(floor="gold", action="build") in legal_commands(spec.state, 0)
    spec.given(spec.decide(0, SelectDice(floor="gold", action="build")))
    assert spec.state.tower[5] == (0, 0, 0)  # the group is used up
    assert flow(spec.state).phase == "build" and legal_commands(spec.state, 0) == [Build(building="pen")]
    spec.when(0, Build(building="pen")).then(
        [BuildingBuilt(seat=0, building="pen", camels=2, gold=0, points=0), ActionEnded(seat=0), TurnEnded(seat=0)]
    )


def test_with_two_players_no_building_after_an_action():
    spec = two(camels(0, 4))
    spec.given(spec.decide(0, SelectDice(floor="vase", action="card")))
    spec.when(0, Build(building="pen")).then_error("build_instead_of_action")
    assert not any(isinstance(c, Build) for c in legal_commands(spec.state, 0))


def test_with_two_players_the_build_action_needs_something_to_build():
    spec = two()
    spec.when(0, SelectDice(floor="gold", action="build")).then_error("nothing_to_build")
    assert not any(isinstance(c, SelectDice) and c.action == "build" for c in legal_commands(spec.state, 0))


def test_with_two_players_a_building_card_is_played_with_the_build_action():
    spec = Spec(GAME, 2).given(
        opening(2, top=("build_camels_only",))[:1] + draws(0, "build_camels_only") + [camels(0, 2), new_day(2)]
    )
    spec.given([roll(0, 1, 2, 3, 4, 5, 6, 6, 6)])
    spec.when(0, Build(building="pen", card="build_camels_only")).then_error("build_instead_of_action")
    spec.when(0, PlayCard(card="build_camels_only")).then_error("use_build_command")
    spec.given(spec.decide(0, SelectDice(floor="camels", action="build")))
    assert Build(building="pen", card="build_camels_only") in legal_commands(spec.state, 0)
