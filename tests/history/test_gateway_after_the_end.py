"""What the gateway serves of a finished game once the storage has shrunk it (issue #9 item 11): its history after
the history read model expired (derived from the game stream, the same entries for every audience), and an
archived game answered 410 ``archived`` (naming its record) rather than 404."""

from __future__ import annotations

import pytest
from litestar.testing import AsyncTestClient

from services.gateway import create_app
from services.history.archive import archive
from services.runtime.config import Settings
from services.store import keys

pytestmark = pytest.mark.anyio


def app_on(redis_url: str):
    return create_app(Settings(redis_url=redis_url, views_redis_url=redis_url.rsplit("/", 1)[0] + "/1",
                               rate_per_client=0, rate_per_token=0, open_games_per_client=0))


async def pages(client, game_id: str) -> dict:
    """The spectator's whole history (the seats' are derived the same way: tests/services/test_storage.py)."""
    out = {}
    for who, path in [("spectator", f"/games/{game_id}/history")]:
        entries, after = [], 0
        while True:
            r = await client.get(path, params={"after": after, "limit": 200})
            assert r.status_code == 200, (path, r.text)
            page = r.json()
            entries += page["entries"]
            if page["next_after"] >= page["version"] or not page["entries"]:
                break
            after = page["next_after"]
        out[who] = entries
    return out


async def test_a_finished_games_history_is_served_the_same_once_its_read_model_expired(stores, finished, redis_url):
    events, views = stores
    game_id = finished[0]
    async with AsyncTestClient(app_on(redis_url)) as client:
        before = await pages(client, game_id)
        assert before["spectator"] and all(before.values())
        assert await views.ttl(keys.history(game_id)) > 0  # a cache once the game is over
        await views.delete(keys.history(game_id))  # what its expiry does
        after = await pages(client, game_id)
    assert after == before


async def test_an_archived_game_answers_410_archived_naming_its_record(stores, finished, redis_url, tmp_path):
    events, views = stores
    report = await archive(events, views, 0, tmp_path, now=None)
    assert set(finished) <= set(report.archived)
    game_id = finished[0]
    async with AsyncTestClient(app_on(redis_url)) as client:
        token = {"Authorization": "Bearer " + "0" * 64}  # a seat's routes check that a token is sent first
        for path in (f"/games/{game_id}", f"/games/{game_id}/view", f"/games/{game_id}/history",
                     f"/games/{game_id}/seats/0/view", f"/games/{game_id}/audit", f"/games/{game_id}/record"):
            r = await client.get(path, headers=token)
            assert r.status_code == 410, (path, r.status_code, r.text)
            assert r.json()["code"] == "archived" and f"{game_id}.souk.json" in r.json()["message"], r.text
        r = await client.post(f"/games/{game_id}/seats/0/commands", json={"command_id": "late", "command": {}},
                              headers=token)
        assert r.status_code == 410 and r.json()["code"] == "archived", r.text
        r = await client.get("/games/no-such-game")
        assert r.status_code == 404 and r.json()["code"] == "game_not_found"
