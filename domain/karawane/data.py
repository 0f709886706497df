"""1001 Karawane: the board, the hexes, the cards and every printed number, as data.

Sources: the rulebook (shared/rules/1001-karawane.fr.txt, normative) and shared/rules/DATA.md section
"1001 Karawane". The rulebook lost its pictures (the map, the thief cards' split). EVERY value here carries its label:

- ``T``: stated in the French text; ``H``: two outside sources agree; ``M``: one good source;
- ``K-1``, ``K-3``: DATA.md's numbered assumptions (the board, the thief cards); ``DATA``: DATA.md's unnumbered
  decisions (the start player);
- ``K-S<n>``: Souk's own assumptions where DATA.md is silent too (each recorded in docs/rules-decisions.md,
  section "1001 Karawane").

Rules code reads these tables only: a photo of the real board later changes this module and nothing else.
``LABELS`` (at the end) maps each constant's name to its label(s); a test checks that every constant has one.

Cells are numbered ``q + SIZE * r`` over the rhombus's axial coordinates (K-1): cell 7 is (q 7, r 0), the home city.
"""

from __future__ import annotations

# --- players --------------------------------------------------------------------------------------------
MIN_SEATS = 2  # T
MAX_SEATS = 5  # T
TOKENS_PER_SEAT = 4  # T (20 tokens, 4 per player)
HAND_LIMIT = 6  # T: never more than 6 cards in hand
MOVE = 3  # T: up to three hexes a turn
ARTIFACT_PRICE = 5  # T: 5 gold each, at home
REVEALED_CITY_LIMIT = 2  # T: goods traded a turn at face-up desert cities
START_PLAYER = "random"  # DATA: "the one who most recently rode a flying carpet" is drawn at random

# --- the board (K-1) ------------------------------------------------------------------------------------
SIZE = 8  # K-1: an 8x8 hex rhombus, axial q, r in 0..7
KNOWN, RED, BLUE, GREEN = "known", "red", "blue", "green"
SECTORS = (RED, BLUE, GREEN)  # T: three coloured desert sectors (the order of setup's events)


def cell(q: int, r: int) -> int:
    return q + SIZE * r


def coords(c: int) -> tuple[int, int]:
    return c % SIZE, c // SIZE


def _area(q: int, r: int) -> str:  # K-1
    if q >= 4 and r <= 3:
        return KNOWN
    if q <= 3 and r <= 3:
        return RED
    if q >= 4 and r >= 4:
        return BLUE
    return GREEN


CELLS = tuple(range(SIZE * SIZE))
AREA = tuple(_area(*coords(c)) for c in CELLS)  # K-1: the area each cell belongs to
HOME = cell(7, 0)  # K-1: the home city, in the corner of the known sector (T: "la ville dans le coin")
KNOWN_CELLS = tuple(c for c in CELLS if AREA[c] == KNOWN)  # K-1: all plain desert but the home city
DESERT_CELLS = tuple(c for c in CELLS if AREA[c] != KNOWN)
SECTOR_CELLS = {s: tuple(c for c in CELLS if AREA[c] == s) for s in SECTORS}  # K-1: 16 cells each
DIRECTIONS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, 1))  # K-1


def _neighbours(c: int) -> tuple[int, ...]:
    q, r = coords(c)
    return tuple(sorted(cell(q + dq, r + dr) for dq, dr in DIRECTIONS if 0 <= q + dq < SIZE and 0 <= r + dr < SIZE))


NEIGHBOURS = tuple(_neighbours(c) for c in CELLS)  # K-1

# --- the desert hexes (T; colours of the magic places M) --------------------------------------------------
PLAIN, CITY, OASIS, CARAVANSERAI = "desert", "city", "oasis", "caravanserai"
TOWER, MAUSOLEUM, RUINS = "tower", "mausoleum", "ruins"
CARPET, AMULET, LAMP = "carpet", "amulet", "lamp"
ARTIFACTS = (CARPET, AMULET, LAMP)  # T: the three artifacts (flying carpet, amulet, wonderful lamp)
MAGIC = {RED: TOWER, BLUE: MAUSOLEUM, GREEN: RUINS}  # M: each sector's magic place
ARTIFACT_AT = {TOWER: CARPET, MAUSOLEUM: AMULET, RUINS: LAMP}  # T: the tower's carpet, ...
PLAINS_PER_SECTOR = 12  # T
PLACES = (CITY, OASIS, CARAVANSERAI)  # T: besides its magic place, each sector has one of each
KINDS = (PLAIN, CITY, OASIS, CARAVANSERAI, TOWER, MAUSOLEUM, RUINS)


def sector_tiles(sector: str) -> tuple[str, ...]:
    """The 16 hexes of a sector, before the shuffle (T)."""
    return (PLAIN,) * PLAINS_PER_SECTOR + PLACES + (MAGIC[sector],)


# --- cards (T: 110 in all) ------------------------------------------------------------------------------
DRIVERS, WATER, GOODS = "camel_drivers", "water_skins", "goods"
EQUIPMENT = (DRIVERS, WATER, GOODS)  # T: the equipment piles, face up
EQUIPMENT_CARDS = {DRIVERS: 15, WATER: 20, GOODS: 20}  # T
ARTIFACT_CARDS = 5  # T: of each artifact
GOLD_ONES = 24  # T: "1 gold" cards (one chest)
GOLD_THREES = 10  # T: "3 gold" cards (three chests)
THIEF_CARDS = (0, 0, 1, 1, 2, 2)  # K-3: two each of 0, 1, 2 (T: 6 cards showing 0, 1 or 2 thieves)
CARDS = sum(EQUIPMENT_CARDS.values()) + 3 * ARTIFACT_CARDS + GOLD_ONES + GOLD_THREES + len(THIEF_CARDS)  # T: 110

LABELS: dict[str, str] = {
    "MIN_SEATS": "T", "MAX_SEATS": "T", "TOKENS_PER_SEAT": "T", "HAND_LIMIT": "T", "MOVE": "T",
    "ARTIFACT_PRICE": "T", "REVEALED_CITY_LIMIT": "T", "START_PLAYER": "DATA", "SIZE": "K-1", "KNOWN": "K-1",
    "RED": "T", "BLUE": "T", "GREEN": "T", "SECTORS": "T", "CELLS": "K-1", "AREA": "K-1", "HOME": "K-1 (T: a corner)",
    "KNOWN_CELLS": "K-1", "DESERT_CELLS": "K-1", "SECTOR_CELLS": "K-1 (T: 16 each)", "NEIGHBOURS": "K-1", "DIRECTIONS": "K-1",
    "PLAIN": "T", "CITY": "T", "OASIS": "T", "CARAVANSERAI": "T", "TOWER": "T", "MAUSOLEUM": "T", "RUINS": "T",
    "CARPET": "T", "AMULET": "T", "LAMP": "T", "ARTIFACTS": "T", "MAGIC": "M", "ARTIFACT_AT": "T",
    "PLAINS_PER_SECTOR": "T", "PLACES": "T", "KINDS": "T", "DRIVERS": "T", "WATER": "T", "GOODS": "T",
    "EQUIPMENT": "T", "EQUIPMENT_CARDS": "T", "ARTIFACT_CARDS": "T", "GOLD_ONES": "T", "GOLD_THREES": "T",
    "THIEF_CARDS": "K-3", "CARDS": "T",
}  # fmt: skip
