"""Scoring: wealth, capacity (the player discards), least-bought type (the player chooses on a tie), series,
empty camel slots; and the rulebook's worked example.

Four players unless said: seat 0 sells carpets, 1 spices, 2 fruits, 3 jewels.
"""

from __future__ import annotations

import pytest

from contracts.samarkand import (
    ChooseLeastBought,
    DiscardGoods,
    GameScored,
    Goods,
    GoodsDiscarded,
    LeastBoughtChosen,
    SeatScore,
)
from domain.samarkand import GAME, data, rules
from tests.domain.samarkand.support import goods, scoring_state, spec


def scored(state: rules.State) -> tuple[SeatScore, ...]:
    return rules.score(state)


def at_scoring(seats: int, players: list[dict]):
    s = spec(seats)
    s.state = scoring_state(seats, players)
    return s


def test_wealth_scores_five_three_and_one_for_the_three_richest():
    state = scoring_state(4, [{"money": 10}, {"money": 6}, {"money": 8}, {"money": 5}])
    assert [d.wealth for d in scored(state)] == [5, 1, 3, 0]


def test_players_tied_on_wealth_each_score_their_shared_position_and_the_next_player_counts_them():
    """« En cas d'égalité, chaque joueur marque les points »: positions as in a competition ranking (DATA.md:
    10/10/8/5 gives 5/5/1/0). The player with 8 is third, not second."""
    state = scoring_state(4, [{"money": 10}, {"money": 10}, {"money": 8}, {"money": 5}])
    assert [d.wealth for d in scored(state)] == [5, 5, 1, 0]


def test_with_three_players_only_the_two_richest_score_three_and_one():
    state = scoring_state(3, [{"money": 30}, {"money": 12}, {"money": 4}])
    assert [d.wealth for d in scored(state)] == [3, 1, 0]


def test_with_three_players_two_tied_first_take_both_positions_and_the_third_scores_nothing():
    """« seuls les deux premiers joueurs ayant le plus d'argent marquent les points » (DATA.md: 2/2/0 gives 3/3/0)."""
    state = scoring_state(3, [{"money": 2}, {"money": 2}, {"money": 0}])
    assert [d.wealth for d in scored(state)] == [3, 3, 0]


@pytest.mark.parametrize(
    "money,wealth",
    [
        ((10, 10, 10, 5), (5, 5, 5, 0)),  # three tied first: the fourth is fourth
        ((10, 8, 8, 5), (5, 3, 3, 0)),  # two tied second share 3; the next is fourth
        ((10, 8, 6, 6), (5, 3, 1, 1)),  # tied third: both score 1
        ((7, 7, 7, 7), (5, 5, 5, 5)),
        ((10, 8, 6, 6, 2), (5, 3, 1, 1, 0)),  # 5 players: the same three positions
        ((10, 10, 6, 6, 6), (5, 5, 1, 1, 1)),  # two tied first, then three tied third
        ((9, 8, 7, 6, 5), (5, 3, 1, 0, 0)),
        ((4, 4, 4), (3, 3, 3)),  # 3 players, all tied
        ((5, 3, 3), (3, 1, 1)),  # 3 players, tied second
    ],
)
def test_wealth_ties_follow_positions_at_every_table_size(money, wealth):
    state = scoring_state(len(money), [{"money": m} for m in money])
    assert tuple(d.wealth for d in scored(state)) == wealth


@pytest.mark.parametrize("count,points", [(1, 0), (2, 1), (3, 2), (4, 4), (5, 8), (6, 16), (8, 16)])
def test_series_of_cards_of_one_value_score_by_the_table(count, points):
    assert data.series_points(count) == points
    cards = [("spices", 2), ("fruits", 2), ("jewels", 2)] * 3
    state = scoring_state(4, [{"goods": goods(*cards[:count]), "camels": (5, 5)}])
    assert scored(state)[0].series == points


def test_a_series_counts_cards_of_every_type_and_several_series_add_up():
    cards = goods(("spices", 1), ("fruits", 1), ("spices", 4), ("jewels", 4), ("fruits", 4))
    state = scoring_state(4, [{"goods": cards, "camels": (5,)}])
    assert scored(state)[0].series == 1 + 2


def test_the_least_bought_type_scores_the_sum_of_its_cards():
    cards = goods(("spices", 7), ("spices", 1), ("fruits", 3), ("fruits", 1), ("jewels", 5))
    state = scoring_state(4, [{"goods": cards, "camels": (5,)}])
    assert (scored(state)[0].least_bought_kind, scored(state)[0].least_bought) == ("jewels", 5)


