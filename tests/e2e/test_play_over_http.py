"""Whole games over HTTP with one token per seat, and a WebSocket receiving the updates, against real Redis."""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import subprocess
import sys

import httpx
import pytest
from httpx_ws import aconnect_ws

from services.history.audit import verify_audit, verify_history
from tests.e2e.support import join_all
from services.store import keys

pytestmark = pytest.mark.anyio


async def play_to_the_end(client, game_id: str, tokens: list[str], rng: random.Random) -> int:
    auth = [{"Authorization": f"Bearer {t}"} for t in tokens]
    commands = 0
    while True:
        spectator = (await client.get(f"/games/{game_id}/view")).json()
        if spectator["status"] == "over":
            return commands
        seat = rng.choice(spectator["flow"]["awaiting"])
        legal = (await client.get(f"/games/{game_id}/seats/{seat}/legal", headers=auth[seat])).json()
        assert legal["legal"], f"seat {seat} awaited with nothing to do"
        command = rng.choice(legal["legal"])
        r = await client.post(f"/games/{game_id}/seats/{seat}/commands", headers=auth[seat],
                              json={"command_id": f"c{commands}", "command": command})
        assert r.status_code == 200, r.text
        assert r.json()["status"] == "accepted" and r.json()["version"] > legal["version"]
        commands += 1
        assert commands < 5000


