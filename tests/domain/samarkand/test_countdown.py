"""The countdown (stepwise): answers at each value, purchases, fines, disputes, camels, end of a round.

Four players unless said: seat 0 sells carpets, 1 spices, 2 fruits, 3 jewels; the dean is seat 0; revealed cards
7, 5, 3, 1; the face-up camel is a 3 with a 4 next; each seat has 15 dirhams.
"""

from __future__ import annotations

import msgspec

from contracts.samarkand import (
    Answered,
    CamelBought,
    CamelDeckShuffled,
    CamelDisputed,
    CamelTurned,
    ChooseCard,
    Goods,
    GoodsBought,
    GoodsDisputed,
    Pass,
    RoundEnded,
    RoundStarted,
    ScoringStarted,
    Stop,
    StopCall,
    StopFined,
    ValueClosed,
)
from domain.samarkand import GAME
from tests.domain.samarkand.support import market, reveal, spec, with_players

OPEN = market(4) + reveal((7, 5, 3, 1))


def passes(value: int, *seats: int) -> list:
    return [Answered(seat=s, value=value, stop=False) for s in seats]


def down_to(value: int) -> list:
    """Nobody stopped from 10 down to ``value`` + 1."""
    return [ValueClosed(value=v) for v in range(10, value, -1)]


def test_a_pass_waits_for_the_others_before_the_value_moves():
    state = spec(4, OPEN).when(2, Pass()).then([Answered(seat=2, value=10, stop=False)])
    assert GAME.flow(state).awaiting == (0, 1, 3) and state.value == 10


def test_when_everyone_passes_the_countdown_goes_to_the_value_below():
    state = spec(4, OPEN + passes(10, 0, 1, 2)).when(3, Pass()).then(
        [Answered(seat=3, value=10, stop=False), ValueClosed(value=10)]
    )
    assert state.value == 9 and GAME.flow(state).awaiting == (0, 1, 2, 3)


def test_a_stop_buys_the_card_at_the_value_and_pays_its_seller():
    state = spec(4, OPEN + passes(10, 0, 2, 3)).when(1, Stop(target=0)).then([
        Answered(seat=1, value=10, stop=True, target=0),
        ValueClosed(value=10, stops=(StopCall(seat=1, target=0),)),
        GoodsBought(buyer=1, seller=0, kind="carpets", value=7, price=10),
    ])
    assert state.players[1].money == 5 and state.players[0].money == 25
    assert state.players[1].goods == (Goods("carpets", 7),) and state.players[0].offer is None


def test_the_countdown_resumes_at_the_value_just_below_the_stop():
    state = spec(4, OPEN + down_to(6) + passes(6, 0, 2, 3)).when(1, Stop(target=3)).state_after()
    assert state.value == 5 and state.players[1].goods == (Goods("jewels", 1),)


def test_a_seat_cannot_buy_its_own_goods():
    spec(4, OPEN).when(1, Stop(target=1)).then_error("own_goods")


def test_answering_twice_at_one_value_is_refused():
    spec(4, OPEN + passes(10, 1)).when(1, Stop(target=0)).then_error("already_answered")


def test_a_card_already_sold_cannot_be_designated():
    given = OPEN + [GoodsBought(buyer=2, seller=0, kind="carpets", value=7, price=10)]
    spec(4, given).when(1, Stop(target=0)).then_error("not_on_market")


def test_a_seller_that_does_not_exist_cannot_be_designated():
    spec(4, OPEN).when(1, Stop(target=7)).then_error("no_such_target")


def test_the_bank_sells_nothing_with_four_players():
    spec(4, OPEN).when(1, Stop(target="bank")).then_error("not_on_market")


def test_a_seat_may_stop_several_times_in_one_round():
    s = spec(4, OPEN + passes(10, 0, 2, 3))
    s.state = with_players(s.state, s1={"money": 30})
    s.state = s.when(1, Stop(target=0)).state_after()
    s.given(passes(9, 0, 2, 3))
    state = s.when(1, Stop(target=2)).then([
        Answered(seat=1, value=9, stop=True, target=2),
        ValueClosed(value=9, stops=(StopCall(seat=1, target=2),)),
        GoodsBought(buyer=1, seller=2, kind="fruits", value=3, price=9),
    ])
    assert state.players[1].goods == (Goods("carpets", 7), Goods("fruits", 3))


