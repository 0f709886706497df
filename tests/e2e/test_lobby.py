"""The lobby a frontend lists (issue #9 item 6): validated filters, cursor paging, and an index instead of a scan
of every game."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.support import join_all

pytestmark = pytest.mark.anyio


async def listing(client: httpx.AsyncClient, **params) -> list[str]:
    """Every page of a listing, following X-Next-Cursor."""
    ids, cursor = [], None
    for _ in range(50):
        r = await client.get("/games", params={**params, **({"cursor": cursor} if cursor else {})})
        assert r.status_code == 200, r.text
        ids += [g["game_id"] for g in r.json()]
        cursor = r.headers.get("x-next-cursor")
        if cursor is None:
            return ids
    raise AssertionError("the listing never ended")


async def test_the_lobby_pages_with_a_cursor_and_filters_by_an_index(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        created = []
        for i in range(7):
            game, seats = ("yspahan", 2) if i % 2 else ("samarkand", 3)
            created.append((game, (await client.post("/games", json={"game": game, "title": f"g{i}",
                                                                      "seats": seats})).json()["game_id"]))
        playing = [created[1][1], created[2][1]]
        await join_all(client, created[1][1], 2)
        await join_all(client, created[2][1], 3)
        newest_first = [g for _, g in reversed(created)]

        assert await listing(client, limit=3) == newest_first
        assert await listing(client, limit=1) == newest_first
        assert await listing(client, status="playing", limit=1) == [g for g in newest_first if g in playing]
        assert await listing(client, status="open") == [g for g in newest_first if g not in playing]
        assert await listing(client, game="yspahan", limit=2) == [g for name, g in reversed(created) if name == "yspahan"]
        assert await listing(client, status="playing", game="yspahan") == [created[1][1]]
        assert await listing(client, status="over") == []

        for params, code in [({"limit": -1}, "bad_page"), ({"limit": 0}, "bad_page"), ({"limit": 201}, "bad_page"),
                             ({"status": "bogus"}, "bad_filter"), ({"game": "chess"}, "bad_filter"),
                             ({"cursor": "nonsense"}, "bad_page")]:
            r = await client.get("/games", params=params)
            assert r.status_code == 400 and r.json()["code"] == code, (params, r.text)
