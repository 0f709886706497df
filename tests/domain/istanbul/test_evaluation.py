"""Istanbul: Choose & Write's bot hooks (domain/istanbul/evaluation.py)."""

import msgspec

from domain.istanbul import GAME, data
from tests.bots.hooks import check_determinize
from tests.bots.support import started


def test_determinize_keeps_what_the_seat_sees_and_draws_the_rest_again():
    def hidden(state, seat):
        return ([(p.hand, p.guild, p.cards) for i, p in enumerate(state.players) if i != seat], state.location_deck,
                state.ruby_deck)

    check_determinize("istanbul", 3, hidden)


def test_no_hand_is_dealt_a_fountain():
    from tests.bots.support import advanced
    import random

    game, state = advanced("istanbul", 4, seed=9, commands=30)
    for k in range(20):
        world = GAME.determinize(state, 0, random.Random(k))
        assert all(data.LOCATION_CARDS[c].fountain is None for p in world.players for c in p.hand)
        assert sorted(world.location_deck + tuple(c for p in world.players[1:] for c in p.hand)) == \
            sorted(state.location_deck + tuple(c for p in state.players[1:] for c in p.hand))


def test_a_ruby_is_worth_more_than_anything_else_on_a_sheet():
    _, state = started("istanbul", 2, seed=1)
    me = state.players[0]
    ruby = msgspec.structs.replace(me, rubies=1)
    assert GAME.evaluate(msgspec.structs.replace(state, players=(ruby, *state.players[1:])), 0) > \
        GAME.evaluate(state, 0) == 0
