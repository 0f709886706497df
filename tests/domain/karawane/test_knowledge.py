"""What each seat knows, over seeded random games (the artifact seeker's, 2 to 5 seats, a bound of 25 rounds): no
seat's view and no history entry it reads tells it the kind of a hex it has not looked at and that is not face up,
nor another seat's equipment; every clue shown is true; every kind shown is the hex's real one."""

from __future__ import annotations

import msgspec
import pytest

from contracts.karawane import DesertLaid, Equipped, HexLooked
from domain.karawane import GAME, rules, views
from tests.domain.karawane.support import random_game

replace = msgspec.structs.replace
encode = msgspec.json.encode


def scrambled(state: rules.State, reader: int | None) -> rules.State:
    """The same game where every hex ``reader`` may not know holds another kind (the unknown kinds rotated) and
    every other seat's equipment is otherwise composed (same number of cards)."""
    known = views.known_hexes(state, reader)
    unknown = [t for t, k in enumerate(state.kinds) if k and t not in known]
    kinds = list(state.kinds)
    for t, k in zip(unknown, [state.kinds[u] for u in unknown[1:] + unknown[:1]]):
        kinds[t] = k
    players = tuple(
        p if i == reader else replace(p, hand=replace(p.hand, camel_drivers=p.hand.goods, goods=p.hand.water_skins,
                                                      water_skins=p.hand.camel_drivers))
        for i, p in enumerate(state.players))
    return replace(state, kinds=tuple(kinds), players=players)


def check_knowledge(state: rules.State) -> None:
    for clue in state.clues:  # every clue is true
        assert any(state.kinds[t] == clue.kind for t in clue.tiles), clue
    for reader in (*range(state.seats), None):
        seen = GAME.view(state, reader)
        known = views.known_hexes(state, reader)
        for h in seen.hexes:
            tile = state.board[h.cell]
            assert (h.kind is not None) == (tile in known)
            assert h.kind is None or h.kind == state.kinds[tile]
        assert encode(seen) == encode(GAME.view(scrambled(state, reader), reader)), f"{reader}'s view leaks"


def check_history(before: rules.State, event, after: rules.State) -> None:
    for reader in (*range(after.seats), None):
        red = GAME.redact(event, reader)
        if isinstance(event, DesertLaid):
            assert red.kinds is None
        kind = getattr(red, "kind", None)
        if kind is not None:  # a kind a reader reads is one it knows once the event is folded
            assert after.board[red.hex] in views.known_hexes(after, reader) and kind == after.kinds[after.board[red.hex]]
        if isinstance(event, HexLooked):
            assert (red.kind is None) == (reader != event.seat)
        if isinstance(event, Equipped) and reader != event.seat:
            assert (red.camel_drivers, red.water_skins, red.goods) == (None, None, None)


@pytest.mark.parametrize("seats,seed", [(2, 1), (3, 2), (4, 3), (5, 4)])
def test_no_view_or_history_tells_a_seat_what_it_has_not_seen_and_every_clue_is_true(seats, seed):
    clues = looks = 0
    for n, (state, seat, command, events) in enumerate(random_game(seats, seed, max_rounds=25)):
        for event in events:
            after = GAME.evolve(state, event)
            check_history(state, event, after)
            state = after
            looks += isinstance(event, HexLooked)
        if n % 4 == 0:
            check_knowledge(state)
        clues = len(state.clues)
    assert clues > 0 and looks > 0  # the property was put to the test
