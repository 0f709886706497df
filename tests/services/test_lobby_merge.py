"""The lobby's listing merges every partition's index (services/gateway/lobby.py): with four partitions its pages are
those of one index, newest first and, among games created at the same instant, by id descending, as ZREVRANGEBYSCORE
orders them; many games of one instant (more than a read takes) page through without a gap or a repeat."""

from __future__ import annotations

import random

import pytest

from services.gateway import lobby
from services.store import keys

pytestmark = pytest.mark.anyio


async def pages(views, limit: int, status: str | None = None) -> list[list[str]]:
    """Every page of a listing, each from the cursor the one before ends at (as GET /games's X-Next-Cursor)."""
    out, top, after = [], "+inf", None
    for _ in range(500):
        found = await lobby.listed(views, status, None, top, after, limit)
        page = found[:limit]
        out.append([g.decode() for g, _ in page])
        if len(found) <= limit:
            return out
        top, after = repr(page[-1][1]), page[-1][0].decode()
    raise AssertionError("the listing never ended")


async def listed_with(views, partitions: int, games: dict[str, tuple[float, str]]) -> dict:
    keys.use(partitions)
    await views.flushdb()
    for game_id, (created, status) in games.items():
        p = keys.partition(game_id)
        await views.zadd(keys.lobby_index(p), {game_id: created})
        await views.zadd(keys.lobby_index(p, status=status), {game_id: created})
    return {(limit, status): await pages(views, limit, status) for limit in (1, 3, 7, 100)
            for status in (None, "open")}


async def test_four_partitions_list_the_games_one_index_lists_in_its_order_and_pages(redis):
    rng = random.Random(7)
    instants = [1_700_000_000.0 + i * 0.25 for i in range(6)]
    games = {f"{rng.getrandbits(48):012x}": (rng.choice(instants), rng.choice(["open", "playing"]))
             for _ in range(80)}
    crowded = 1_700_000_100.0  # 30 games of one instant: more than a read of limit + 16 for the small limits
    games.update({f"c{n:02d}": (crowded, "open") for n in range(30)})

    one = await listed_with(redis, 1, games)
    four = await listed_with(redis, 4, games)
    assert len({keys.partition(g) for g in games}) == 4
    for (limit, status), got in four.items():
        expected = sorted((g for g, (_, s) in games.items() if status is None or s == status),
                          key=lambda g: (games[g][0], g.encode()), reverse=True)
        assert [g for page in got for g in page] == expected, (limit, status)
        assert all(len(page) == limit for page in got[:-1]) and 0 < len(got[-1]) <= limit
        assert got == one[(limit, status)], (limit, status)
