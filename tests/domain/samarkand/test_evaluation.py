"""Le marché de Samarkand's bot hooks (domain/samarkand/evaluation.py)."""

import random

from domain.chance import Chance
from domain.samarkand import GAME
from tests.bots.hooks import check_determinize
from tests.bots.support import started


def test_determinize_keeps_what_the_seat_sees_and_draws_the_rest_again():
    check_determinize("samarkand", 3, lambda state, seat: (state.camel_pile, state.bank_pile))


def test_a_card_chosen_face_down_by_another_seat_is_taken_back_and_its_own_kept():
    game, state = started("samarkand", 3, seed=4)
    for seat, value in ((1, state.players[1].hand[0]), (0, state.players[0].hand[-1])):
        for event in game.decide(state, seat, game.legal_commands(state, seat)[0], Chance(b"s", 1)):
            state = game.evolve(state, event)
    world = GAME.determinize(state, 0, random.Random(0))
    assert world.players[1].chosen is None and world.players[0].chosen == state.players[0].chosen is not None
    assert 1 in game.flow(world).awaiting


def test_evaluate_is_the_score_now_less_the_best_other_one():
    _, state = started("samarkand", 3, seed=4)
    assert GAME.evaluate(state, 0) == 0  # equal at the start


def _seat(state, seat, **changes):
    import msgspec

    players = list(state.players)
    players[seat] = msgspec.structs.replace(players[seat], **changes)
    return msgspec.structs.replace(state, players=tuple(players))


def test_the_outlook_counts_only_the_goods_the_camels_carry_the_best_of_them():
    """At the scoring a seat keeps no more goods than its camels carry: ``evaluate`` (the score if the game ended
    now, greedy's) counts every card it holds, the outlook (mcts's) the best ones it may keep."""
    from contracts.samarkand import Goods
    from domain.samarkand.rules import SCORING
    import msgspec

    _, state = started("samarkand", 3, seed=4)
    state = msgspec.structs.replace(state, phase=SCORING)
    kinds = [k for k in (p.sells for p in state.players[1:])] + [state.bank_goods]
    goods = tuple(Goods(k, v) for k in kinds for v in (7, 1))
    carried = _seat(state, 0, goods=goods, camels=(3,))
    # three places: one card of each type, the 7s (the least-bought type 7) beat anything with a 1 in it
    assert GAME.outlook(carried, 0) == GAME.outlook(_seat(state, 0, goods=tuple(Goods(k, 7) for k in kinds),
                                                          camels=(3,)), 0)
    assert GAME.evaluate(carried, 0) > GAME.outlook(carried, 0)
    assert GAME.outlook(_seat(state, 0, goods=goods), 0) < GAME.outlook(carried, 0)  # no camel: nothing kept


def test_the_outlook_fines_an_empty_camel_place_only_when_the_seat_cannot_fill_it_any_more():
    from domain.samarkand.rules import SCORING
    import msgspec

    _, state = started("samarkand", 3, seed=4)  # round 1: money for many cards, rounds to buy them
    early = _seat(state, 0, camels=(5,))
    assert GAME.evaluate(early, 0) == GAME.evaluate(state, 0) - 10  # greedy's score now: five empty places
    assert GAME.outlook(early, 0) == GAME.outlook(state, 0)
    late = msgspec.structs.replace(early, phase=SCORING)
    assert GAME.outlook(late, 0) == GAME.outlook(msgspec.structs.replace(state, phase=SCORING), 0) - 10
