"""Where a player may put a cube: one cube per shop, never in a souk another player has started, and in a
quarter, finish a started souk before starting another."""

from __future__ import annotations

from domain.yspahan import board


def open_shops(shops: tuple[int, ...], seat: int, quarter: int) -> tuple[int, ...]:
    """The shops of ``quarter`` open to ``seat``: the empty shops of its unfinished souks there, or, when it
    has none, every shop of the quarter's empty souks."""
    unfinished: list[int] = []
    free: list[int] = []
    for souk in board.QUARTER_SOUKS[quarter]:
        owner = -1
        empty = []
        for shop in board.SOUK_SHOPS[souk]:
            if shops[shop] < 0:
                empty.append(shop)
            else:
                owner = shops[shop]
        if owner < 0:
            free.extend(empty)
        elif owner == seat and empty:
            unfinished.extend(empty)
    return tuple(unfinished) if unfinished else tuple(free)


def has_open_shop(shops: tuple[int, ...], seat: int, quarter: int) -> bool:
    return bool(open_shops(shops, seat, quarter))


def refusal(shops: tuple[int, ...], seat: int, shop: int) -> str | None:
    """Why ``seat`` may not put a cube on ``shop`` (a RuleViolation code), or None."""
    if shops[shop] >= 0:
        return "shop_taken"
    souk = board.SOUK_SHOPS[board.SHOP_SOUK[shop]]
    owner = next((shops[s] for s in souk if shops[s] >= 0), -1)
    if owner >= 0 and owner != seat:
        return "souk_taken"
    if owner < 0 and shop not in open_shops(shops, seat, board.SOUK_QUARTER[board.SHOP_SOUK[shop]]):
        return "finish_your_souk"
    return None
