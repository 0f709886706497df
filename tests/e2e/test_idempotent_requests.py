"""Every answer is final, and a client can always learn it again (issue #8 items 4-6): creating and joining
carry a request id, so a resend after a lost answer (a 504, a dropped connection) gets the same game, the same
seat and the same token; a command carries the version it was decided on, so a double click is refused."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from services.store import keys

pytestmark = pytest.mark.anyio


@pytest.fixture
def souk_env() -> dict[str, str]:
    # /health names a consumer idle 300 ms; a reply that never reached its waiter would wait out the 20 s timeout
    return {"SOUK_IDLE_CONSUMER_MS": "300", "SOUK_RATE_PER_CLIENT": "0", "SOUK_RATE_PER_TOKEN": "0",
            "SOUK_REPLY_TIMEOUT": "20"}


async def test_a_resent_create_answers_the_same_game_and_creates_no_other(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        body = {"game": "samarkand", "title": "once only", "seats": 3, "request_id": "create-7f3a9c1e5b2d4f60"}
        answers = await asyncio.gather(*(client.post("/games", json=body) for _ in range(3)))
        again = await client.post("/games", json=body)
        assert {r.status_code for r in [*answers, again]} == {201}
        assert len({r.json()["game_id"] for r in [*answers, again]}) == 1
        lobby = (await client.get("/games", params={"status": "open"})).json()
        assert [g["title"] for g in lobby].count("once only") == 1
        other = await client.post("/games", json={**body, "request_id": "create-0000000000000001"})
        assert other.json()["game_id"] != again.json()["game_id"]
        short = await client.post("/games", json={**body, "request_id": "short"})
        assert short.status_code == 400 and short.json()["code"] == "bad_request_id"


async def test_a_resent_join_answers_the_same_seat_and_token_and_takes_no_other_seat(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_id = (await client.post("/games", json={"game": "samarkand", "title": "j", "seats": 3})).json()["game_id"]
        body = {"name": "Ali", "request_id": "join-ali-5f1c0d9e8b7a6c43"}
        first, second = await asyncio.gather(*(client.post(f"/games/{game_id}/seats", json=body) for _ in range(2)))
        third = await client.post(f"/games/{game_id}/seats", json=body)
        assert first.status_code == second.status_code == third.status_code == 201, first.text
        assert first.json() == second.json() == third.json()
        seats = (await client.get(f"/games/{game_id}")).json()["seats"]
        assert [s["name"] for s in seats] == ["Ali", None, None]
        token = first.json()["token"]
        view = await client.get(f"/games/{game_id}/seats/0/view", headers={"Authorization": f"Bearer {token}"})
        assert view.status_code == 200
        # another request id is another player, who gets another seat and another token
        bea = await client.post(f"/games/{game_id}/seats", json={"name": "Bea", "request_id": "join-bea-a1b2c3d4e5f60718"})
        assert bea.json()["seat"] == 1 and bea.json()["token"] != token


async def test_a_command_decided_on_an_older_version_is_refused_as_stale(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_id = (await client.post("/games", json={"game": "yspahan", "title": "click", "seats": 2})).json()["game_id"]
        tokens = [(await client.post(f"/games/{game_id}/seats", json={"name": f"p{i}"})).json()["token"]
                  for i in range(2)]
        view = (await client.get(f"/games/{game_id}/view")).json()
        seat = view["flow"]["awaiting"][0]
        auth = {"Authorization": f"Bearer {tokens[seat]}"}
        mine = (await client.get(f"/games/{game_id}/seats/{seat}/view", headers=auth)).json()
        assert len(mine["legal"]) >= 2
        url = f"/games/{game_id}/seats/{seat}/commands"
        send = [{"command_id": f"click-{i}", "command": mine["legal"][i], "expected_version": mine["version"]}
                for i in range(2)]
        first = await client.post(url, json=send[0], headers=auth)
        second = await client.post(url, json=send[1], headers=auth)  # the double click, from the same view
        assert first.status_code == 200, first.text
        assert second.status_code == 409 and second.json()["code"] == "stale"
        assert (await client.post(url, json=send[1], headers=auth)).json() == second.json()  # final
        after = (await client.get(f"/games/{game_id}/view")).json()
        assert after["version"] == first.json()["version"]


async def test_health_shows_parked_commands_and_consumers_that_stopped_reading(souk_url, redis_url):
    import redis as redis_sync

    events = redis_sync.Redis.from_url(redis_url)
    events.xadd(keys.commands(0), {"c": b"[" * 3000 + b"]" * 3000})  # an envelope nobody can read
    events.xgroup_createconsumer(keys.commands(0), "engine", "a-worker-that-died")
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        for _ in range(100):
            health = (await client.get("/health")).json()
            if health["parked"]["count"]:
                break
            await asyncio.sleep(0.05)
        assert health["parked"]["count"] == 1 and health["parked"]["newest"][0]["reason"] == "envelope_unreadable"
        assert any("parked" in w for w in health["warnings"])
        await asyncio.sleep(0.4)
        health = (await client.get("/health")).json()
        assert "a-worker-that-died" in [c["consumer"] for c in health["idle_consumers"]]
        assert any("a-worker-that-died" in w for w in health["warnings"])
    events.close()


async def test_a_join_is_answered_by_the_engines_reply_not_after_the_timeout(souk_url):
    """The join's envelope names no seat (the engine picks it) and the reply names the seat taken: the gateway
    must still match them (it used to answer every join from the outcome record after the reply timeout)."""
    import time

    async with httpx.AsyncClient(base_url=souk_url, timeout=60) as client:
        game_id = (await client.post("/games", json={"game": "yspahan", "title": "quick", "seats": 2})).json()["game_id"]
        started = time.monotonic()
        r = await client.post(f"/games/{game_id}/seats", json={"name": "Ali"})
        assert r.status_code == 201 and r.json()["seat"] == 0
        assert time.monotonic() - started < 10, "the join waited out the reply timeout"
