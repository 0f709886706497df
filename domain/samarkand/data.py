"""Le marché de Samarkand as data: every number of the rulebook and of shared/rules/DATA.md lives here, so a
real value replaces an assumption without touching the rules code. (H) rulebook, (M) reviews, (L) assumption.
"""

from __future__ import annotations

# --- players and rounds (H) ------------------------------------------------------------------------------
MIN_SEATS = 3
MAX_SEATS = 5
ROUNDS = 10
START_MONEY = {3: 25, 4: 15, 5: 15}
BANK_SELLS = frozenset({3})  # seat counts where the bank sells a fourth type of goods

# --- goods (M: the publisher's five types; L: the values of each type's ten cards) ------------------------
GOODS = ("carpets", "spices", "fruits", "jewels", "clothes")
GOODS_FR = {
    "carpets": "tapis",
    "spices": "épices",
    "fruits": "fruits",
    "jewels": "bijoux",
    "clothes": "vêtements de soie",
}
GOODS_VALUES = (1, 1, 1, 2, 2, 3, 3, 4, 5, 7)  # ASSUMPTION (L), DATA.md

# --- camels (L: 4 copies each of capacities 2, 3, 4, 5) --------------------------------------------------
CAMELS = (2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5)

# --- the countdown (H: « Le tour de jeu s'arrête lorsque le décompte arrive à 0 »; DATA.md: 10 down to 1) ---
COUNTDOWN_FROM = 10
COUNTDOWN_TO = 1  # the last value at which a seat may stop; when it closes the countdown reaches 0: the round ends
STOP_FINE = 1  # paid to the bank for a stop one cannot pay (capped at the money one has)
COUNTDOWN_INTERVAL_MS = (200, 60_000)  # accepted range of the real-time option


def dispute_payment(price: int) -> int:
    """Each disputant pays half the announced value, rounded up (H: 7 -> 4)."""
    return (price + 1) // 2


# --- scoring (H) ------------------------------------------------------------------------------------------
WEALTH_POINTS = {3: (3, 1), 4: (5, 3, 1), 5: (5, 3, 1)}  # by position, ties sharing one (competition ranking)
SERIES_POINTS = {2: 1, 3: 2, 4: 4, 5: 8}  # cards of one value, any types
SERIES_MAX_POINTS = 16  # 6 cards or more
EMPTY_SLOT_PENALTY = 2  # points lost per unoccupied camel slot


def series_points(count: int) -> int:
    if count >= 6:
        return SERIES_MAX_POINTS
    return SERIES_POINTS.get(count, 0)
