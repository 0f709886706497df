"""The supervisor's move on the cross road: exactly the dice value, adjusted by gold and the Hammam.

The road is a tree and a move never enters a square twice, so a move's path is the only simple path
between its two ends: its length is their distance. Adjusting by k squares costs k gold, the first 3 free
with the Hammam.
"""

from __future__ import annotations

from domain.yspahan import board, data


def free_steps(buildings: tuple[str, ...]) -> int:
    return data.HAMMAM_FREE_STEPS if "hammam" in buildings else 0


def move_cost(start: int, target: int, value: int, free: int) -> int:
    """Gold to pay for the supervisor to end its move on ``target``."""
    return max(0, abs(board.DIST[start][target] - value) - free)


def destinations(start: int, value: int, gold: int, free: int) -> list[tuple[int, int]]:
    """Every (square, cost) the mover can afford, road order."""
    budget = gold + free
    out = []
    for target, d in enumerate(board.DIST[start]):
        adjust = abs(d - value)
        if adjust <= budget:
            out.append((target, max(0, adjust - free)))
    return out
