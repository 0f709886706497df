"""A private game stays private through its forks and its rematch (issue #18 item 9).

A finished private game was forked by anyone, without a token; the fork was public and its ``forked_from`` named
the private game, whose record then answered to whoever read the lobby. Now only the game's seats (their token)
fork it, its fork and its rematch are private whatever the request says, and nothing public names it.
"""

from __future__ import annotations

import random

import httpx
import pytest

from tests.e2e.support import bearer
from tests.e2e.test_play_over_http import play_to_the_end

pytestmark = pytest.mark.anyio


async def private_game_played(client: httpx.AsyncClient, rng: random.Random) -> tuple[str, list[str]]:
    created = (await client.post("/games", json={"game": "yspahan", "title": "friends only", "seats": 2,
                                                 "private": True})).json()
    game_id, tokens = created["game_id"], []
    for name in ("ana", "ben"):
        r = await client.post(f"/games/{game_id}/seats", json={"name": name, "invite": created["invite_code"]})
        assert r.status_code == 201, r.text
        tokens.append(r.json()["token"])
    await play_to_the_end(client, game_id, tokens, rng)
    return game_id, tokens


async def public_text(client: httpx.AsyncClient) -> str:
    """Everything the lobby lists, every page and filter, with each listed game's spectator view and history."""
    text = []
    for params in ({}, {"status": "open"}, {"status": "playing"}, {"status": "over"}, {"status": "cancelled"}):
        listed = await client.get("/games", params={**params, "limit": 200})
        text.append(listed.text)
        for entry in listed.json():
            text.append((await client.get(f"/games/{entry['game_id']}/view")).text)
            text.append((await client.get(f"/games/{entry['game_id']}/history", params={"limit": 1000})).text)
    return "\n".join(text)


async def test_only_the_seats_of_a_private_game_fork_it_and_the_fork_is_private(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=60) as client:
        source, tokens = await private_game_played(client, random.Random(18))
        version = (await client.get(f"/games/{source}/view")).json()["version"] // 2
        games_before = await public_text(client)
        for headers, code in (({}, "missing_token"), (bearer("not-a-seat-token"), "bad_token")):
            r = await client.post(f"/games/{source}/fork", json={"version": version}, headers=headers)
            assert (r.status_code, r.json()["code"]) == (401, code), r.text
        assert await public_text(client) == games_before  # nothing was created

        r = await client.post(f"/games/{source}/fork", headers=bearer(tokens[1]),
                              json={"version": version, "private": False, "seats": ["cem", "dua"]})
        assert r.status_code == 201, r.text
        forked = r.json()
        fork = forked["game_id"]
        assert forked["invite_code"] and forked["forked_from"] == {"game_id": source, "version": version}
        entry = (await client.get(f"/games/{fork}")).json()
        assert entry["private"] is True and entry["status"] == "playing", entry
        assert [s["name"] for s in entry["seats"]] == ["cem", "dua"]

        # the fork's seats may fork it in turn: a private fork of a private fork
        fork_tokens = [s["token"] for s in forked["seats"]]
        await play_to_the_end(client, fork, fork_tokens, random.Random(19))
        r = await client.post(f"/games/{fork}/fork", json={"version": version + 2})
        assert (r.status_code, r.json()["code"]) == (401, "missing_token"), r.text
        r = await client.post(f"/games/{fork}/fork", json={"version": version + 2}, headers=bearer(fork_tokens[0]))
        assert r.status_code == 201 and (await client.get(f"/games/{r.json()['game_id']}")).json()["private"]

        public = await public_text(client)
        assert source not in public and fork not in public


async def test_the_rematch_of_a_private_game_is_private(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=60) as client:
        source, tokens = await private_game_played(client, random.Random(20))
        answers = [await client.post(f"/games/{source}/seats/{s}/rematch", headers=bearer(tokens[s])) for s in (0, 1)]
        assert all(r.status_code == 201 for r in answers), [r.text for r in answers]
        rematch = answers[0].json()["game_id"]
        entry = (await client.get(f"/games/{rematch}")).json()
        assert entry["private"] is True and entry["rematch_of"] == source and entry["status"] == "playing", entry
        public = await public_text(client)
        assert source not in public and rematch not in public