def test_a_type_never_bought_makes_the_least_bought_type_score_zero():
    cards = goods(("spices", 7), ("fruits", 5))
    state = scoring_state(4, [{"goods": cards, "camels": (2,)}])
    assert (scored(state)[0].least_bought_kind, scored(state)[0].least_bought) == (None, 0)
    assert GAME.flow(state).awaiting == ()


def test_a_sellers_own_type_does_not_count_as_never_bought():
    cards = goods(("spices", 2), ("fruits", 3), ("fruits", 1), ("jewels", 4), ("jewels", 4))
    state = scoring_state(4, [{"goods": cards, "camels": (5,)}])  # seat 0 sells carpets and cannot buy them
    assert (scored(state)[0].least_bought_kind, scored(state)[0].least_bought) == ("spices", 2)


def test_with_three_players_the_banks_type_counts_among_the_types_to_buy():
    cards = goods(("spices", 2), ("fruits", 3))  # seat 0 sells carpets; the bank sells jewels, never bought
    state = scoring_state(3, [{"goods": cards, "camels": (2,)}])
    assert scored(state)[0].least_bought == 0


def test_empty_camel_slots_cost_two_points_each():
    state = scoring_state(4, [{"goods": goods(("spices", 2), ("fruits", 3)), "camels": (5, 2)}])
    assert scored(state)[0].capacity_penalty == -10


def test_goods_beyond_camel_capacity_wait_for_their_owner_to_discard_them_one_by_one():
    cards = goods(("spices", 2), ("spices", 2), ("fruits", 3), ("jewels", 1))
    s = at_scoring(4, [{"goods": cards, "camels": (2,)}])
    assert GAME.flow(s.state).phase == "scoring" and GAME.flow(s.state).awaiting == (0,)
    assert GAME.legal_commands(s.state, 0) == [
        DiscardGoods(kind="fruits", value=3), DiscardGoods(kind="jewels", value=1), DiscardGoods(kind="spices", value=2)
    ]
    s.state = s.when(0, DiscardGoods(kind="spices", value=2)).then([GoodsDiscarded(seat=0, kind="spices", value=2)])
    assert GAME.flow(s.state).awaiting == (0,)
    events = s.when(0, DiscardGoods(kind="jewels", value=1)).events
    assert events[0] == GoodsDiscarded(seat=0, kind="jewels", value=1) and isinstance(events[1], GameScored)
    detail = events[1].details[0]
    assert detail.discarded == goods(("spices", 2), ("jewels", 1)) and detail.goods_kept == 2
    assert detail.capacity_penalty == 0 and detail.least_bought == 0  # jewels are no longer there


def test_a_discard_within_capacity_is_refused():
    s = at_scoring(4, [{"goods": goods(("spices", 2), ("fruits", 3), ("jewels", 1)), "camels": (3,)},
                       {"goods": goods(("carpets", 2), ("fruits", 3)), "camels": ()}])
    s.when(0, DiscardGoods(kind="spices", value=2)).then_error("within_capacity")


def test_a_discard_of_goods_one_does_not_hold_is_refused():
    s = at_scoring(4, [{"goods": goods(("spices", 2), ("fruits", 3)), "camels": ()}])
    s.when(0, DiscardGoods(kind="spices", value=7)).then_error("not_your_goods")


def test_discards_and_choices_belong_to_the_scoring():
    s = spec(4)
    s.given_setup()
    s.when(0, DiscardGoods(kind="spices", value=7)).then_error("wrong_phase")
    s.when(0, ChooseLeastBought(kind="spices")).then_error("wrong_phase")


TIE = goods(("spices", 7), ("spices", 1), ("fruits", 3), ("fruits", 1), ("jewels", 4), ("jewels", 4), ("jewels", 1))


def test_on_a_tie_for_the_least_bought_type_the_player_chooses():
    s = at_scoring(4, [{"goods": TIE, "camels": (5, 2)}])
    assert GAME.legal_commands(s.state, 0) == [ChooseLeastBought(kind="spices"), ChooseLeastBought(kind="fruits")]
    events = s.when(0, ChooseLeastBought(kind="fruits")).events  # a legal, if poor, choice
    assert events[0] == LeastBoughtChosen(seat=0, kind="fruits")
    assert (events[1].details[0].least_bought_kind, events[1].details[0].least_bought) == ("fruits", 4)


def test_a_type_outside_the_tie_is_refused():
    at_scoring(4, [{"goods": TIE, "camels": (5, 2)}]).when(0, ChooseLeastBought(kind="jewels")).then_error(
        "not_least_bought")


def test_a_choice_without_a_tie_is_refused():
    cards = goods(("spices", 2), ("spices", 1), ("fruits", 3), ("fruits", 3), ("jewels", 1))
    s = at_scoring(4, [{"goods": cards, "camels": (5,)}, {"goods": TIE, "camels": ()}])
    s.when(0, ChooseLeastBought(kind="jewels")).then_error("no_tie")


