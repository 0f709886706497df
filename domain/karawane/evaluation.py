"""1001 Karawane for bots: how good a position looks to a seat (``evaluate``) and a world it cannot tell from the
true one (``determinize``). Pure; the kernel's optional hooks of the same names (``services.bots`` uses them).

What a seat does not know (``views``): the kinds of the desert hexes that are neither face up nor looked at by it,
and which equipment cards (camel drivers, water skins, goods) the other hands and the supply's piles hold (only
their counts are public). Everything else it sees, or could have written down from the public history (the thief
cards turned, the gold and artifacts shown).
"""

from __future__ import annotations

import random
from typing import Any

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


def from_view(view: Any, seat: int, seats: int, options: Any, rng: random.Random) -> State:
    """A state consistent with everything ``view`` (``seat``'s ``KarawaneView``) shows, what it does not show
    drawn with ``rng`` as ``determinize`` draws it: the kinds of the hexes the seat does not know, within each
    sector; the equipment cards of the other hands (each its count) and the supply's piles; the thief cards not
    turned yet (the view counts them). A hex's identity is its back's sector and, where no genie moved it, its own
    cell (any labelling within a sector is the same to the rules). The hexes drawn honour every public clue (one of
the hexes a place's clue names is of its kind). The turn's flags the view does not spell out
    are read from what it shows: the hexes crossed from the path, the stage a genie returns to, a place used this
    turn from the turn's clues, home passed through from the path. Not shown: the hexes another seat looked at
    (none). ``view(state, seat) == view``. A remote bot (``services.client.remote_bot``) holds nothing else."""
    from domain.karawane.rules import (
        AFTER,
        DESERT,
        HOME,
        MOVE,
        MOVING,
        NO_HEX,
        Clue,
        Hand,
        Seat,
        Turn,
        is_desert,
    )

    board = [NO_HEX] * len(data.CELLS)
    free = {s: list(data.SECTOR_CELLS[s]) for s in data.SECTORS}
    moved = []
    for h in view.hexes:  # a hex on its own cell keeps its id; the ones a genie moved get the others, in order
        if h.back == data.AREA[h.cell]:
            board[h.cell] = h.cell
            free[h.back].remove(h.cell)
        else:
            moved.append(h)
    for h in moved:
        board[h.cell] = free[h.back].pop(0)
    kinds = [""] * len(data.CELLS)
    known: set[int] = set()
    for h in view.hexes:
        if h.kind is not None:
            kinds[board[h.cell]] = h.kind
            known.add(board[h.cell])
    clues = tuple(Clue(seat=c.seat, round=c.round, kind=c.kind, tiles=tuple(sorted(board[x] for x in c.cells)),
                       face_down=c.face_down) for c in view.clues)
    kinds = _drawn_kinds(kinds, known, clues, rng)
    face_up = tuple(sorted(board[h.cell] for h in view.hexes if h.face_up))
    mine = tuple(sorted(board[h.cell] for h in view.hexes if h.kind is not None and not h.face_up))

    you = view.you
    cards = sorted(name for name in _EQUIPMENT for _ in range(data.EQUIPMENT_CARDS[name] - getattr(you, name)))
    rng.shuffle(cards)
    players = []
    for p in view.players:
        if p.seat == seat:
            hand = Hand(camel_drivers=you.camel_drivers, water_skins=you.water_skins, goods=you.goods, gold=you.gold,
                        artifacts=tuple(you.artifacts))
        else:
            n = p.hand - p.gold_in_hand - len(p.artifacts_in_hand)
            dealt, cards = cards[:n], cards[n:]
            hand = Hand(**{name: dealt.count(name) for name in _EQUIPMENT}, gold=p.gold_in_hand,
                        artifacts=tuple(p.artifacts_in_hand))
        players.append(Seat(cell=p.cell, lost=p.lost, hand=hand, ones=p.gold_ones, threes=p.gold_threes,
                            artifacts=tuple(p.artifacts), tokens=p.tokens, seen=mine if p.seat == seat else ()))
    supply = view.supply
    assert len(cards) == supply.equipment, "the equipment counts do not add up"
    pile = Pile(**{name: cards.count(name) for name in _EQUIPMENT}, ones=supply.gold_ones, threes=supply.gold_threes,
                artifacts=tuple(supply.artifacts.get(a, 0) for a in data.ARTIFACTS))
    thieves = list(data.THIEF_CARDS)
    if view.thieves is not None:
        thieves.remove(view.thieves)
    rng.shuffle(thieves)
    thief_left = tuple(sorted(thieves[: supply.thief_cards]))

    turn = None
    t = view.turn
    if t is not None:
        crossed: list[int] = []
        for c in t.path:
            if is_desert(c) and board[c] not in crossed:
                crossed.append(board[c])
        home = data.HOME in t.path
        mover = players[t.seat]
        if t.moved:
            back = DESERT if t.desert else HOME if mover.cell == data.HOME or home else AFTER
        else:
            back = MOVING if t.path else MOVE
        used = [c for c in view.clues if c.seat == t.seat and c.round == view.round]
        supplied = sum(c.kind in (data.OASIS, data.CARAVANSERAI) for c in used)
        adventures = t.traded > 0 or any(c.kind not in (data.OASIS, data.CARAVANSERAI) for c in used) or (
            supplied > (2 if t.moved and not t.desert and (t.start is not None and is_desert(t.start) or any(
                is_desert(c) for c in t.path)) else 0))
        turn = Turn(seat=t.seat, start=t.start, from_desert=t.start is not None and is_desert(t.start),
                    path=tuple(t.path), crossed=tuple(crossed), moved=t.moved, token=t.token, genie=t.genie,
                    back=back, traded=t.traded, desert=t.desert, adventures=adventures, home=home)
    return State(seats=seats, options=options, stage=view.phase, board=tuple(board), kinds=tuple(kinds),
                 face_up=face_up, players=tuple(players), supply=pile, thief_left=thief_left, thieves=view.thieves,
                 first=view.first, active=view.active, round=view.round, turn=turn, clues=clues, ending=view.ending,
                 scores=view.scores, winners=view.winners)


