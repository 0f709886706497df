"""Fair chance over HTTP (issue #10): a seed needs ``unfair``, which the lobby and every view show; each seat adds its
entropy when it joins, published in the history and mixed into the game's chance at the start."""

from __future__ import annotations

import httpx
import pytest

from services.client.sdk import SoukClient
from tests.e2e.support import bearer

pytestmark = pytest.mark.anyio


async def test_a_seed_without_unfair_is_refused_saying_what_to_add_and_with_it_the_game_shows_unfair(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        body = {"game": "yspahan", "title": "chosen", "seats": 2, "seed": "5eed" * 16}
        r = await client.post("/games", json=body)
        assert r.status_code == 422 and r.json()["code"] == "seed_needs_unfair", r.text
        assert '"unfair": true' in r.json()["message"]
        assert [g for g in (await client.get("/games")).json() if g["title"] == "chosen"] == []
        r = await client.post("/games", json={**body, "unfair": True})
        assert r.status_code == 201, r.text
        game_id = r.json()["game_id"]
        assert (await client.get(f"/games/{game_id}")).json()["unfair"] is True
        seat = (await client.post(f"/games/{game_id}/seats", json={"name": "a"})).json()
        await client.post(f"/games/{game_id}/seats", json={"name": "b"})
        view = (await client.get(f"/games/{game_id}/seats/0/view", params={"min_version": 4},
                                 headers=bearer(seat["token"]))).json()
        assert view["unfair"] is True and (await client.get(f"/games/{game_id}/view")).json()["unfair"] is True
        fair = (await client.post("/games", json={"game": "yspahan", "title": "fair", "seats": 2})).json()
        assert (await client.get(f"/games/{fair['game_id']}")).json()["unfair"] is False


async def test_each_seats_entropy_is_published_when_it_joins_and_the_start_commits_to_the_mix(souk_url):
    async with SoukClient(souk_url) as souk:
        created = await souk.create("samarkand", "fair", 3)
        given = ["a1" * 32, None, ""]  # given, drawn by the SDK, none
        seats = [await souk.join(created.game_id, f"p{i}", entropy=e) for i, e in enumerate(given)]
        entries = [e async for e in souk.entries(created.game_id)]
        joined = [e.event for e in entries if e.type == "table.SeatJoined"]
        assert joined[0].entropy == "a1" * 32 and len(joined[1].entropy) == 64 and joined[2].entropy == ""
        [started] = [e.event for e in entries if e.type == "table.GameStarted"]
        assert started.chance_hash and len(started.chance_hash) == 64
        async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
            bad = await client.post(f"/games/{(await souk.create('yspahan', 'x', 2)).game_id}/seats",
                                    json={"name": "z", "entropy": "not hex"})
            assert bad.status_code == 422 and bad.json()["code"] == "bad_entropy"
        assert len(seats) == 3  # the mix is checked from the revealed seed at the end: tests/history/test_record.py