def test_a_stop_one_cannot_pay_costs_a_one_dirham_fine_to_the_bank():
    s = spec(4, OPEN + passes(10, 0, 2, 3))
    s.state = with_players(s.state, s1={"money": 9})
    state = s.when(1, Stop(target=0)).then([
        Answered(seat=1, value=10, stop=True, target=0),
        ValueClosed(value=10, stops=(StopCall(seat=1, target=0),)),
        StopFined(seat=1, target=0, price=10, amount=1),
    ])
    assert state.players[1].money == 8 and state.bank_in == 1 and state.players[0].offer == 7


def test_the_fine_takes_no_more_than_the_seat_has():
    s = spec(4, OPEN + passes(10, 0, 2, 3))
    s.state = with_players(s.state, s1={"money": 0})
    state = s.when(1, Stop(target=0)).then([
        Answered(seat=1, value=10, stop=True, target=0),
        ValueClosed(value=10, stops=(StopCall(seat=1, target=0),)),
        StopFined(seat=1, target=0, price=10, amount=0),
    ])
    assert state.players[1].money == 0 and state.bank_in == 0


def test_stops_at_one_value_on_different_cards_are_all_settled():
    state = spec(4, OPEN + passes(10, 0) + [Answered(seat=1, value=10, stop=True, target="camel"),
                                            Answered(seat=2, value=10, stop=True, target=3)]).when(
        3, Stop(target=0)).then([
            Answered(seat=3, value=10, stop=True, target=0),
            ValueClosed(value=10, stops=(StopCall(1, "camel"), StopCall(2, 3), StopCall(3, 0))),
            GoodsBought(buyer=3, seller=0, kind="carpets", value=7, price=10),
            GoodsBought(buyer=2, seller=3, kind="jewels", value=1, price=10),
            CamelBought(buyer=1, capacity=3, price=10),
            CamelTurned(capacity=4),
        ])
    assert [p.money for p in state.players] == [25, 5, 5, 15] and state.bank_in == 10


def test_money_is_judged_before_the_stops_of_one_value_are_settled():
    s = spec(4, OPEN + down_to(5) + passes(5, 2, 3) + [Answered(seat=0, value=5, stop=True, target=1)])
    s.state = with_players(s.state, s1={"money": 3})
    s.when(1, Stop(target=2)).then([
        Answered(seat=1, value=5, stop=True, target=2),
        ValueClosed(value=5, stops=(StopCall(0, 1), StopCall(1, 2))),
        GoodsBought(buyer=0, seller=1, kind="spices", value=5, price=5),
        StopFined(seat=1, target=2, price=5, amount=1),
    ])


def test_in_a_dispute_the_dean_keeps_the_card_out_of_respect():
    state = spec(4, OPEN + passes(10, 3) + [Answered(seat=0, value=10, stop=True, target=1),
                                            Answered(seat=2, value=10, stop=True, target=1)]).when(
        1, Pass()).then([
            Answered(seat=1, value=10, stop=False),
            ValueClosed(value=10, stops=(StopCall(0, 1), StopCall(2, 1))),
            GoodsBought(buyer=0, seller=1, kind="spices", value=5, price=10, disputants=(0, 2)),
        ])
    assert state.players[2].money == 15 and state.players[0].money == 5


def test_a_dispute_without_the_dean_discards_the_card_and_each_disputant_pays_half_rounded_up():
    given = OPEN + down_to(7) + passes(7, 0, 1) + [Answered(seat=2, value=7, stop=True, target=1)]
    state = spec(4, given).when(3, Stop(target=1)).then([
        Answered(seat=3, value=7, stop=True, target=1),
        ValueClosed(value=7, stops=(StopCall(2, 1), StopCall(3, 1))),
        GoodsDisputed(seats=(2, 3), seller=1, kind="spices", value=5, price=7, payment=4),
    ])
    assert [p.money for p in state.players] == [15, 23, 11, 11]
    assert state.players[1].offer is None and state.discard == (Goods("spices", 5),)


