"""Le marché de Samarkand for bots: how good a position looks to a seat (``evaluate``) and a world it cannot tell
from the true one (``determinize``). Pure; the kernel's optional hooks of the same names (``services.bots``).

What a seat does not know (``views``): the order of the camel and bank piles, the card another seat chose before
the reveal, another seat's stop at the current value before it closes. The other hands, money, camels and goods
bought it could have written down from the public history (every seat starts with the same hand and money, every
card played is revealed, every purchase, fine and dispute is public); in the ``hidden_goods`` variant the settlements
are not, and this draw keeps them as they are (a bot there knows the others' goods: a limitation, said in the
README).
"""

from __future__ import annotations

import random

import msgspec

from domain.samarkand.rules import State, score

replace = msgspec.structs.replace


def evaluate(state: State, seat: int) -> float:
    """The seat's score if the game ended now (``rules.score``: wealth by money, the least-bought type, series,
    the empty slots of its camels), less the best other seat's."""
    if state.scores is not None:
        totals = state.scores
    elif not state.players:
        return 0.0
    else:
        totals = tuple(s.total for s in score(state))
    others = [t for i, t in enumerate(totals) if i != seat]
    return float(totals[seat] - (max(others) if others else 0))


def determinize(state: State, seat: int, rng: random.Random) -> State:
    """``state`` with what ``seat`` has not seen drawn again with ``rng``: the camel and bank piles reshuffled, and
    every other seat's choice not revealed yet (a card chosen face down, a stop at the current value) taken back,
    so that the seat chooses again in the simulation. Built only from what the seat knows: two states it cannot
    tell apart give the same result for the same ``rng``."""
    camels = sorted(state.camel_pile)
    rng.shuffle(camels)
    bank = sorted(state.bank_pile)
    rng.shuffle(bank)
    players = tuple(p if i == seat else replace(p, chosen=None, answered=False, stop=None)
                    if (p.chosen is not None or p.answered) else p
                    for i, p in enumerate(state.players))
    return replace(state, camel_pile=tuple(camels), bank_pile=tuple(bank), players=players)
