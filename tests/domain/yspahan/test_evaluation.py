"""Yspahan's bot hooks (domain/yspahan/evaluation.py)."""

import msgspec

from domain.yspahan import GAME
from tests.bots.hooks import check_determinize
from tests.bots.support import started


def test_determinize_keeps_what_the_seat_sees_and_draws_the_rest_again():
    def hidden(state, seat):
        return [p.hand for i, p in enumerate(state.players) if i != seat], state.deck

    check_determinize("yspahan", 3, hidden)


def test_points_count_and_so_does_the_best_other_seat():
    _, state = started("yspahan", 2, seed=1)
    ahead = msgspec.structs.replace(state.players[0], score=5)
    state = msgspec.structs.replace(state, players=(ahead, state.players[1]))
    assert GAME.evaluate(state, 0) > 0 > GAME.evaluate(state, 1)
