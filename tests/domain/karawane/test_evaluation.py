"""1001 Karawane's bot hooks (domain/karawane/evaluation.py): determinize draws again only what the seat has not
seen; evaluate prefers artifacts and a caravan heading where it should."""

import msgspec

from domain.karawane import GAME, data
from domain.karawane.evaluation import evaluate
from tests.bots.hooks import check_determinize
from tests.bots.support import started


def test_determinize_keeps_what_the_seat_sees_and_draws_the_rest_again():
    def hidden(state, seat):
        known = set(state.face_up) | set(state.players[seat].seen)
        return ([k for t, k in enumerate(state.kinds) if t not in known and data.AREA[t] != data.KNOWN],
                [p.hand for i, p in enumerate(state.players) if i != seat], state.supply)

    check_determinize("karawane", 3, hidden)


def test_an_artifact_laid_out_is_worth_more_than_gold_or_an_artifact_in_hand():
    _, state = started("karawane", 2, seed=1)
    me = state.players[0]
    laid = msgspec.structs.replace(me, artifacts=(data.ARTIFACTS[0],))
    in_hand = msgspec.structs.replace(me, hand=msgspec.structs.replace(me.hand, artifacts=(data.ARTIFACTS[0],)))
    rich = msgspec.structs.replace(me, ones=5)

    def worth(p):
        return evaluate(msgspec.structs.replace(state, players=(p, *state.players[1:])), 0)

    assert worth(laid) > worth(in_hand) > worth(me)
    assert worth(laid) > worth(rich) > worth(me)
    assert GAME.evaluate(state, 0) == evaluate(state, 0)
