"""Yspahan for bots: how good a position looks to a seat (``evaluate``) and a world it cannot tell from the true
one (``determinize``). Pure; the kernel's optional hooks of the same names (``services.bots``).

What a seat does not know (``views``): the other hands (their sizes are public) and the draw pile's order.
Everything else is public, the discard pile included.
"""

from __future__ import annotations

import random

import msgspec

from domain.yspahan.state import State

replace = msgspec.structs.replace


def evaluate(state: State, seat: int) -> float:
    """Points first, then what makes points later (buildings, cubes in shops and in the caravan, gold, camels,
    cards in hand), less the best other seat's (all of it is public but the cards, counted by number)."""
    shops = [0] * state.seats
    for owner in state.shops:
        if owner >= 0:
            shops[owner] += 1
    caravan = [0] * state.seats
    for owner in state.caravan:
        caravan[owner] += 1

    def worth(i: int) -> float:
        p = state.players[i]
        return (p.score + 3.0 * len(p.buildings) + 0.7 * shops[i] + 1.0 * caravan[i] + 0.4 * p.gold
                + 0.6 * p.camels + 0.8 * len(p.hand))

    others = [worth(i) for i in range(state.seats) if i != seat]
    return worth(seat) - (max(others) if others else 0.0)


def determinize(state: State, seat: int, rng: random.Random) -> State:
    """``state`` with what ``seat`` has not seen drawn again with ``rng``: the other hands dealt again (each keeps
    its size) from their cards and the draw pile's, the rest the draw pile in a new order. Built only from what the
    seat knows: two states it cannot tell apart give the same result for the same ``rng``."""
    others = [i for i in range(state.seats) if i != seat]
    pool = sorted([*state.deck, *(c for i in others for c in state.players[i].hand)])
    rng.shuffle(pool)
    players = list(state.players)
    for i in others:
        n = len(players[i].hand)
        players[i] = replace(players[i], hand=tuple(sorted(pool[:n])))
        pool = pool[n:]
    return replace(state, players=tuple(players), deck=tuple(pool))
