"""Istanbul: Choose & Write: the sheet, the cards and every printed number, as data.

Sources: the rulebook (shared/rules/istanbul-choose-write.fr.txt, normative) and shared/rules/DATA.md section
"Istanbul". The rulebook lost its pictures, so many values are assumptions. EVERY value here carries its label:

- ``T``: stated in the French text; ``H``: two outside sources agree; ``M``: one good source;
- ``L-1``: the sheet layout DATA.md derived from the text's adjacency facts;
- ``A-n``: DATA.md's numbered assumptions; ``A-S<n>``: Souk's own assumptions where DATA.md is silent too
  (each recorded in docs/rules-decisions.md, section "Istanbul: Choose & Write").

Rules code reads these tables only: a photo of the real sheet or cards later changes this module and nothing else.
``LABELS`` (at the end) maps each constant's name to its label(s); a test checks that every constant has one.
"""

from __future__ import annotations

from typing import NamedTuple

# --- players and sheet sides ----------------------------------------------------------------------------
MIN_SEATS = 1  # T
MAX_SEATS = 5  # T
SIDE_SMALL, SIDE_LARGE = "1-3", "4-5"  # T: the sheet is double sided, one side for 1-3 players, one for 4-5


def side(seats: int) -> str:
    return SIDE_SMALL if seats <= 3 else SIDE_LARGE


GOODS = ("fabric", "spice", "fruit", "jewelry")  # M: the four goods types
FILLS = ("lira", "bonus") + GOODS  # "fill 1 box": a lira, a bonus action or a good of choice

