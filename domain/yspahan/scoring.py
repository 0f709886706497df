"""Scoring: complete souks at a week end, the caravan (full, or at a week end), buildings, entry points."""

from __future__ import annotations

from contracts.yspahan import SoukCompleted
from domain.yspahan import board, data
from domain.yspahan.state import State, caravan_width


def souk_owner(shops: tuple[int, ...], souk: int) -> int:
    """The seat with cubes in the souk, or -1 (the souk rules allow a single owner per souk)."""
    for shop in board.SOUK_SHOPS[souk]:
        if shops[shop] >= 0:
            return shops[shop]
    return -1


def complete_souks(state: State) -> tuple[SoukCompleted, ...]:
    """Every souk with a cube in each shop, with its owner's points (plus the Bazaar bonus)."""
    out = []
    shops = state.shops
    for souk, souk_shops in enumerate(board.SOUK_SHOPS):
        owner = shops[souk_shops[0]]
        if owner < 0 or any(shops[s] != owner for s in souk_shops):
            continue
        points = board.SOUK_POINTS[souk]
        if "bazaar" in state.players[owner].buildings:
            points += data.BAZAAR_BONUS
        out.append(SoukCompleted(souk=board.SOUK_IDS[souk], seat=owner, points=points))
    return tuple(out)


def souk_points(state: State, completed: tuple[SoukCompleted, ...]) -> tuple[int, ...]:
    points = [0] * state.seats
    for c in completed:
        points[c.seat] += c.points
    return tuple(points)


def caravan_points(state: State) -> tuple[int, ...]:
    """Each seat: its cubes in the caravan times the highest row (1 bottom .. 3 top) holding one of them."""
    width = caravan_width(state.seats, state.options)
    count = [0] * state.seats
    top = [0] * state.seats
    for slot, seat in enumerate(state.caravan):
        count[seat] += 1
        top[seat] = max(top[seat], slot // width + 1)
    return tuple(c * t for c, t in zip(count, top, strict=True))


def entry_points(state: State) -> int:
    """Points for the cube entering the caravan's next free camel."""
    return data.ENTRY_POINTS[len(state.caravan) // caravan_width(state.seats, state.options)]


def building_points(already_built: int) -> int:
    return data.BUILDING_POINTS[already_built]