def test_naming_the_same_card_is_a_dispute_even_when_one_disputant_could_not_pay_the_full_price():
    """« Si plusieurs joueurs désignent la même carte, il y a dispute »: each owes half, not the full price."""
    s = spec(4, OPEN + passes(10, 0, 1) + [Answered(seat=2, value=10, stop=True, target=1)])
    s.state = with_players(s.state, s2={"money": 5})
    state = s.when(3, Stop(target=1)).then([
        Answered(seat=3, value=10, stop=True, target=1),
        ValueClosed(value=10, stops=(StopCall(2, 1), StopCall(3, 1))),
        GoodsDisputed(seats=(2, 3), seller=1, kind="spices", value=5, price=10, payment=5),
    ])
    assert [p.money for p in state.players] == [15, 25, 0, 10]


def test_a_disputant_who_cannot_pay_half_is_fined_and_the_card_is_discarded_all_the_same():
    s = spec(4, OPEN + passes(10, 0, 1) + [Answered(seat=2, value=10, stop=True, target=1)])
    s.state = with_players(s.state, s2={"money": 4})
    state = s.when(3, Stop(target=1)).then([
        Answered(seat=3, value=10, stop=True, target=1),
        ValueClosed(value=10, stops=(StopCall(2, 1), StopCall(3, 1))),
        StopFined(seat=2, target=1, price=10, amount=1),
        GoodsDisputed(seats=(3,), seller=1, kind="spices", value=5, price=10, payment=5),
    ])
    assert [p.money for p in state.players] == [15, 20, 3, 10]
    assert state.players[1].offer is None and state.discard == (Goods("spices", 5),)


def test_a_lone_stop_one_cannot_pay_is_fined_and_the_card_stays():
    s = spec(4, OPEN + passes(10, 0, 1, 2))
    s.state = with_players(s.state, s3={"money": 4})
    state = s.when(3, Stop(target=1)).then([
        Answered(seat=3, value=10, stop=True, target=1),
        ValueClosed(value=10, stops=(StopCall(3, 1),)),
        StopFined(seat=3, target=1, price=10, amount=1),
    ])
    assert state.players[1].offer == 5 and state.players[3].money == 3


def test_a_dean_who_cannot_pay_the_card_he_is_given_is_fined_and_the_others_settle_without_him():
    s = spec(4, OPEN + passes(10, 1) + [Answered(seat=0, value=10, stop=True, target=1),
                                        Answered(seat=2, value=10, stop=True, target=1)])
    s.state = with_players(s.state, s0={"money": 4})
    s.when(3, Pass()).then([
        Answered(seat=3, value=10, stop=False),
        ValueClosed(value=10, stops=(StopCall(0, 1), StopCall(2, 1))),
        StopFined(seat=0, target=1, price=10, amount=1),
        GoodsBought(buyer=2, seller=1, kind="spices", value=5, price=10),
    ])


def test_a_disputed_camel_goes_back_into_its_pile_which_is_shuffled():
    given = OPEN + passes(10, 0, 1) + [Answered(seat=2, value=10, stop=True, target="camel")]
    then = spec(4, given).when(3, Stop(target="camel"))
    assert then.events[:3] == [
        Answered(seat=3, value=10, stop=True, target="camel"),
        ValueClosed(value=10, stops=(StopCall(2, "camel"), StopCall(3, "camel"))),
        CamelDisputed(seats=(2, 3), capacity=3, price=10, payment=5),
    ]
    shuffled, turned = then.events[3:]
    assert isinstance(shuffled, CamelDeckShuffled) and shuffled.size == 16
    assert sorted(shuffled.order) == sorted((3,) + market(4)[1].order[1:])
    assert turned == CamelTurned(capacity=shuffled.order[0])  # goods remain: the next camel is turned
    state = then.state_after()
    assert state.bank_in == 10 and state.players[2].camels == () and len(state.camel_pile) == 15


def test_a_bought_camel_is_replaced_at_once_while_goods_remain():
    state = spec(4, OPEN + passes(10, 0, 2, 3)).when(1, Stop(target="camel")).then([
        Answered(seat=1, value=10, stop=True, target="camel"),
        ValueClosed(value=10, stops=(StopCall(1, "camel"),)),
        CamelBought(buyer=1, capacity=3, price=10),
        CamelTurned(capacity=4),
    ])
    assert state.players[1].camels == (3,) and state.camel_up == 4