@pytest.mark.parametrize(("game", "seats"), [("samarkand", 4), ("yspahan", 3)])
async def test_a_whole_game_is_played_over_http_with_a_websocket_following_it(souk_url, game, seats):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        r = await client.post("/games", json={"game": game, "title": f"e2e {game}", "seats": seats, "seed": "5eed" * 16,
                                              "unfair": True})
        assert r.status_code == 201, r.text
        game_id = r.json()["game_id"]
        tokens = await join_all(client, game_id, seats)

        pushed: list[dict] = []

        async def follow() -> None:
            async with aconnect_ws(f"{souk_url}/games/{game_id}/seats/0/ws?token={tokens[0]}", client) as ws:
                while True:
                    view = json.loads(await ws.receive_text())
                    pushed.append(view)
                    if view["status"] == "over":
                        return

        follower = asyncio.create_task(follow())
        await asyncio.sleep(0.3)
        played = await play_to_the_end(client, game_id, tokens, random.Random(7))
        await asyncio.wait_for(follower, 15)

        final = (await client.get(f"/games/{game_id}/view")).json()
        assert final["status"] == "over" and final["result"]["winners"]
        assert len(final["result"]["scores"]) == seats
        assert pushed[-1]["status"] == "over" and pushed[-1]["seat"] == 0
        # never an older view; the same version again only with another presence (a seat came or went: the
        # players' requests make them connected for a minute)
        for before, after in zip(pushed, pushed[1:]):
            assert after["version"] > before["version"] or (
                after["version"] == before["version"] and after["presence"] != before["presence"])
        assert played > seats

        lobby = (await client.get(f"/games/{game_id}")).json()
        assert lobby["status"] == "over"

        # the history, paged, as seat 0 may see it; then the audit, whose chain and seed anyone can check
        entries, after = [], 0
        while True:
            page = (await client.get(f"/games/{game_id}/seats/0/history", params={"after": after, "limit": 200},
                                     headers={"Authorization": f"Bearer {tokens[0]}"})).json()
            entries += page["entries"]
            if not page["entries"]:
                break
            after = page["next_after"]
        assert [e["seq"] for e in entries] == list(range(1, final["version"] + 1))
        audit = (await client.get(f"/games/{game_id}/audit")).json()
        assert "seed" in audit, audit
        assert hashlib.sha256(bytes.fromhex(audit["seed"])).hexdigest() == audit["seed_hash"]
        assert audit["seed"] == "5eed" * 16
        assert verify_audit(audit) == []
        assert len(audit["events"]) == final["version"]
        spectator = []
        while len(spectator) < final["version"]:
            page = (await client.get(f"/games/{game_id}/history", params={"after": len(spectator), "limit": 500}))
            spectator += page.json()["entries"]
        assert verify_history(game_id, spectator) == []
        assert any(e["commitment"] for e in spectator)  # secrets were committed to, not hashed in the clear
        done = subprocess.run([sys.executable, "-m", "services.cli", "verify", game_id, "--server", souk_url],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "holds" in done.stdout, done.stdout + done.stderr


async def test_bad_input_gets_a_clear_error_and_changes_nothing(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        r = await client.post("/games", json={"game": "samarkand", "title": "x", "seats": 9})
        assert r.status_code == 422 and r.json()["code"] == "bad_seat_count"
        r = await client.post("/games", json={"game": "chess", "title": "x", "seats": 2})
        assert r.status_code == 422 and r.json()["code"] == "unknown_game"
        r = await client.post("/games", content=b"{not json", headers={"content-type": "application/json"})
        assert r.status_code == 400 and r.json()["code"] == "bad_request"
        r = await client.post("/games", json={"game": "samarkand", "title": "x", "seats": 3, "colour": "red"})
        assert r.status_code == 400 and r.json()["code"] == "bad_request"
        r = await client.post("/games", json={"game": "samarkand", "title": "x", "seats": 3,
                                              "options": {"countdown_mode": "realtime",
                                                          "hidden_goods": True}})
        assert r.status_code == 422 and r.json()["code"] == "option_unsupported"
        assert (await client.get("/games/nope")).json()["code"] == "game_not_found"

        game_id = (await client.post("/games", json={"game": "samarkand", "title": "x", "seats": 3})).json()["game_id"]
        tokens = await join_all(client, game_id, 3)
        r = await client.post(f"/games/{game_id}/seats", json={"name": "late"})
        assert r.status_code == 409 and r.json()["code"] == "game_started"
        view = (await client.get(f"/games/{game_id}/view")).json()
        version = view["version"]
        url = f"/games/{game_id}/seats/0/commands"
        r = await client.post(url, json={"command_id": "a", "command": {"type": "samarkand.Pass"}})
        assert r.status_code == 401 and r.json()["code"] == "missing_token"
        r = await client.post(url, json={"command_id": "a", "command": {"type": "samarkand.Pass"}},
                              headers={"Authorization": f"Bearer {tokens[1]}"})
        assert r.status_code == 401 and r.json()["code"] == "bad_token"
        auth = {"Authorization": f"Bearer {tokens[0]}"}
        r = await client.post(url, json={"command_id": "a", "command": {"type": "samarkand.Fly"}}, headers=auth)
        assert r.status_code == 400 and r.json()["code"] == "bad_command"
        r = await client.post(url, json={"command_id": "a", "command": {"type": "samarkand.ChooseCard", "card": 999}},
                              headers=auth)
        assert r.status_code in (400, 422) and r.json()["code"]
        legal = (await client.get(f"/games/{game_id}/seats/0/legal", headers=auth)).json()["legal"]
        first = await client.post(url, json={"command_id": "once", "command": legal[0]}, headers=auth)
        again = await client.post(url, json={"command_id": "once", "command": legal[0]}, headers=auth)
        assert first.status_code == again.status_code == 200 and first.json() == again.json()
        after = (await client.get(f"/games/{game_id}/view")).json()
        assert after["version"] == version + first.json()["events"]
        assert (await client.get("/schema/openapi.json")).status_code == 200
        assert "/games/{game_id}/seats/{seat}/ws" in (await client.get("/asyncapi.json")).text  # the client sockets


async def test_players_joining_at_once_each_get_a_different_seat(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_id = (await client.post("/games", json={"game": "samarkand", "title": "rush", "seats": 5})).json()["game_id"]
        answers = await asyncio.gather(*(client.post(f"/games/{game_id}/seats", json={"name": f"p{i}"})
                                         for i in range(6)))
        seats = sorted(r.json()["seat"] for r in answers if r.status_code == 201)
        assert seats == [0, 1, 2, 3, 4]
        [late] = [r for r in answers if r.status_code != 201]
        assert late.status_code == 409 and late.json()["code"] == "game_started"


async def test_health_shows_each_consumer_groups_backlog_and_a_partition_that_never_ran(souk_url, redis_url):
    import redis.asyncio as aioredis

    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        r = await client.post("/games", json={"game": "samarkand", "title": "health", "seats": 3})
        assert r.status_code == 201, r.text
        for _ in range(100):  # until the projector has read the game's first event
            health = (await client.get("/health")).json()
            events = health["streams"][keys.events(0)]
            if all(events["groups"].get(g, {}).get("last_delivered_id") == events["last_id"]
                   for g in ("projector", "webhooks")):  # the projector and the webhook worker read it
                break
            await asyncio.sleep(0.05)
        assert health["status"] == "ok" and health["warnings"] == []
        commands, events = health["streams"][keys.commands(0)], health["streams"][keys.events(0)]
        assert set(commands["groups"]) == {"engine"} and set(events["groups"]) == {"projector", "webhooks"}
        assert commands["length"] == 1 and events["length"] == 1
        for stream in (commands, events):
            for group in stream["groups"].values():
                assert group["last_delivered_id"] == stream["last_id"] and group["consumers"] == 1
                assert group["lag"] in (0, None)  # Redis 7+ counts it; the embedded 6.2 does not
        # an operator starts partition 0 of 2 and forgets partition 1
        events = aioredis.Redis.from_url(redis_url)
        try:
            await events.xgroup_create(keys.events(0), "projector:0/2", id="0")
        finally:
            await events.aclose()
        health = (await client.get("/health")).json()
        assert health["warnings"] == ["projector partition 1/2 has never run: its games' views are not kept"]
