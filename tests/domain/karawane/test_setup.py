"""Setup: the desert laid face down sector by sector, the cards as supply, 4 tokens each, every caravan at home, a
first player by chance, the first thief card turned."""

from __future__ import annotations

from collections import Counter

import pytest

from contracts.karawane import DesertLaid, Equip, FirstPlayerChosen, ThiefTurned, TurnStarted
from domain.chance import Chance
from domain.karawane import GAME, data, rules


def set_up(seats: int, seed: int) -> tuple[rules.State, list]:
    events = GAME.setup(seats, GAME.options_type(), Chance(seed.to_bytes(8, "big"), 0))
    return rules.fold(GAME.initial_state(seats, GAME.options_type()), events), events


@pytest.mark.parametrize("seats", [2, 3, 4, 5])
def test_setup_lays_each_sector_in_its_own_area_and_puts_every_caravan_at_home(seats):
    state, events = set_up(seats, 3)
    laid = [e for e in events if isinstance(e, DesertLaid)]
    assert [e.sector for e in laid] == ["red", "blue", "green"]
    for e in laid:
        assert Counter(e.kinds) == Counter(data.sector_tiles(e.sector))
        assert all(rules.back(state.board[c]) == e.sector for c in data.SECTOR_CELLS[e.sector])
    assert all(p.cell == data.HOME and p.tokens == 4 and p.hand.size == 0 for p in state.players)
    assert state.face_up == () and all(p.seen == () for p in state.players)
    assert state.supply == rules.Pile()
    assert [type(e) for e in events[3:]] == [FirstPlayerChosen, ThiefTurned, TurnStarted]
    assert state.round == 1 and state.active == state.first and state.stage == rules.EQUIP
    assert state.thieves in (0, 1, 2) and len(state.thief_left) == 5


def test_the_sectors_are_shuffled_and_nobody_reads_the_deal():
    deals = {set_up(3, seed)[1][0].kinds for seed in range(6)}
    assert len(deals) == 6
    [laid, *_] = set_up(3, 1)[1]
    assert all(GAME.redact(laid, reader).kinds is None for reader in (0, 1, 2, None))


def test_the_first_player_is_drawn_by_chance():
    assert {set_up(4, seed)[0].first for seed in range(40)} == {0, 1, 2, 3}


def test_the_first_player_may_equip_up_to_six_cards_at_home():
    state, _ = set_up(2, 5)
    legal = GAME.legal_commands(state, state.first)
    assert len(legal) == 84 and Equip() in legal and Equip(camel_drivers=6) in legal
    assert all(c.camel_drivers + c.water_skins + c.goods <= 6 for c in legal)
    assert GAME.legal_commands(state, 1 - state.first) == []
