"""Losing the read store takes nothing away that answers depend on (issue #8 items 5 and 10): seat tokens are
checked against the events, a resent command gets its first answer, new commands are played, and the projector
rebuilds the views by itself."""

from __future__ import annotations

import asyncio

import httpx
import pytest
import redis

from tests.e2e.support import join_all

pytestmark = pytest.mark.anyio


@pytest.fixture
def souk_env() -> dict[str, str]:
    return {"SOUK_READ_STORE_CHECK_S": "4", "SOUK_RATE_PER_CLIENT": "0", "SOUK_RATE_PER_TOKEN": "0"}  # the gateway's own fallback is tested before the rebuild comes


async def test_after_the_read_store_is_lost_answers_stay_true_and_the_views_come_back(souk_url, redis_url):
    views = redis.Redis.from_url(redis_url.rsplit("/", 1)[0] + "/1")
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_id = (await client.post("/games", json={"game": "samarkand", "title": "lost", "seats": 3})).json()["game_id"]
        tokens = await join_all(client, game_id, 3)
        auth = {"Authorization": f"Bearer {tokens[0]}"}
        legal = (await client.get(f"/games/{game_id}/seats/0/legal", headers=auth)).json()["legal"]
        auth1 = {"Authorization": f"Bearer {tokens[1]}"}
        legal1 = (await client.get(f"/games/{game_id}/seats/1/legal", headers=auth1)).json()["legal"]
        url = f"/games/{game_id}/seats/0/commands"
        first = await client.post(url, json={"command_id": "before", "command": legal[0]}, headers=auth)
        assert first.status_code == 200, first.text

        views.flushdb()  # the read store is lost

        again = await client.post(url, json={"command_id": "before", "command": legal[0]}, headers=auth)
        assert again.status_code == 200 and again.json() == first.json()  # not 404, not 500: the first answer
        bad = await client.post(url, json={"command_id": "x", "command": legal[0]},
                                headers={"Authorization": f"Bearer {tokens[1]}"})
        assert bad.status_code == 401 and bad.json()["code"] == "bad_token"  # tokens still checked
        seat1 = await client.post(f"/games/{game_id}/seats/1/commands", headers=auth1,
                                  json={"command_id": "during", "command": legal1[0]})
        assert seat1.status_code == 200, seat1.text  # played, whatever the read store holds
        view = await client.get(f"/games/{game_id}/view")
        assert view.status_code in (200, 503)  # not projected yet is not "no such game"
        if view.status_code == 503:
            assert view.json()["code"] == "not_projected"
        assert (await client.get("/games/nope/view")).status_code == 404

        for _ in range(200):  # the projector rebuilds the read store by itself
            view = await client.get(f"/games/{game_id}/view")
            if view.status_code == 200:
                break
            await asyncio.sleep(0.05)
        assert view.status_code == 200 and view.json()["version"] >= first.json()["version"]
    views.close()
