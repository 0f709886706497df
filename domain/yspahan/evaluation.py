"""Yspahan for bots: how good a position looks to a seat (``evaluate``) and a world it cannot tell from the true
one (``determinize``). Pure; the kernel's optional hooks of the same names (``services.bots``).

What a seat does not know (``views``): the other hands (their sizes are public) and the draw pile's order.
Everything else is public, the discard pile included.
"""

from __future__ import annotations

import random
from typing import Any

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


_STEPS = {"setup": "setup", "supply": "supply", "action": "action", "place_cubes": "place", "move_supervisor": "move",
          "ship_answer": "ship", "ship_order": "ship", "build": "build", "end_of_turn": "after", "day_over": "day_over",
          "over": "over"}  # the view's phase (``rules.phase``) back to the state's step


def from_view(view: Any, seat: int, seats: int, options: Any, rng: random.Random) -> State:
    """A state consistent with everything ``view`` (``seat``'s ``YspahanView``) shows, what it does not show drawn
    with ``rng`` as ``determinize`` draws it: the cards neither in the seat's hand nor in the discard pile dealt to
    the other hands (each its size) and the draw pile (its size), in a random order. ``view(state, seat) == view``.
    A remote bot (``services.client.remote_bot``) holds nothing else."""
    from domain.yspahan import board, data
    from domain.yspahan.state import PlayerState

    hand = tuple(view.hand or ())
    pool = list(board.FULL_DECK)
    for card in (*hand, *view.discard):
        pool.remove(card)
    pool.sort()
    rng.shuffle(pool)
    players = []
    for p in view.players:
        if p.seat == seat:
            cards = hand
        else:
            cards, pool = tuple(sorted(pool[: p.hand_size])), pool[p.hand_size:]
        players.append(PlayerState(gold=p.gold, camels=p.camels, reserve=p.reserve, score=p.score,
                                   buildings=tuple(p.buildings), hand=cards))
    assert len(pool) == view.deck_size, "the view's card counts do not add up"
    shops = list(board.NO_CUBES)
    for shop in view.shops:
        shops[board.SHOP_INDEX[shop.shop]] = shop.seat
    step = _STEPS[view.phase]
    order = tuple(view.order)
    turn_seat = view.turn_seat if view.turn_seat is not None else (view.awaiting[0] if view.awaiting else None)
    turn = order.index(turn_seat) if turn_seat is not None and turn_seat in order else 0
    pending = view.pending
    return State(
        seats=seats, options=options, players=tuple(players), gold_supply=view.gold_supply,
        camel_supply=view.camel_supply, deck=tuple(pool), discard=tuple(view.discard), shops=tuple(shops),
        caravan=tuple(view.caravan), supervisor=board.SQUARE_INDEX[view.supervisor], week=view.week, day=view.day,
        order=order, turn=turn, step=step, tower=tuple((f.value, f.white, f.yellow) for f in view.tower),
        built=view.built_this_turn,
        quarter=data.FLOORS.index(pending.quarter) if pending.quarter is not None else 0,
        cubes_left=pending.cubes_left, move_value=pending.move_value,
        ship_pending=tuple(board.SHOP_INDEX[s] for s in pending.shops_to_ship),
        ship_shop=board.SHOP_INDEX[pending.shipping] if pending.shipping is not None else -1)