def _drawn_kinds(kinds: list[str], known: set[int], clues: tuple, rng: random.Random,
                 steps: int = 20_000) -> list[str]:
    """``kinds`` with the hexes not in ``known`` drawn within their sector, so that every public clue holds (one of
    its hexes is of its kind): first a hex for each clue no known hex answers, by a search with random choices
    (the clues that leave the fewest hexes first), then the rest at random. When the search gives up after
    ``steps`` tries (never seen), the clues are left out of the draw."""
    pools: dict[str, list[str]] = {}
    for sector in data.SECTORS:
        pool = list(data.sector_tiles(sector))
        for t in data.SECTOR_CELLS[sector]:
            if t in known:
                pool.remove(kinds[t])
        pools[sector] = sorted(pool)
    open_ = [c for c in clues if not any(t in known and kinds[t] == c.kind for t in c.tiles)]
    unknown = [[t for t in c.tiles if t not in known] for c in open_]
    order = sorted(range(len(open_)), key=lambda i: (len(unknown[i]), rng.random()))
    chosen: dict[int, str] = {}
    budget = [steps]

    def search(k: int) -> bool:
        if k == len(order):
            return True
        budget[0] -= 1
        if budget[0] < 0:
            return False
        i = order[k]
        kind = open_[i].kind
        if any(chosen.get(t) == kind for t in unknown[i]):
            return search(k + 1)
        candidates = [t for t in unknown[i] if t not in chosen and kind in pools[data.AREA[t]]]
        rng.shuffle(candidates)
        for t in candidates:
            chosen[t] = kind
            pools[data.AREA[t]].remove(kind)
            if search(k + 1):
                return True
            del chosen[t]
            pools[data.AREA[t]].append(kind)
        return False

    if not search(0):  # the draw as determinize makes it
        for t, kind in chosen.items():
            pools[data.AREA[t]].append(kind)
        chosen = {}
    kinds = list(kinds)
    for t, kind in chosen.items():
        kinds[t] = kind
    for sector in data.SECTORS:
        pool = sorted(pools[sector])
        rng.shuffle(pool)
        for t, kind in zip([t for t in data.SECTOR_CELLS[sector] if t not in known and t not in chosen], pool):
            kinds[t] = kind
    return kinds
