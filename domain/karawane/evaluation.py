"""1001 Karawane for bots: how good a position looks to a seat (``evaluate``) and a world it cannot tell from the
true one (``determinize``). Pure; the kernel's optional hooks of the same names (``services.bots`` uses them).

What a seat does not know (``views``): the kinds of the desert hexes that are neither face up nor looked at by it,
and which equipment cards (camel drivers, water skins, goods) the other hands and the supply's piles hold (only
their counts are public). Everything else it sees, or could have written down from the public history (the thief
cards turned, the gold and artifacts shown).
"""

from __future__ import annotations

import random

import msgspec

from domain.karawane import data
from domain.karawane.bot import distance, target
from domain.karawane.rules import MOVE, Pile, State, complete

replace = msgspec.structs.replace

_EQUIPMENT = ("camel_drivers", "water_skins", "goods")


def goal(state: State, seat: int) -> int:
    """Where the seat should head: home with an artifact or gold in hand, or gold enough at home to buy an
    artifact it lacks; else the artifact seeker's goal in the desert (``bot.target``: a magic place it knows for an
    artifact it lacks, a city it knows with goods in hand, the nearest hex it has not looked at)."""
    me = state.players[seat]
    if me.hand.artifacts or me.hand.gold >= 3 or (me.gold >= data.ARTIFACT_PRICE and not complete(me)):
        return data.HOME
    if me.hand.water_skins <= 1 or me.hand.camel_drivers == 0:  # bot.target would send it home: not at home
        if me.cell != data.HOME:
            return data.HOME
        me = replace(me, hand=replace(me.hand, water_skins=3, camel_drivers=2))
        state = replace(state, players=(*state.players[:seat], me, *state.players[seat + 1:]))
    return target(state, seat)


def evaluate(state: State, seat: int) -> float:
    """Artifacts first (laid out, then in hand), gold, a caravan equipped for the desert (2 camel drivers, 3 water
    skins, 1 goods; counted whole at home once the turn's equipping is past: it equips again there), the danger of
    a caravan short of water or camel drivers away from home, and how far it is from ``goal``. Reads only the
    seat's own hand and what it knows of the desert."""
    if state.winners is not None:
        return 1000.0 if seat in state.winners else -1000.0
    me = state.players[seat]
    hand = me.hand
    value = 60.0 * len(me.artifacts) + 40.0 * len(hand.artifacts) + 3.0 * me.gold + 2.0 * hand.gold
    if me.cell is None:
        return value - 30.0
    if me.cell == data.HOME and state.stage != MOVE:
        value += _FULL
    else:
        value += 2.0 * min(hand.water_skins, 3) + 2.0 * min(hand.camel_drivers, 2) + min(hand.goods, 1)
    if me.cell != data.HOME and (hand.water_skins <= 1 or hand.camel_drivers == 0):
        return value - 30.0 - 2.0 * distance(me.cell, data.HOME)
    return value - 2.0 * distance(me.cell, goal(state, seat)) + 0.1 * len(me.seen)


_FULL = 2.0 * 3 + 2.0 * 2 + 1  # the equipment's value with 3 water skins, 2 camel drivers, 1 goods


def determinize(state: State, seat: int, rng: random.Random) -> State:
    """``state`` with what ``seat`` has not seen drawn again with ``rng``: the kinds of the hexes it does not know,
    within each sector (a hex's back shows its sector), and the equipment cards of the other hands and the supply
    (each hand keeps its count). Built only from what the seat knows: two states it cannot tell apart give the
    same result for the same ``rng``. (The public clues are not used to narrow the draw.)"""
    known = set(state.face_up) | set(state.players[seat].seen)
    kinds = list(state.kinds)
    for sector in data.SECTORS:
        unknown = [t for t in data.SECTOR_CELLS[sector] if t not in known]
        pool = sorted(kinds[t] for t in unknown)
        rng.shuffle(pool)
        for t, k in zip(unknown, pool):
            kinds[t] = k
    supply = state.supply
    cards = sorted(name for name in _EQUIPMENT
                   for _ in range(getattr(supply, name) + sum(getattr(p.hand, name) for i, p in
                                                                enumerate(state.players) if i != seat)))
    rng.shuffle(cards)
    players = list(state.players)
    for i, p in enumerate(players):
        if i == seat:
            continue
        dealt, cards = cards[: p.hand.equipment], cards[p.hand.equipment:]
        players[i] = replace(p, hand=replace(p.hand, **{name: dealt.count(name) for name in _EQUIPMENT}))
    pile = replace(supply, **{name: cards.count(name) for name in _EQUIPMENT})
    assert isinstance(pile, Pile)
    return replace(state, kinds=tuple(kinds), players=tuple(players), supply=pile)
