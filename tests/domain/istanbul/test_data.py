"""The data module of Istanbul: Choose & Write against the facts of the rulebook and DATA.md (counts, adjacency,
labels)."""

from __future__ import annotations

from collections import Counter

from domain.istanbul import data

L1_ADJACENCY = {  # DATA.md L-1, as printed
    "1": "2 6", "2": "1 3 7", "3": "2 4 A B", "4": "3 5 8", "5": "4 9", "6": "1 7 10", "7": "2 6 A C 11",
    "8": "4 9 B D 13", "9": "5 8 14", "10": "6 11", "11": "7 10", "12": "", "13": "8 14", "14": "9 13",
    "A": "3 7 B C", "B": "3 8 A D", "C": "7 A D", "D": "8 B C",
}  # fmt: skip


def test_the_decks_have_the_rulebooks_counts():
    assert len(data.LOCATION_CARDS) == 40
    assert len(data.GUILD_CARDS) == 16
    assert len(data.GOODS_CARDS) == 16
    assert len(data.CARAVAN_CARDS) == 8
    assert len(data.RUBY_CARDS) == 20
    assert data.PALACE_CARDS == 2


def test_each_location_is_twice_in_the_location_deck_plus_four_fountains():
    counts = Counter(c.location for c in data.LOCATION_CARDS)
    assert counts.pop(None) == 4
    assert counts == {loc: 2 for loc in data.LOCATIONS}
    assert sorted(c.fountain for c in data.LOCATION_CARDS if c.fountain) == sorted(data.FOUNTAINS)
    assert [c.id for c in data.LOCATION_CARDS] == list(range(40))


def test_every_location_card_has_a_solo_mark_alternating_by_id():
    assert all(c.mark == ("left" if c.id % 2 == 0 else "right") for c in data.LOCATION_CARDS)


def test_the_tea_house_is_adjacent_to_exactly_4_9_13_b_and_d():
    assert data.ADJACENT["8"] == {"4", "9", "13", "B", "D"}
    assert set(data.reachable("8")) == {"8", "4", "9", "13", "B", "D"}  # the text's example


def test_the_catacombs_are_adjacent_to_no_location_and_reached_only_by_their_own_card():
    assert data.ADJACENT["12"] == frozenset()
    assert all("12" not in data.reachable(loc) for loc in ("11", "13", "C", "D"))
    assert data.reachable("12") == ("12",)


def test_adjacency_is_symmetric_and_is_dataset_l1():
    for a, near in data.ADJACENT.items():
        assert all(a in data.ADJACENT[b] for b in near)
    assert {k: set(v) for k, v in data.ADJACENT.items()} == {k: set(v.split()) for k, v in L1_ADJACENCY.items()}


def test_guild_costs_are_between_1_and_10_lira():
    assert all(1 <= g.cost <= 10 for g in data.GUILD_CARDS)
    assert [g.id for g in data.GUILD_CARDS] == list(range(1, 17))


def test_goods_cards_show_two_goods_each_pair_twice_and_each_double_once():
    counts = Counter(data.GOODS_CARDS)
    assert all(counts[data.face(g, g)] == 1 for g in data.GOODS)
    assert sum(1 for f, n in counts.items() if n == 2) == 6


def test_ruby_cards_show_four_goods_and_every_combination_once():
    assert all(len(card) == 4 and set(card) <= set(data.GOODS) for card in data.RUBY_CARDS)
    assert sum(1 for c in data.RUBY_CARDS if len(set(c)) == 1) == 8
    mixed = [c for c in data.RUBY_CARDS if len(set(c)) == 3]
    assert len(mixed) == len(set(mixed)) == 12


def test_upgrades_exist_only_at_1_5_8_10_and_14():
    assert data.UPGRADABLE == ("1", "5", "8", "10", "14")
    tables = (data.WAREHOUSE_YIELD, data.BLACK_MARKET_YIELD, data.TEA_HOUSE_YIELD)
    assert all(len(t) == data.UPGRADES_PER_LOCATION + 1 for t in tables)


def test_the_sheet_sides_and_the_thick_icons():
    assert data.side(1) == data.side(3) == "1-3" and data.side(4) == data.side(5) == "4-5"
    assert data.THICK_ICONS == ("3", "7", "8", "12")
    assert data.BONUS_ACTIONS["4-5"] == data.BONUS_ACTIONS["1-3"] + 1


def test_every_constant_of_the_module_carries_a_label():
    constants = [n for n in vars(data) if n.isupper() and n not in ("LABELS",)]
    missing = [n for n in constants if n not in data.LABELS]
    assert not missing, f"constants without a label: {missing}"
    assert all(data.LABELS[n] for n in constants)
