"""The data module of 1001 Karawane against the rulebook's facts and DATA.md's assumptions (K-1, K-3), and labels."""

from __future__ import annotations

from collections import Counter

from domain.karawane import data
from tests.domain.karawane.support import distance


def test_the_box_holds_110_cards_in_the_texts_counts():
    assert data.CARDS == 110
    assert data.EQUIPMENT_CARDS == {"camel_drivers": 15, "water_skins": 20, "goods": 20}
    assert (data.GOLD_ONES, data.GOLD_THREES, data.ARTIFACT_CARDS, len(data.THIEF_CARDS)) == (24, 10, 5, 6)


def test_k3_the_thief_cards_are_two_each_of_0_1_and_2():
    assert Counter(data.THIEF_CARDS) == {0: 2, 1: 2, 2: 2}


def test_each_sector_has_16_hexes_12_plain_a_city_an_oasis_a_caravanserai_and_its_magic_place():
    for sector, place in (("red", "tower"), ("blue", "mausoleum"), ("green", "ruins")):
        tiles = Counter(data.sector_tiles(sector))
        assert tiles == {"desert": 12, "city": 1, "oasis": 1, "caravanserai": 1, place: 1}
        assert len(data.SECTOR_CELLS[sector]) == 16
    assert data.ARTIFACT_AT == {"tower": "carpet", "mausoleum": "amulet", "ruins": "lamp"}


def test_k1_the_board_is_an_8x8_rhombus_of_four_16_hex_areas_with_home_in_the_known_corner():
    assert len(data.CELLS) == 64 and len(data.DESERT_CELLS) == 48 and len(data.KNOWN_CELLS) == 16
    assert data.HOME == data.cell(7, 0) and data.AREA[data.HOME] == "known"
    assert all(q >= 4 and r <= 3 for q, r in map(data.coords, data.KNOWN_CELLS))
    assert len(data.NEIGHBOURS[data.HOME]) == 3  # a corner (q 7, r 0): (6,0), (6,1), (7,1)


def test_neighbours_are_symmetric_and_axial():
    for c in data.CELLS:
        assert c not in data.NEIGHBOURS[c] and 2 <= len(data.NEIGHBOURS[c]) <= 6
        assert all(c in data.NEIGHBOURS[n] and distance(c, n) == 1 for n in data.NEIGHBOURS[c])


def test_from_the_far_edge_a_caravan_needs_two_turns_to_reach_the_known_sector():
    """The rulebook's example: from the outer row, two waters to reach the known sector (DATA.md K-1)."""
    far = max(data.DESERT_CELLS, key=lambda c: min(distance(c, k) for k in data.KNOWN_CELLS))
    steps = min(distance(far, k) for k in data.KNOWN_CELLS)
    assert 3 < steps <= 2 * data.MOVE


def test_every_constant_of_the_module_carries_a_label():
    constants = [n for n in vars(data) if n.isupper() and n != "LABELS"]
    missing = [n for n in constants if n not in data.LABELS]
    assert not missing, f"constants without a label: {missing}"
    assert all(data.LABELS[n] for n in constants)
