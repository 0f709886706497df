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