# --- locations ------------------------------------------------------------------------------------------
LOCATIONS = ("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "A", "B", "C", "D")  # T
LETTERS = ("A", "B", "C", "D")  # T: the Sultan's palace
NAMES = {  # T (page 10)
    "1": "Warehouse (fabric)", "2": "Gem Merchant", "3": "Great Market", "4": "Post Office",
    "5": "Warehouse (spice)", "6": "Caravanserai", "7": "Coffee Roaster", "8": "Tea House", "9": "Guild Hall",
    "10": "Warehouse (fruit)", "11": "Small Market", "12": "Catacombs", "13": "Abundance", "14": "Black Market",
    "A": "Sultan's Palace A", "B": "Sultan's Palace B", "C": "Sultan's Palace C", "D": "Sultan's Palace D",
}  # fmt: skip

# L-1: the layout of DATA.md (the Tea House's and the Catacombs' adjacency are T; the rest is derived).
GRID = (
    ("1", "2", "3", "3", "4", "5"),
    ("6", "7", "A", "B", "8", "9"),
    ("6", "7", "C", "D", "8", "9"),
    ("10", "11", "12", "12", "13", "14"),
)
CATACOMBS = "12"  # T: adjacent to no location, never reached through 11, 13, C or D


def _adjacency() -> dict[str, frozenset[str]]:
    near: dict[str, set[str]] = {loc: set() for loc in LOCATIONS}
    rows, cols = len(GRID), len(GRID[0])
    for r in range(rows):
        for c in range(cols):
            a = GRID[r][c]
            for dr, dc in ((0, 1), (1, 0)):
                if r + dr < rows and c + dc < cols:
                    b = GRID[r + dr][c + dc]
                    if a != b and CATACOMBS not in (a, b):
                        near[a].add(b)
                        near[b].add(a)
    return {loc: frozenset(n) for loc, n in near.items()}


ADJACENT = _adjacency()  # L-1 (12 removed everywhere by its own rule, T)


def reachable(played: str) -> tuple[str, ...]:
    """The locations a played card lets a seat use: its own and the orthogonally adjacent ones (T). Read from
    ``REACHABLE`` (the legal commands ask it at every answer)."""
    found = REACHABLE.get(played)
    return found if found is not None else _reachable(played)


def _reachable(played: str) -> tuple[str, ...]:
    return tuple(loc for loc in LOCATIONS if loc == played or loc in ADJACENT[played])


REACHABLE = {loc: _reachable(loc) for loc in ADJACENT}


# action icons per location and side. 1-3 side: 4 icons (at 3, 7, 8 one of them is the thick 3-player
# icon), the Catacombs 3 (one thick), the palace letters 2; 4-5 side: 3 icons, the Catacombs 2, the letters 2.
ICONS = {
    SIDE_SMALL: {loc: (2 if loc in LETTERS else 3 if loc == CATACOMBS else 4) for loc in LOCATIONS},
    SIDE_LARGE: {loc: (2 if loc in LETTERS else 2 if loc == CATACOMBS else 3) for loc in LOCATIONS},
}
THICK_ICONS = ("3", "7", "8", "12")  # T: used with 3 players only; crossed at setup with 1 or 2 players

# Upgrades (grey squares): T that they exist only at 1, 5, 8, 10 and 14; two squares each.
UPGRADABLE = ("1", "5", "8", "10", "14")
UPGRADES_PER_LOCATION = 2
WAREHOUSE_GOODS = {"1": "fabric", "5": "spice", "10": "fruit"}  # A-3 (14 is the black market: goods of choice)
WAREHOUSE_YIELD = (2, 3, 4)  # goods per use with 0, 1, 2 upgrades
BLACK_MARKET_YIELD = (1, 2, 3)  # goods of choice per use with 0, 1, 2 upgrades
TEA_HOUSE_YIELD = (4, 6, 8)  # lira per use with 0, 1, 2 upgrades

GEM_MERCHANT_LIRA = 10  # T
GREAT_MARKET_SAME, GREAT_MARKET_LIRA, GREAT_MARKET_FILL = 2, 3, 1  # T
POST_OFFICE_CARDS, POST_OFFICE_LIRA = 1, 1  # T
COFFEE_ROASTER_GOODS = 2  # T
SMALL_MARKET_LIRA = 5  # T
ABUNDANCE_UPGRADES = 2  # T: up to 2, on one or two locations

# --- sections of the sheet ------------------------------------------------------------------------------
LIRA_SECTIONS = (20, 20)  # two sections, filled in order; each completed one gives 1 ruby (T)
GOODS_ROW = 8  # boxes per goods type
GOODS_BONUS_DEPTHS = (5, 6, 7, 8)  # the 4 ruby-bonus columns (T that there are 4)
BONUS_ACTIONS = {SIDE_SMALL: 10, SIDE_LARGE: 11}  # A-7 (empty at start)
THICK_BONUS_SEATS = 4  # T: with 4 players the thick bonus-action box (5 players only) is crossed at setup
AMULET = 10  # T: 10 boxes; the 10th ruby ends the game (multiplayer)
RINGS = 3  # T + DATA.md ("13 rubies" in all): rubies beyond 10 go on the rings; beyond 13 still counted (A-S1)
RUBY_TARGET = 10  # T

# --- cards ----------------------------------------------------------------------------------------------
FOUNTAINS = ("lira", "good", "goods_card", "upgrade")  # T: one reward each


class LocationCard(NamedTuple):
    id: int
    location: str | None  # None: a fountain
    fountain: str | None  # the fountain's reward
    mark: str  # solo placement: "left" or "right"


def _location_cards() -> tuple[LocationCard, ...]:
    cards = []
    for copy in range(2):  # T: each of the 18 locations twice
        for loc in LOCATIONS:
            cards.append((loc, None))
    for reward in FOUNTAINS:  # T: plus 4 fountains
        cards.append((None, reward))
    # Solo marks (DATA.md): alternate by card id.
    return tuple(LocationCard(i, loc, f, "left" if i % 2 == 0 else "right") for i, (loc, f) in enumerate(cards))


LOCATION_CARDS = _location_cards()  # T (40 cards); marks DATA.md "alternate by card id"

# Goods cards: A-8, each pair of different types twice (12) and one double of each type (4). A face is the two
# goods, alphabetical, joined by "/": "fabric/spice".


def face(a: str, b: str) -> str:
    return "/".join(sorted((a, b)))


def face_goods(card: str) -> tuple[str, str]:
    a, b = card.split("/")
    return a, b


def _goods_cards() -> tuple[str, ...]:
    pairs = [face(a, b) for i, a in enumerate(GOODS) for b in GOODS[i + 1:]]
    return tuple(sorted(pairs * 2 + [face(g, g) for g in GOODS]))


GOODS_CARDS = _goods_cards()  # A-8 (T: 16 cards, 2 goods each)


# Ruby cards: A-9. Each shows 4 goods in a column (top first, the top one seen when tucked): 8 show one type four
# times (two per type), 12 show a pair and two singles (each combination once).
def _ruby_cards() -> tuple[tuple[str, str, str, str], ...]:
    cards: list[tuple[str, str, str, str]] = []
    for g in GOODS:
        cards += [(g, g, g, g)] * 2
    for pair in GOODS:
        rest = [g for g in GOODS if g != pair]
        for i, a in enumerate(rest):
            for b in rest[i + 1:]:
                cards.append((pair, pair, a, b))
    return tuple(cards)


RUBY_CARDS = _ruby_cards()  # A-9 (T: 20 cards)
PALACE_CARDS = 2  # T: two Sultan palace cards, letters A-D
RUBY_CARDS_PER_LETTER = {1: 2, 2: 2, 3: 1, 4: 1, 5: 1}  # T: with 1 or 2 players a second one tucked at setup


# Effects are small step lists the rules interpret (domain/istanbul/rules.py: _STEPS):
#   ("lira", n) ("ruby", n) ("goods_card", n) ("guild_card", n) ("goods_choice", n) ("goods_same", n)
#   ("goods_different", n) ("upgrade", n) ("fill", n) ("palace", letters) ("spend_goods_choice", n)
#   ("discard_goods_card", 1) ("card_or_good", 1) ("upgrade_or_fill", 1) ("guild_keep", 2)
Step = tuple


class GuildCard(NamedTuple):
    id: int
    cost: int  # lira; A-10 (T: 1 to 10, printed on the card)
    steps: tuple[Step, ...]  # T (page 12)


GUILD_CARDS = (  # effects T, in the text's order; costs A-10 (about 70% of the effect's value, 1 to 10)
    GuildCard(1, 3, (("goods_choice", 2), ("upgrade", 1))),
    GuildCard(2, 2, (("fill", 2),)),
    GuildCard(3, 3, (("goods_different", 4), ("lira", 1))),
    GuildCard(4, 4, (("goods_choice", 4),)),
    GuildCard(5, 4, (("palace", ("A",)), ("lira", 5))),
    GuildCard(6, 3, (("palace", ("B",)), ("guild_card", 1))),
    GuildCard(7, 3, (("palace", ("C",)), ("goods_choice", 1), ("fill", 1))),
    GuildCard(8, 4, (("palace", ("D",)), ("goods_card", 1), ("upgrade", 1))),
    GuildCard(9, 4, (("goods_card", 2), ("goods_choice", 1), ("fill", 1))),
    GuildCard(10, 5, (("spend_goods_choice", 3), ("ruby", 1))),
    GuildCard(11, 5, (("discard_goods_card", 1), ("spend_goods_choice", 1), ("ruby", 1))),
    GuildCard(12, 4, (("palace", LETTERS), ("goods_card", 1), ("guild_card", 1))),
    GuildCard(13, 6, (("discard_goods_card", 1), ("ruby", 1), ("fill", 1))),
    GuildCard(14, 7, (("ruby", 1),)),
    GuildCard(15, 8, (("ruby", 1), ("goods_choice", 1))),
    GuildCard(16, 10, (("ruby", 1), ("goods_card", 1), ("guild_card", 1))),
)
GUILD = {g.id: g for g in GUILD_CARDS}

CARAVAN_CARDS = {  # T+H: the 8 effects of the text, one card each (ids 1-8 in the text's order)
    1: (("goods_same", 3),),
    2: (("goods_different", 3),),
    3: (("lira", 2), ("goods_card", 1)),
    4: (("guild_keep", 2),),
    5: (("lira", 4),),
    6: (("palace", ("A", "B")), ("goods_card", 1)),
    7: (("palace", ("C", "D")), ("goods_choice", 1)),
    8: (("card_or_good", 1), ("upgrade_or_fill", 1), ("lira", 1)),
}

LOCATION_STEPS = {  # T (page 10); the warehouses', black market's and tea house's numbers read the upgrade tables
    "2": (("spend_lira", GEM_MERCHANT_LIRA), ("ruby", 1)),
    "3": (("spend_same", GREAT_MARKET_SAME), ("lira", GREAT_MARKET_LIRA), ("fill", GREAT_MARKET_FILL)),
    "4": (("goods_card", POST_OFFICE_CARDS), ("lira", POST_OFFICE_LIRA)),
    "7": (("goods_choice", COFFEE_ROASTER_GOODS),),
    "9": (("guild_card", 1),),
    "11": (("discard_goods_card", 1), ("lira", SMALL_MARKET_LIRA)),
    "13": (("upgrade_upto", ABUNDANCE_UPGRADES),),
}

SOLO_CHALLENGES = {  # T: the 14 challenges; the difficulty bands were lost (DATA.md): none reported
    1: "at most 3 upgrades crossed",
    2: "35 lira",
    3: "35 lira + 1 goods-type column completed",
    4: "35 lira + 2 ruby bonuses of the 4 goods columns",
    5: "35 lira + no guild card played",
    6: "2 goods-type columns completed",
    7: "3 ruby bonuses of the 4 goods columns",
    8: "3 ruby bonuses of the 4 goods columns + 1 goods-type column completed",
    9: "every location action crossed",  # A-S3: one action icon crossed at each location
    10: "every location action crossed + 1 goods-type column completed",
    11: "4 guild cards played + 1 ruby bonus of the 4 goods columns",
    12: "no goods card played",
    13: "8 rubies from the Sultan's palace (any letters)",
    14: "5 rubies from a single palace letter + 20 lira",
}
SOLO_COLUMNS = (10, 11, 12)  # T: the table's ruby columns; 12 and more rubies count in column 12 (A-S2)
SOLO_LIRA, SOLO_MAX_UPGRADES, SOLO_PALACE_RUBIES, SOLO_ONE_LETTER, SOLO_ONE_LETTER_LIRA = 35, 3, 8, 5, 20  # T

LABELS: dict[str, str] = {
    "MIN_SEATS": "T", "MAX_SEATS": "T", "GOODS": "M", "FILLS": "A-12", "LOCATIONS": "T", "LETTERS": "T",
    "NAMES": "T", "GRID": "L-1", "ADJACENT": "L-1 (Tea House and Catacombs: T)", "CATACOMBS": "T",
    "REACHABLE": "T (from ADJACENT)",
    "ICONS": "A-2", "THICK_ICONS": "T", "UPGRADABLE": "T", "UPGRADES_PER_LOCATION": "A-3",
    "WAREHOUSE_GOODS": "A-3", "WAREHOUSE_YIELD": "A-3", "BLACK_MARKET_YIELD": "A-3", "TEA_HOUSE_YIELD": "A-4",
    "GEM_MERCHANT_LIRA": "T", "GREAT_MARKET_SAME": "T", "GREAT_MARKET_LIRA": "T", "GREAT_MARKET_FILL": "T",
    "POST_OFFICE_CARDS": "T", "POST_OFFICE_LIRA": "T", "COFFEE_ROASTER_GOODS": "T", "SMALL_MARKET_LIRA": "T",
    "ABUNDANCE_UPGRADES": "T", "LIRA_SECTIONS": "A-6", "GOODS_ROW": "A-5", "GOODS_BONUS_DEPTHS": "A-5",
    "BONUS_ACTIONS": "A-7", "THICK_BONUS_SEATS": "T", "AMULET": "T", "RINGS": "T+DATA.md; A-S1", "RUBY_TARGET": "T",
    "FOUNTAINS": "T", "LOCATION_CARDS": "T; marks DATA.md", "GOODS_CARDS": "A-8", "RUBY_CARDS": "A-9",
    "PALACE_CARDS": "T", "RUBY_CARDS_PER_LETTER": "T", "GUILD_CARDS": "effects T, costs A-10",
    "CARAVAN_CARDS": "T+H", "LOCATION_STEPS": "T", "SOLO_CHALLENGES": "T; A-S3", "SOLO_COLUMNS": "T; A-S2",
    "SOLO_LIRA": "T", "SOLO_MAX_UPGRADES": "T", "SOLO_PALACE_RUBIES": "T", "SOLO_ONE_LETTER": "T",
    "SOLO_ONE_LETTER_LIRA": "T", "SIDE_SMALL": "T", "SIDE_LARGE": "T", "GUILD": "GUILD_CARDS by id",
}  # fmt: skip
