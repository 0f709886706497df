"""Yspahan's data tables: tower, souks, road, caravan, buildings, cards, and the game's numbers.

Sources: the rulebook (shared/rules/yspahan.fr.txt) and shared/rules/DATA.md section "Yspahan". Rules code reads
these tables only, so a corrected value changes here and nowhere else.
"""

from __future__ import annotations

# --- tower ----------------------------------------------------------------------------------------------
# Floors bottom to top. Floors 1-4 are the quarters of the same names.
FLOORS = ("camels", "bag", "barrel", "chest", "vase", "gold")
CAMELS_FLOOR, GOLD_FLOOR = 0, 5
QUARTER_FLOORS = (1, 2, 3, 4)

WHITE_DICE = {2: 8, 3: 9, 4: 9}  # by number of players (2 players: summary text)
MAX_YELLOW_DICE = 3
YELLOW_DIE_COST = 1  # gold

# --- souks ----------------------------------------------------------------------------------------------
# (quarter floor, shops, points). Within a quarter every souk has a different size, so "BAG-3" names one.
SOUKS: tuple[tuple[int, int, int], ...] = (
    (1, 3, 3), (1, 4, 4), (1, 5, 6), (1, 6, 8),
    (2, 2, 3), (2, 3, 4), (2, 4, 6), (2, 5, 8),
    (3, 2, 4), (3, 3, 6), (3, 4, 8),
    (4, 1, 4), (4, 2, 6), (4, 3, 12),
)  # fmt: skip
# Colours known from the rulebook's worked examples (Coffre: yellow, blue, pink); others unknown.
SOUK_COLOURS = {"CHEST-2": "blue", "CHEST-3": "yellow", "CHEST-4": "pink"}


def souk_id(souk: int) -> str:
    quarter, size, _ = SOUKS[souk]
    return f"{FLOORS[quarter].upper()}-{size}"


def shop_id(souk: int, k: int) -> str:
    """The ``k``-th shop (1-based) of a souk, as DATA.md names them: ``BAG-3.1``."""
    return f"{souk_id(souk)}.{k}"


# --- the supervisor's road: a cross of 29 squares ------------------------------------------------------
CENTRE = "C"
ARMS = (("W", 10), ("E", 7), ("N", 4), ("S", 7))  # dead-end arms, numbered outward from C
SQUARES: tuple[str, ...] = (CENTRE,) + tuple(f"{arm}{i}" for arm, length in ARMS for i in range(1, length + 1))
FACING: dict[str, tuple[str, ...]] = {
    "C": (),
    "W1": ("BAG-3.1",), "W2": ("CHEST-2.1",), "W3": ("BAG-3.2",), "W4": ("CHEST-2.2",), "W5": ("BAG-5.1",),
    "W6": ("CHEST-3.1",), "W7": ("BAG-5.2",), "W8": ("CHEST-3.2",), "W9": ("BAG-6.1",), "W10": ("CHEST-3.3",),
    "E1": ("BARREL-2.1", "VASE-1.1"), "E2": ("BARREL-2.2",), "E3": ("VASE-3.1",), "E4": ("BARREL-4.1",),
    "E5": ("VASE-3.2",), "E6": ("BARREL-4.2",), "E7": ("VASE-3.3",),
    "N1": ("VASE-1.1",), "N2": ("CHEST-4.1",), "N3": ("VASE-2.1",), "N4": ("CHEST-4.2",),
    "S1": ("BAG-3.1", "BARREL-2.1"), "S2": ("BAG-3.3",), "S3": ("BARREL-3.1",), "S4": ("BAG-4.1",),
    "S5": ("BARREL-5.1",), "S6": ("BAG-4.2",), "S7": ("BARREL-5.2",),
}  # fmt: skip
HAMMAM_FREE_STEPS = 3

# --- caravan --------------------------------------------------------------------------------------------
CARAVAN_ROWS = 3
CARAVAN_WIDTH = {3: 3, 4: 4}  # 2 players: Options.caravan_width_2p
ENTRY_POINTS = (2, 1, 0)  # by row, bottom first

# --- buildings ------------------------------------------------------------------------------------------
# (id, camels, gold), in the order of the player board.
BUILDINGS: tuple[tuple[str, int, int], ...] = (
    ("pen", 2, 0),  # Enclos: +1 camel when taking camels from the tower
    ("stall", 2, 2),  # Echoppe: +2 gold when taking gold from the tower
    ("hammam", 2, 2),  # adjust the supervisor by up to 3 squares for free
    ("caravanserai", 3, 3),  # draw a card for each of one's goods sent to the caravan
    ("bazaar", 4, 4),  # +2 points per complete souk at a week end
    ("crane", 4, 4),  # Palan: +1 cube when filling shops from the tower
)
BUILDING_POINTS = (0, 0, 5, 5, 5, 10)  # for the 1st .. 6th building a player builds
PEN_BONUS, STALL_BONUS, CRANE_BONUS, BAZAAR_BONUS = 1, 2, 1, 2

# --- cards ----------------------------------------------------------------------------------------------
CARDS = (
    "take_camels",
    "place_cube",
    "sell_camels",
    "build_gold_only",
    "exchange",
    "take_gold",
    "caravan_cube",
    "sell_gold",
    "build_camels_only",
)
COPIES_PER_CARD = 2
BUILD_CARDS = ("build_gold_only", "build_camels_only")
TAKE_CARD_AMOUNT = 3  # take_camels, take_gold
SELL_CAMELS_MAX, SELL_CAMEL_POINTS = 4, 2
SELL_GOLD_MAX, SELL_GOLD_POINTS = 10, 1

# --- calendar and start ---------------------------------------------------------------------------------
WEEKS = 3
DAYS_PER_WEEK = 7
START_GOLD = 2
