"""Indices derived once from ``data``: shops, souks, quarters, the road's distances and facing shops.

Rules work on small integers (shop 0..46, square 0..28, floor 0..5); contracts speak the data's ids.
"""

from __future__ import annotations

from domain.yspahan import data

# --- shops and souks ------------------------------------------------------------------------------------
SOUK_IDS: tuple[str, ...] = tuple(data.souk_id(s) for s in range(len(data.SOUKS)))
SOUK_INDEX: dict[str, int] = {s: i for i, s in enumerate(SOUK_IDS)}
SOUK_QUARTER: tuple[int, ...] = tuple(q for q, _, _ in data.SOUKS)
SOUK_POINTS: tuple[int, ...] = tuple(p for _, _, p in data.SOUKS)

_shops: list[str] = []
_shop_souk: list[int] = []
_souk_shops: list[tuple[int, ...]] = []
for _souk, (_q, _size, _p) in enumerate(data.SOUKS):
    _first = len(_shops)
    for _k in range(1, _size + 1):
        _shops.append(data.shop_id(_souk, _k))
        _shop_souk.append(_souk)
    _souk_shops.append(tuple(range(_first, len(_shops))))

SHOPS: tuple[str, ...] = tuple(_shops)
SHOP_INDEX: dict[str, int] = {s: i for i, s in enumerate(SHOPS)}
SHOP_SOUK: tuple[int, ...] = tuple(_shop_souk)
SOUK_SHOPS: tuple[tuple[int, ...], ...] = tuple(_souk_shops)
QUARTER_SOUKS: dict[int, tuple[int, ...]] = {
    q: tuple(s for s in range(len(data.SOUKS)) if SOUK_QUARTER[s] == q) for q in data.QUARTER_FLOORS
}
NO_CUBES: tuple[int, ...] = (-1,) * len(SHOPS)

FLOOR_INDEX: dict[str, int] = {f: i for i, f in enumerate(data.FLOORS)}

# --- road -----------------------------------------------------------------------------------------------
SQUARES = data.SQUARES
SQUARE_INDEX: dict[str, int] = {sq: i for i, sq in enumerate(SQUARES)}
CENTRE = SQUARE_INDEX[data.CENTRE]


def _place(square: str) -> tuple[str, int]:
    return ("", 0) if square == data.CENTRE else (square[0], int(square[1:]))


def _distance(a: str, b: str) -> int:
    """Length of the only simple path between two squares of the cross (a tree)."""
    (arm_a, i), (arm_b, j) = _place(a), _place(b)
    return abs(i - j) if arm_a == arm_b or not arm_a or not arm_b else i + j


DIST: tuple[tuple[int, ...], ...] = tuple(tuple(_distance(a, b) for b in SQUARES) for a in SQUARES)
FACING: tuple[tuple[int, ...], ...] = tuple(tuple(SHOP_INDEX[s] for s in data.FACING[sq]) for sq in SQUARES)

for _sq, _facing in data.FACING.items():  # the data table must name real squares and shops
    assert _sq in SQUARE_INDEX and all(s in SHOP_INDEX for s in _facing), _sq
assert set(data.FACING) == set(SQUARES)

# --- buildings and cards --------------------------------------------------------------------------------
BUILDING_IDS: tuple[str, ...] = tuple(b for b, _, _ in data.BUILDINGS)
BUILDING_COST: dict[str, tuple[int, int]] = {b: (c, g) for b, c, g in data.BUILDINGS}
CARD_SET = frozenset(data.CARDS)
FULL_DECK: tuple[str, ...] = tuple(c for c in data.CARDS for _ in range(data.COPIES_PER_CARD))
