"""Seats the server's bots play from the start, over HTTP against real Redis (issue #19; README, Bots):
``POST /games/{id}/bots`` (the SDK's ``fill_bots``) takes free seats of an open game, the game starts when the
table is full, and the clock worker of `souk serve` plays those seats with their strategy. A two-seat game played
to the end by one person against a bot, a game of bots only that ends by itself, the refusals, and the records
of both verify. One `souk serve` for the module."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator

import httpx
import pytest

from services.client import SoukClient, SoukError
from tests.e2e.support import FAST_CLOCK, bearer, serve_on_databases

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def souk_url(redis_server_url: str, tmp_path_factory) -> Iterator[str]:
    """Databases 4 (events) and 5 (views) of the test Redis: the other tests flush database 0 as they go."""
    with serve_on_databases(redis_server_url, 4, 5, tmp_path_factory.mktemp("bots"), FAST_CLOCK) as url:
        yield url


@pytest.fixture
async def client(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as http:
        yield http


async def create(client: httpx.AsyncClient, game: str = "yspahan", seats: int = 2, **body) -> dict:
    r = await client.post("/games", json={"game": game, "title": "bots", "seats": seats, **body})
    assert r.status_code == 201, r.text
    return r.json()


async def history(client: httpx.AsyncClient, game_id: str) -> list[dict]:
    entries, after = [], 0
    while True:
        page = (await client.get(f"/games/{game_id}/history", params={"after": after, "limit": 500})).json()
        entries += page["entries"]
        if not page["entries"]:
            return entries
        after = page["next_after"]


async def verified(client: httpx.AsyncClient, game_id: str) -> None:
    r = await client.get(f"/games/{game_id}/record")
    assert r.status_code == 200, r.text
    verdict = (await client.post("/verify", content=r.content)).json()
    assert verdict["ok"] is True, verdict


async def test_a_person_plays_a_two_seat_game_to_the_end_against_a_bot_the_server_seated(souk_url, client):
    rng = random.Random(19)
    async with SoukClient(souk_url) as souk:
        created = await souk.create("yspahan", "against a bot", 2)
        seat = await souk.join(created.game_id, "Ali")
        lobby = (await client.get(f"/games/{created.game_id}")).json()
        assert lobby["status"] == "open" and lobby["seats"][1] == {"seat": 1, "name": None, "bot": None}
        seated = await souk.fill_bots(created.game_id, strategy="greedy")
        assert seated.seats == (1,) and seated.strategy == "greedy" and seated.game_id == created.game_id
        lobby = (await client.get(f"/games/{created.game_id}")).json()
        assert lobby["status"] == "playing"
        assert [(s["name"], s["bot"]) for s in lobby["seats"]] == [("Ali", None), ("bot 2", "greedy")]
        view = await seat.view()
        assert view.seats[1].bot == "greedy" and view.clock is not None and view.clock.seats[1].bot
        # the bot never opens a socket nor sends a request, yet it is at the table: connected, in views and lobby
        assert [p.connected for p in view.presence] == [True, True] and view.presence[1].since == 0
        lobby = (await client.get(f"/games/{created.game_id}")).json()
        assert [p["connected"] for p in lobby["presence"]] == [True, True]  # Ali: his request for the view
        listed = (await client.get("/games", params={"status": "playing", "game": "yspahan"})).json()
        assert [[p["connected"] for p in g["presence"]] for g in listed if g["game_id"] == created.game_id] == [
            [True, True]]
        spectated = (await client.get(f"/games/{created.game_id}/view")).json()
        assert spectated["presence"][1] == {"seat": 1, "connected": True, "since": 0.0}
        async for view in seat.follow():
            if view.status == "over":
                break
            if seat.seat in view.flow.awaiting and view.legal:
                try:
                    await seat.send(rng.choice(view.legal))
                except SoukError as exc:
                    if exc.code != "stale":
                        raise
        assert view.status == "over"
    entries = await history(client, created.game_id)
    types = [e["type"] for e in entries]
    assert types.count("table.BotSeated") == 1 and "table.GameEnded" in types
    assert [e["event"] for e in entries if e["type"] == "table.BotSeated"] == [
        {"type": "table.BotSeated", "seat": 1, "name": "bot 2", "strategy": "greedy"}]
    moved = [e["event"] for e in entries if e["type"] == "table.BotMoved"]
    assert moved and all(m == {"type": "table.BotMoved", "seat": 1, "strategy": "greedy"} for m in moved)
    # every decision of seat 1 was the bot's (sent for no seat), none came with a token of seat 1
    assert not [e for e in entries if e["type"].startswith("yspahan.") and e["seat"] == 1]
    await verified(client, created.game_id)
    # the rematch seats the same bot again: the person's call alone starts it
    r = await client.post(f"/games/{created.game_id}/seats/0/rematch", headers=bearer(seat.token))
    assert r.status_code == 201, r.text
    again = await client.post(f"/games/{created.game_id}/seats/0/rematch", headers=bearer(seat.token))
    assert again.json() == r.json()
    deadline = time.monotonic() + 10
    while (rematch := (await client.get(f"/games/{r.json()['game_id']}")).json())["status"] != "playing":
        assert time.monotonic() < deadline, rematch  # the read store may lag the engine's answer a moment
        await asyncio.sleep(0.1)
    assert rematch["rematch_of"] == created.game_id
    assert [(s["name"], s["bot"]) for s in rematch["seats"]] == [("Ali", None), ("bot 2", "greedy")]


async def test_a_game_of_bots_only_ends_by_itself(client):
    game_id = (await create(client, "yspahan", 2))["game_id"]
    r = await client.post(f"/games/{game_id}/bots", json={"strategy": "greedy"})
    assert r.status_code == 201, r.text
    assert r.json()["seats"] == [0, 1]
    deadline = time.monotonic() + 120
    while (view := (await client.get(f"/games/{game_id}/view")).json())["status"] != "over":
        assert time.monotonic() < deadline, view["version"]
        await asyncio.sleep(0.25)
    assert view["result"]["winners"]
    await verified(client, game_id)


async def test_the_takeover_default_plays_when_no_strategy_is_named_and_a_resend_answers_the_same(client):
    game_id = (await create(client, "yspahan", 3))["game_id"]
    body = {"seats": [2], "request_id": "bots-request-0123456789"}
    first = await client.post(f"/games/{game_id}/bots", json=body)
    assert first.status_code == 201, first.text
    assert first.json() == {"game_id": game_id, "version": first.json()["version"], "seats": [2],
                            "strategy": "greedy"}
    again = await client.post(f"/games/{game_id}/bots", json=body)
    assert again.status_code == 201 and again.json() == first.json()
    lobby = (await client.get(f"/games/{game_id}")).json()
    assert [s["bot"] for s in lobby["seats"]] == [None, None, "greedy"] and lobby["status"] == "open"


async def test_bots_are_refused_with_stable_codes_and_change_nothing(client):
    game_id = (await create(client, "yspahan", 3))["game_id"]
    r = await client.post(f"/games/{game_id}/seats", json={"name": "Ali", "seat": 0})
    token = r.json()["token"]
    version = (await client.get(f"/games/{game_id}/view")).json()["version"]
    for body, status, code in [
        ({"seats": [0]}, 409, "seat_taken"),
        ({"seats": [3]}, 422, "no_such_seat"),
        ({"seats": [1, 1]}, 422, "bad_seats"),
        ({"seats": []}, 422, "bad_seats"),
        ({"strategy": "clever"}, 422, "unknown_strategy"),
        ({"seats": [-1]}, 400, "bad_request"),
        ({"seats": "all"}, 400, "bad_request"),
        ({"colour": "red"}, 400, "bad_request"),
        ({"request_id": "short"}, 400, "bad_request_id"),
    ]:
        r = await client.post(f"/games/{game_id}/bots", json=body)
        assert (r.status_code, r.json()["code"]) == (status, code), (body, r.text)
    missing = await client.post("/games/nosuchgame/bots", json={})
    assert (missing.status_code, missing.json()["code"]) == (404, "game_not_found")
    assert (await client.get(f"/games/{game_id}/view")).json()["version"] == version  # nothing changed
    assert (await client.post(f"/games/{game_id}/bots", json={})).status_code == 201  # seats 1 and 2: it starts
    r = await client.post(f"/games/{game_id}/bots", json={})
    assert (r.status_code, r.json()["code"]) == (409, "game_started")
    # the bots' seats have no token: nobody sends their commands
    r = await client.get(f"/games/{game_id}/seats/1/view", headers=bearer(token))
    assert r.status_code == 401


async def test_a_private_game_takes_bots_with_its_invite_only(client):
    created = await create(client, "yspahan", 2, private=True)
    game_id, invite = created["game_id"], created["invite_code"]
    r = await client.post(f"/games/{game_id}/bots", json={"seats": [1]})
    assert (r.status_code, r.json()["code"]) == (422, "bad_invite")
    r = await client.post(f"/games/{game_id}/bots", json={"seats": [1], "invite": "not-the-code"})
    assert (r.status_code, r.json()["code"]) == (422, "bad_invite")
    r = await client.post(f"/games/{game_id}/bots", json={"seats": [1], "invite": invite, "strategy": "random"})
    assert r.status_code == 201 and r.json()["seats"] == [1], r.text
