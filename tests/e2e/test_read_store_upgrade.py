"""A read store of the layout before partitions (issue #22: marked 4, its keys without a partition's hash tag:
``souk:views:{id}``, ``souk:lobby``...) does not break the services after the upgrade: the projector finds no mark of
this layout and rebuilds every game's read models under its partition's names, drops the old keys, and the lobby,
the game and its views answer as before; the game plays on."""

from __future__ import annotations

import asyncio
import re

import httpx
import pytest
import redis

from services.store import keys
from tests.e2e.support import NO_LIMITS, join_all, serve

pytestmark = pytest.mark.anyio
TAGGED = re.compile(rb"^souk:\{p0\}:(views|history|position|seats|snapshots|undone|presence|lobby)(.*)$")


def to_old_layout(views: redis.Redis) -> int:
    """The read store as the release before partitions left it: each tagged key under its old name, its mark 4."""
    moved = 0
    for key in list(views.scan_iter(match="souk:{p0}:*", count=1000)):
        found = TAGGED.match(key)
        if found:
            views.rename(key, b"souk:" + found.group(1) + found.group(2))
            moved += 1
    views.delete(keys.READ_STORE_MARK)
    views.set("souk:projection:initialised:4", "1")
    return moved


async def test_a_read_store_of_the_layout_before_partitions_is_rebuilt_and_the_game_plays_on(redis_url, views_url,
                                                                                             tmp_path):
    with serve(redis_url, views_url, tmp_path / "first.log", NO_LIMITS) as url:
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            game_id = (await client.post("/games", json={"game": "samarkand", "title": "old", "seats": 3})).json()[
                "game_id"]
            tokens = await join_all(client, game_id, 3)
            for _ in range(100):
                view = await client.get(f"/games/{game_id}/view")
                if view.status_code == 200 and view.json()["status"] == "playing":
                    break
                await asyncio.sleep(0.05)
            before = view.json()["version"]

    views = redis.Redis.from_url(views_url)
    try:
        assert to_old_layout(views) >= 5
        assert views.exists(f"souk:views:{game_id}", "souk:lobby", "souk:lobby:order") == 3
        with serve(redis_url, views_url, tmp_path / "second.log", NO_LIMITS) as url:
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                listed = await client.get("/games")
                for _ in range(100):  # the projector rebuilds as it starts
                    if listed.status_code == 200 and listed.json():
                        break
                    await asyncio.sleep(0.05)
                    listed = await client.get("/games")
                assert [g["game_id"] for g in listed.json()] == [game_id]
                assert (await client.get(f"/games/{game_id}")).json()["status"] == "playing"
                view = await client.get(f"/games/{game_id}/view")
                assert view.status_code == 200 and view.json()["version"] == before
                seat = view.json()["flow"]["awaiting"][0]
                auth = {"Authorization": f"Bearer {tokens[seat]}"}
                legal = (await client.get(f"/games/{game_id}/seats/{seat}/legal", headers=auth)).json()["legal"]
                played = await client.post(f"/games/{game_id}/seats/{seat}/commands", headers=auth,
                                           json={"command_id": "after", "command": legal[0]})
                assert played.status_code == 200 and played.json()["status"] == "accepted", played.text
                for _ in range(100):
                    view = await client.get(f"/games/{game_id}/view")
                    if view.json()["version"] > before:
                        break
                    await asyncio.sleep(0.05)
                assert view.json()["version"] > before
        left = [k for pattern in keys.OLD_READ_MODELS for k in views.scan_iter(match=pattern, count=1000)]
        assert left == [], left
        assert views.exists(keys.READ_STORE_MARK, keys.views(game_id), keys.game_lobby(game_id)) == 3
    finally:
        views.close()
