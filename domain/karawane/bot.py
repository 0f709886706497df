"""1001 Karawane's own simple bot: a policy that plays the game to its end (random legal play almost never does).

``choose(rng, state, seat, legal)`` heads for artifacts and home: it equips 2 camel drivers, 3 water skins and
1 goods, goes to a magic place it knows for an artifact it lacks (a city with goods in hand, else the nearest hex it
has not looked at), trades and takes what it can, comes home with an artifact or gold, or short of water or camel
drivers, buys artifacts, keeps its caravan supplied; now and then (5%) a legal command at random, tokens included.
It reads only what its seat knows (the hexes it looked at and the face-up ones). The kernel's ``bot_command`` uses
it (benchmarks and tests that play games to the end); ``rng`` is the caller's (no global random).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from contracts.karawane import (
    BuyArtifact,
    EndTurn,
    Equip,
    PlayGenie,
    PlayMap,
    Step,
    StopMoving,
    Supply,
    SwapWith,
    TakeArtifact,
    Trade,
)
from domain.karawane import data, rules


def distance(a: int, b: int) -> int:
    (q1, r1), (q2, r2) = data.coords(a), data.coords(b)
    dq, dr = q1 - q2, r1 - r2
    return (abs(dq) + abs(dr) + abs(dq + dr)) // 2


def target(state: rules.State, seat: int) -> int:
    """Where the artifact seeker heads: home with an artifact or gold in hand (or to buy one), or short of water
    or camel drivers; else a magic place
    it knows for an artifact it lacks, a city it knows with goods in hand, the nearest hex it has not looked at."""
    me = state.players[seat]
    here = me.cell
    assert here is not None
    thirsty = me.hand.water_skins <= 1 or me.hand.camel_drivers == 0
    if me.hand.artifacts or me.hand.gold >= 3 or thirsty or (me.gold >= data.ARTIFACT_PRICE and not rules.complete(me)):
        return data.HOME
    known = set(me.seen) | set(state.face_up)
    where = rules.cell_of(state)
    wanted = [rules.magic_place(a) for a in data.ARTIFACTS if not me.owns(a)]
    if me.hand.goods:
        wanted.append(data.CITY)
    spots = [where[t] for t in known if state.kinds[t] in wanted and where[t] != here]
    if not spots:
        spots = [c for c in data.DESERT_CELLS if state.board[c] not in known]
    if not spots:
        return data.HOME
    return min(spots, key=lambda c: (distance(here, c), c))


def choose(rng: random.Random, state: rules.State, seat: int, legal: Sequence[Any]) -> Any:
    """A policy biased toward artifacts and home: equips 2 camel drivers, 3 water skins, 1 goods, heads for ``target``, trades and takes what it can,
    buys artifacts, keeps its caravan in order when it can; now and then a random legal command (tokens too)."""
    if rng.random() < 0.05:
        return rng.choice(list(legal))
    by_type: dict[type, list[Any]] = {}
    for c in legal:
        by_type.setdefault(type(c), []).append(c)
    if Equip in by_type:
        best = Equip(camel_drivers=2, water_skins=3, goods=1)
        return best if best in legal else rng.choice(by_type[Equip])
    for kind in (TakeArtifact, BuyArtifact):
        if kind in by_type:
            return by_type[kind][0]
    if Trade in by_type:
        return by_type[Trade][-1]
    if Step in by_type:
        me = state.players[seat]
        goal = target(state, seat)
        if me.cell == goal == data.HOME and state.turn is not None and state.turn.path:
            return StopMoving()
        return min(by_type[Step], key=lambda c: (distance(c.to, goal), rng.random()))
    if SwapWith in by_type:
        return rng.choice(by_type[SwapWith])
    if Supply in by_type:
        ok = [c for c in by_type[Supply] if c.water is not None and c.thieves is not None]
        return rng.choice(ok or by_type[Supply])
    if EndTurn in by_type:
        return EndTurn()
    return rng.choice([c for c in legal if not isinstance(c, (PlayMap, PlayGenie))] or list(legal))