SOLD_OUT = OPEN + [
    GoodsBought(buyer=1, seller=0, kind="carpets", value=7, price=10),
    GoodsBought(buyer=0, seller=1, kind="spices", value=5, price=10),
    GoodsBought(buyer=0, seller=2, kind="fruits", value=3, price=10),
    GoodsBought(buyer=0, seller=3, kind="jewels", value=1, price=10),
]


def test_a_camel_sold_when_no_goods_remain_is_replaced_at_the_start_of_the_next_round():
    state = spec(4, SOLD_OUT + passes(10, 0, 2, 3)).when(1, Stop(target="camel")).then([
        Answered(seat=1, value=10, stop=True, target="camel"),
        ValueClosed(value=10, stops=(StopCall(1, "camel"),)),
        CamelBought(buyer=1, capacity=3, price=10),
        RoundEnded(round=1),
        RoundStarted(round=2, dean=1),
        CamelTurned(capacity=4),
    ])
    assert state.phase == "choosing"


def test_no_camel_can_be_bought_once_the_pile_is_exhausted():
    s = spec(4, market(4, camels=()) + reveal((7, 5, 3, 1)))
    assert s.state.camel_up is None and "camel" not in [getattr(c, "target", None)
                                                        for c in GAME.legal_commands(s.state, 0)]
    s.when(0, Stop(target="camel")).then_error("no_camel_left")


def test_a_seat_with_nothing_left_to_buy_is_not_asked():
    given = market(4, camels=()) + reveal((7, 5, 3, 1)) + [
        GoodsBought(buyer=0, seller=1, kind="spices", value=5, price=10),
        GoodsBought(buyer=0, seller=2, kind="fruits", value=3, price=10),
        GoodsBought(buyer=0, seller=3, kind="jewels", value=1, price=10),
    ]
    s = spec(4, given)
    assert GAME.flow(s.state).awaiting == (1, 2, 3) and GAME.legal_commands(s.state, 0) == []
    s.when(0, Pass()).then_error("nothing_to_buy")


def test_the_round_ends_as_soon_as_the_market_is_empty():
    given = market(4, camels=()) + reveal((7, 5, 3, 1)) + [
        GoodsBought(buyer=0, seller=1, kind="spices", value=5, price=10),
        GoodsBought(buyer=0, seller=2, kind="fruits", value=3, price=10),
    ] + down_to(8) + passes(8, 0, 1)
    state = spec(4, given).when(2, Stop(target=3)).state_after()
    assert state.phase == "countdown" and state.players[0].offer == 7  # seat 0's card is still for sale
    given2 = given + [Answered(seat=2, value=8, stop=True, target=3), ValueClosed(value=8, stops=(StopCall(2, 3),)),
                      GoodsBought(buyer=2, seller=3, kind="jewels", value=1, price=8)] + passes(7, 1, 2)
    spec(4, given2).when(3, Stop(target=0)).then([
        Answered(seat=3, value=7, stop=True, target=0),
        ValueClosed(value=7, stops=(StopCall(3, 0),)),
        GoodsBought(buyer=3, seller=0, kind="carpets", value=7, price=7),
        RoundEnded(round=1),
        RoundStarted(round=2, dean=1),
    ])


UNSOLD = (Goods("carpets", 7), Goods("spices", 5), Goods("fruits", 3), Goods("jewels", 1))


def test_the_countdown_stops_at_0_so_after_1_the_round_ends_and_nothing_is_sold_for_nothing():
    """« Le tour de jeu s'arrête lorsque le décompte arrive à 0 » (DATA.md: nothing is bought for 0): the last
    value at which a seat answers is 1; when it closes with no stop the round ends."""
    s = spec(4, OPEN + down_to(1) + passes(1, 0, 1, 2))
    assert s.state.value == 1 and GAME.legal_commands(s.state, 3)[0] == Pass()
    state = s.when(3, Pass()).then([
        Answered(seat=3, value=1, stop=False),
        ValueClosed(value=1),
        RoundEnded(round=1, discarded=UNSOLD),
        RoundStarted(round=2, dean=1),
    ])
    assert state.phase == "choosing" and GAME.flow(state).awaiting == (0, 1, 2, 3)
    assert all(type(c) is ChooseCard for seat in range(4) for c in GAME.legal_commands(state, seat))
    s.state = state
    s.when(1, Stop(target=0)).then_error("wrong_phase")
    s.when(1, Pass()).then_error("wrong_phase")


