"""1001 Karawane: what each seat (and a spectator) sees, and the history as each may read it.

Public: the board's cells and which hex (by the colour of its back) lies where (a genie's swap is seen by all, the
contents are not), the face-up hexes and their kinds (map tokens), the clues the rules make public when a place is
used, the caravans' cells and the active caravan's path, the thief card, what is laid out at home, how many cards
each hand holds, the gold and artifacts in hands (taken and shown in view of all), the tokens left, the supply's gold
and artifacts, the equipment piles as one count. A seat alone sees: the kinds of the hexes it looked at (wherever a
genie moved them since), and its own hand. The spectator sees only what is public.

History: the deal of the desert (``DesertLaid``) is nobody's to read; a look at a hex (``HexLooked``) only its seat's;
the equipment taken (``Equipped``) only its seat's, the others read the number of cards.
"""

from __future__ import annotations

from typing import Any

import msgspec

from contracts.karawane import (
    ClueView,
    DesertLaid,
    Equipped,
    HandView,
    HexLooked,
    HexView,
    KarawaneView,
    PlayerView,
    SupplyView,
    TurnView,
)
from domain.karawane import data
from domain.karawane.rules import NO_HEX, State, awaiting, cell_of

replace = msgspec.structs.replace


def view(state: State, seat: int | None) -> KarawaneView:
    return _personal(state, seat, _public(state))


def views(state: State) -> dict[int | None, KarawaneView]:
    """Every seat's view, then the spectator's: what they share is built once, the desert's hexes too (as the
    spectator knows them; each seat's differ only at the hexes it looked at)."""
    public = _public(state)
    hexes = _hexes(state, frozenset(state.face_up))
    return {seat: _personal(state, seat, public, hexes) for seat in (*range(state.seats), None)}


def known_hexes(state: State, seat: int | None) -> frozenset[int]:
    """The ids of the hexes whose kind ``seat`` may know: face up, or looked at by it."""
    mine = state.players[seat].seen if seat is not None and state.players else ()
    return frozenset(state.face_up) | frozenset(mine)


def _public(state: State) -> dict[str, Any]:
    where = cell_of(state)
    players = tuple(
        PlayerView(seat=i, cell=p.cell, lost=p.lost, hand=p.hand.size, gold_in_hand=p.hand.gold,
                   artifacts_in_hand=p.hand.artifacts, gold_ones=p.ones, gold_threes=p.threes, gold=p.gold,
                   artifacts=p.artifacts, tokens=p.tokens)
        for i, p in enumerate(state.players)
    )
    clues = tuple(ClueView(seat=c.seat, round=c.round, kind=c.kind, cells=tuple(sorted(where[t] for t in c.tiles)),
                           face_down=c.face_down) for c in state.clues)
    pile = state.supply
    supply = SupplyView(equipment=pile.camel_drivers + pile.water_skins + pile.goods, gold_ones=pile.ones,
                        gold_threes=pile.threes, artifacts=dict(zip(data.ARTIFACTS, pile.artifacts)),
                        thief_cards=len(state.thief_left))
    t = state.turn
    turn = None if t is None else TurnView(seat=t.seat, start=t.start, path=t.path, moved=t.moved, token=t.token,
                                           genie=t.genie, traded=t.traded, desert=t.desert)
    return dict(phase=state.stage, round=state.round, first=state.first, active=state.active, thieves=state.thieves,
                home=data.HOME, known=data.KNOWN_CELLS, clues=clues, players=players, supply=supply, turn=turn,
                awaiting=awaiting(state), ending=state.ending, scores=state.scores, winners=state.winners)


def _hexes(state: State, known: frozenset[int]) -> tuple[HexView, ...]:
    up = frozenset(state.face_up)
    board, kinds, area = state.board, state.kinds, data.AREA  # area[tile]: the hex's back (rules.back)
    out = []
    for c, q, r, sector in _DESERT:
        tile = board[c]
        assert tile != NO_HEX
        out.append(HexView(cell=c, q=q, r=r, sector=sector, back=area[tile], face_up=tile in up,
                           kind=kinds[tile] if tile in known else None))
    return tuple(out)


_DESERT = tuple((c, *data.coords(c), data.AREA[c]) for c in data.DESERT_CELLS)  # each desert cell and where it is
_PLACE = {c: i for i, c in enumerate(data.DESERT_CELLS)}  # a desert cell's place in ``_hexes``


def _looked_at(state: State, seat: int | None, hexes: tuple[HexView, ...]) -> tuple[HexView, ...]:
    """``hexes`` (the spectator's) with the kind of each face-down hex ``seat`` looked at: ``_hexes`` of its own
    ``known_hexes``."""
    mine = known_hexes(state, seat).difference(state.face_up)
    if not mine:
        return hexes
    out, board = list(hexes), state.board
    for tile in mine:
        if tile in board and (i := _PLACE.get(board.index(tile))) is not None:
            out[i] = replace(out[i], kind=state.kinds[tile])
    return tuple(out)


def _personal(state: State, seat: int | None, public: dict[str, Any],
              hexes: tuple[HexView, ...] | None = None) -> KarawaneView:
    """``hexes``: the spectator's (``views``), else this seat's are made here."""
    you = None
    if seat is not None and state.players:
        h = state.players[seat].hand
        you = HandView(camel_drivers=h.camel_drivers, water_skins=h.water_skins, goods=h.goods, gold=h.gold,
                       artifacts=h.artifacts)
    mine = _hexes(state, known_hexes(state, seat)) if hexes is None else _looked_at(state, seat, hexes)
    return KarawaneView(seat=seat, you=you, hexes=mine, **public)


def redact(event: Any, seat: int | None) -> Any:
    kind = type(event)
    if kind is DesertLaid:
        return replace(event, kinds=None)
    if kind is HexLooked:
        return event if seat == event.seat else replace(event, kind=None)
    if kind is Equipped:
        return event if seat == event.seat else replace(event, camel_drivers=None, water_skins=None, goods=None)
    return event
