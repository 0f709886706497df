"""What a lobby needs (issue #9 item 6): leave a seat before the start, the creator cancels an open game, a
private game joined by invite code and never listed, and a rematch with the same players."""

from __future__ import annotations

import asyncio
import random

import httpx
import pytest

from tests.e2e.support import join_all
from tests.e2e.test_play_over_http import play_to_the_end

pytestmark = pytest.mark.anyio


async def test_a_seat_is_given_back_before_the_start_and_its_token_stops_working(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_id = (await client.post("/games", json={"game": "yspahan", "title": "leave", "seats": 2})).json()["game_id"]
        ali = (await client.post(f"/games/{game_id}/seats", json={"name": "Ali"})).json()
        auth = {"Authorization": f"Bearer {ali['token']}"}
        r = await client.delete(f"/games/{game_id}/seats/0", headers=auth)
        assert r.status_code == 200, r.text
        assert (await client.get(f"/games/{game_id}")).json()["seats"][0]["name"] is None
        assert (await client.get(f"/games/{game_id}/seats/0/view", headers=auth)).status_code == 401
        tokens = await join_all(client, game_id, 2)  # the seat is taken again; the game starts
        assert (await client.get(f"/games/{game_id}")).json()["status"] == "playing"
        # after the start, leaving is resigning (issue #19): the other seat is the only one left, the game ends
        r = await client.delete(f"/games/{game_id}/seats/0", headers={"Authorization": f"Bearer {tokens[0]}"})
        assert r.status_code == 200, r.text
        for _ in range(100):
            game = (await client.get(f"/games/{game_id}")).json()
            if game["status"] == "over":
                break
            await asyncio.sleep(0.05)
        assert game["status"] == "over"


async def test_the_creator_cancels_an_open_game_and_nobody_else_can(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        created = (await client.post("/games", json={"game": "samarkand", "title": "c", "seats": 3})).json()
        game_id, creator = created["game_id"], created["creator_token"]
        assert (await client.delete(f"/games/{game_id}")).status_code == 401
        r = await client.delete(f"/games/{game_id}", headers={"Authorization": "Bearer not-the-creator"})
        assert r.status_code == 401 and r.json()["code"] == "bad_token"
        r = await client.delete(f"/games/{game_id}", headers={"Authorization": f"Bearer {creator}"})
        assert r.status_code == 200, r.text
        assert (await client.get(f"/games/{game_id}")).json()["status"] == "cancelled"
        r = await client.post(f"/games/{game_id}/seats", json={"name": "late"})
        assert r.status_code == 409 and r.json()["code"] == "game_cancelled"
        listed = [g["game_id"] for g in (await client.get("/games", params={"status": "cancelled"})).json()]
        assert game_id in listed and game_id not in [
            g["game_id"] for g in (await client.get("/games", params={"status": "open"})).json()]


async def test_a_private_game_is_joined_by_invite_code_only_and_never_listed(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        created = (await client.post("/games", json={"game": "yspahan", "title": "friends", "seats": 2,
                                                     "private": True})).json()
        game_id, invite = created["game_id"], created["invite_code"]
        assert invite
        r = await client.post(f"/games/{game_id}/seats", json={"name": "stranger"})
        assert r.status_code == 422 and r.json()["code"] == "bad_invite"
        r = await client.post(f"/games/{game_id}/seats", json={"name": "friend", "invite": "wrong"})
        assert r.json()["code"] == "bad_invite"
        for name in ("a", "b"):
            r = await client.post(f"/games/{game_id}/seats", json={"name": name, "invite": invite})
            assert r.status_code == 201, r.text
        assert game_id not in [g["game_id"] for g in (await client.get("/games")).json()]
        entry = (await client.get(f"/games/{game_id}")).json()
        assert entry["private"] is True and entry["status"] == "playing"
        history = (await client.get(f"/games/{game_id}/history")).json()["entries"]
        assert history[0]["event"]["invite_hash"] == "" and history[0]["event"]["creator_hash"] == ""


async def test_the_players_of_a_finished_game_meet_again_in_one_rematch(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=60) as client:
        game_id = (await client.post("/games", json={"game": "yspahan", "title": "again", "seats": 2})).json()["game_id"]
        tokens = await join_all(client, game_id, 2)
        r = await client.post(f"/games/{game_id}/seats/0/rematch", headers={"Authorization": f"Bearer {tokens[0]}"})
        assert r.status_code == 409 and r.json()["code"] == "game_not_over"
        await play_to_the_end(client, game_id, tokens, random.Random(3))
        answers = [await client.post(f"/games/{game_id}/seats/{s}/rematch", params={"entropy": f"{s}e" * 32},
                                     headers={"Authorization": f"Bearer {tokens[s]}"}) for s in (1, 0, 1)]
        assert all(r.status_code == 201 for r in answers), [r.text for r in answers]
        one, zero, again = (r.json() for r in answers)
        assert one == again and one["game_id"] == zero["game_id"] and (one["seat"], zero["seat"]) == (1, 0)
        entry = (await client.get(f"/games/{one['game_id']}")).json()
        assert entry["rematch_of"] == game_id and entry["status"] == "playing"
        assert [s["name"] for s in entry["seats"]] == ["player0", "player1"]
        history = (await client.get(f"/games/{one['game_id']}/history")).json()["entries"]
        assert [h["event"]["entropy"] for h in history if h["type"] == "table.SeatJoined"] == ["1e" * 32, "0e" * 32]
        view = await client.get(f"/games/{one['game_id']}/seats/0/view",
                                headers={"Authorization": f"Bearer {zero['token']}"})
        assert view.status_code == 200