def test_a_stop_at_1_buys_for_1_and_ends_the_round():
    spec(4, OPEN + down_to(1) + passes(1, 0, 2, 3)).when(1, Stop(target=0)).then([
        Answered(seat=1, value=1, stop=True, target=0),
        ValueClosed(value=1, stops=(StopCall(1, 0),)),
        GoodsBought(buyer=1, seller=0, kind="carpets", value=7, price=1),
        RoundEnded(round=1, discarded=UNSOLD[1:]),
        RoundStarted(round=2, dean=1),
    ])


def test_unsold_cards_are_discarded_when_the_countdown_ends_but_the_camel_stays_and_the_dean_moves_left():
    state = spec(4, OPEN + down_to(1) + passes(1, 0, 1, 2)).when(3, Pass()).state_after()
    assert state.camel_up == 3 and state.discard == UNSOLD and all(p.offer is None for p in state.players)
    assert state.dean == 1


def test_the_last_seat_passes_the_deanship_back_to_the_first():
    given = market(4, dean=3) + reveal((7, 5, 3, 1)) + down_to(1) + passes(1, 0, 1, 2)
    events = spec(4, given).when(3, Pass()).events
    assert events[-1] == RoundStarted(round=2, dean=0)


def test_a_stop_is_hidden_from_the_others_until_the_value_closes():
    s = spec(4, OPEN + [Answered(seat=2, value=10, stop=True, target=1)])
    passed = spec(4, OPEN + [Answered(seat=2, value=10, stop=False)])
    for viewer in (0, 1, 3, None):
        assert msgspec.json.encode(GAME.view(s.state, viewer)) == msgspec.json.encode(GAME.view(passed.state, viewer))
        assert GAME.view(s.state, viewer).players[2].has_answered
        assert GAME.redact(Answered(seat=2, value=10, stop=True, target=1), viewer) == Answered(
            seat=2, value=10, stop=None, target=None)
    mine = GAME.view(s.state, 2).you
    assert (mine.answered, mine.stop, mine.target) == (True, True, 1)


def test_with_three_players_the_bank_card_is_bought_and_the_money_goes_to_the_bank():
    s = spec(3, market(3) + reveal((7, 5, 3)) + passes(10, 1, 2))
    state = s.when(0, Stop(target="bank")).then([
        Answered(seat=0, value=10, stop=True, target="bank"),
        ValueClosed(value=10, stops=(StopCall(0, "bank"),)),
        GoodsBought(buyer=0, seller=None, kind="jewels", value=7, price=10),
    ])
    assert state.players[0].money == 15 and state.bank_in == 10 and state.bank_offer is None


def test_with_three_players_each_round_turns_a_new_bank_card():
    s = spec(3, market(3) + reveal((7, 5, 3)) + down_to(1) + passes(1, 1, 2))
    state = s.when(0, Pass()).state_after()
    assert state.bank_offer == 5 and state.discard[-1] == Goods("jewels", 7)


def test_the_tenth_round_ends_in_scoring():
    given = market(4) + [RoundStarted(round=10, dean=1)] + reveal((7, 5, 3, 1)) + down_to(1) + passes(1, 0, 1, 2)
    then = spec(4, given).when(3, Pass())
    assert then.events[2:5] == [
        RoundEnded(round=10, discarded=(Goods("carpets", 7), Goods("spices", 5), Goods("fruits", 3),
                                        Goods("jewels", 1))),
        ScoringStarted(),
        then.events[4],
    ]
    state = then.state_after()
    assert state.phase == "over" and state.scores == (5, 5, 5, 5) and GAME.result(state).winners == (0, 1, 2, 3)


def test_commands_after_the_end_are_refused():
    given = market(4) + [RoundStarted(round=10, dean=1)] + reveal((7, 5, 3, 1)) + down_to(1) + passes(1, 0, 1, 2)
    s = spec(4, given)
    s.state = s.when(3, Pass()).state_after()
    s.when(0, Pass()).then_error("game_over")
    assert GAME.flow(s.state).awaiting == ()