def test_a_tie_of_types_worth_the_same_asks_nothing():
    cards = goods(("spices", 3), ("fruits", 2), ("fruits", 1), ("jewels", 3))
    state = scoring_state(4, [{"goods": cards, "camels": (4,)}])
    assert GAME.flow(state).awaiting == () and scored(state)[0].least_bought == 3


def test_the_least_bought_choice_comes_after_the_discards():
    s = at_scoring(4, [{"goods": TIE, "camels": (2,)}])
    s.when(0, ChooseLeastBought(kind="spices")).then_error("discard_first")


def test_a_second_least_bought_choice_is_refused():
    s = at_scoring(4, [{"goods": TIE, "camels": (5, 2), "least_bought": "spices"},
                       {"goods": TIE[:1] + goods(("carpets", 1)), "camels": ()}])
    s.when(0, ChooseLeastBought(kind="fruits")).then_error("already_chosen")


def test_players_tied_on_points_all_win():
    state = scoring_state(4, [{"money": 10}, {"money": 10}, {"money": 3}, {"money": 3}])
    s = spec(4)
    s.state = state
    result = GAME.result(rules.fold(state, rules._maybe_score(state)))
    assert result.scores == (5, 5, 1, 1) and result.winners == (0, 1)
    assert result.details["seats"][0]["wealth"] == 5


VALERIE = 2  # sells fruits; Bruno (seat 0) has 10 dirhams, Alain (1) 6, Loïc (3) 5
VALERIE_GOODS = goods(
    ("jewels", 7), ("jewels", 5), ("spices", 5), ("spices", 1), ("carpets", 5), ("carpets", 1), ("carpets", 2)
)


def valerie(camels: tuple[int, ...]):
    return at_scoring(4, [{"money": 10}, {"money": 6}, {"money": 8, "goods": VALERIE_GOODS, "camels": camels},
                          {"money": 5}])


def test_the_worked_example_valerie_scores_wealth_3_least_bought_12_and_loses_4_for_empty_slots():
    """The rulebook's scoring example (4 players, Valérie: 8 dirhams; Bruno 10, Alain 6, Loïc 5).

    Her cards, reconstructed from the text: jewels 7 and 5; spices 5 and 1 (6 in all); carpets 5, 1 and 2 (a
    series of 5s in jewels, carpets and spices; a pair of 1s in carpets and spices; a lone 7 and a lone 2);
    camels 5 and 4. She is second richest (3), chooses jewels (12) over spices (6) on the least-bought tie, and
    loses 4 for two empty camel slots.

    Known discrepancy (shared/rules/DATA.md): the text scores the 3-card series 3 and the pair 2, for 16 in all;
    the series table (3 cards -> 2, 2 cards -> 1) governs, so the same cards make 3 + 12 + 2 + 1 - 4 = 14.
    """
    s = valerie((5, 4))
    assert GAME.flow(s.state).awaiting == (VALERIE,)
    assert GAME.legal_commands(s.state, VALERIE) == [ChooseLeastBought(kind="spices"),
                                                     ChooseLeastBought(kind="jewels")]
    events = s.when(VALERIE, ChooseLeastBought(kind="jewels")).events
    assert events[0] == LeastBoughtChosen(seat=VALERIE, kind="jewels")
    assert events[1].details[VALERIE] == SeatScore(
        money=8, wealth=3, least_bought_kind="jewels", least_bought=12, series=2 + 1, capacity=9, goods_kept=7,
        capacity_penalty=-4, discarded=(), total=14,
    )
    assert events[1].scores == (5, 1, 14, 0) and events[1].winners == (VALERIE,)


def test_the_worked_example_remark_with_two_camels_of_3_valerie_discards_the_carpet_of_2_and_loses_nothing():
    """The example's closing remark: with two camels of 3 (6 slots) she discards the carpet worth 2, which
    scores nothing, and loses no point. The text says 20; under the series table it is 3 + 12 + 2 + 1 = 18
    (the same discrepancy as above)."""
    s = valerie((3, 3))
    assert GAME.flow(s.state).awaiting == (VALERIE,)
    s.state = s.when(VALERIE, DiscardGoods(kind="carpets", value=2)).then(
        [GoodsDiscarded(seat=VALERIE, kind="carpets", value=2)])
    events = s.when(VALERIE, ChooseLeastBought(kind="jewels")).events
    assert events[1].details[VALERIE] == SeatScore(
        money=8, wealth=3, least_bought_kind="jewels", least_bought=12, series=2 + 1, capacity=6, goods_kept=6,
        capacity_penalty=0, discarded=(Goods("carpets", 2),), total=18,
    )
