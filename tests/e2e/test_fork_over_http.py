"""Play, undo, fork and verify, over HTTP against a real `souk serve` (issue #10, its end-to-end test).

Given a Yspahan game played to its end through the gateway, with a seat taking back its own move along the way,
when its record is verified, and when it is forked at a version in the middle, then the fork is a new game
marked ``forked_from`` in the lobby, its views and its record, whose seats (taken at once by the names given)
have new tokens (the source's are refused), whose position is the source's at that version, which plays to its
own end, and whose record verifies alone. What cannot be forked is refused with its code and creates nothing.
"""

from __future__ import annotations

import random
from typing import Any

import httpx
import pytest

from tests.e2e.support import bearer, started_game

pytestmark = pytest.mark.anyio


async def play(client: httpx.AsyncClient, game_id: str, tokens: list[str], rng: random.Random,
               undos: int = 0) -> int:
    """Random legal commands until the end; up to ``undos`` times, the seat that just moved takes it back.
    Returns the undos granted."""
    granted = 0
    for n in range(5000):
        spectator = (await client.get(f"/games/{game_id}/view")).json()
        if spectator["status"] != "playing":
            return granted
        seat = rng.choice(spectator["flow"]["awaiting"])
        auth = bearer(tokens[seat])
        view = (await client.get(f"/games/{game_id}/seats/{seat}/view", headers=auth)).json()
        if granted < undos and view["undo"]["to_versions"] and rng.random() < 0.5:
            r = await client.post(f"/games/{game_id}/seats/{seat}/undo", headers=auth,
                                  json={"command_id": f"u{n}", "to_version": view["undo"]["to_versions"][0]})
            assert r.status_code == 200, r.text
            granted += 1
            continue
        r = await client.post(f"/games/{game_id}/seats/{seat}/commands", headers=auth,
                              json={"command_id": f"c{n}", "command": rng.choice(view["legal"])})
        assert r.status_code == 200, r.text
    raise AssertionError("the game did not end")


async def verified(client: httpx.AsyncClient, game_id: str) -> dict[str, Any]:
    r = await client.get(f"/games/{game_id}/record")
    assert r.status_code == 200, r.text
    record = r.json()
    verdict = (await client.post("/verify", content=r.content)).json()
    assert verdict["ok"] is True and verdict["commands"] > 0, verdict
    return record


async def test_play_undo_fork_and_verify_over_http(souk_url):
    rng = random.Random(10)
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        source, tokens = await started_game(client, "yspahan", 2, "the source")
        assert await play(client, source, tokens, rng, undos=3) >= 1
        source_record = await verified(client, source)
        assert any(e["type"] == "table.UndoApplied" for e in source_record["events"])

        version = len(source_record["events"]) // 2
        r = await client.post(f"/games/{source}/fork", json={"version": version, "seats": ["ana", "ben"]})
        assert r.status_code == 201, r.text
        forked = r.json()
        fork, fork_tokens = forked["game_id"], [s["token"] for s in forked["seats"]]
        assert forked["forked_from"] == {"game_id": source, "version": version} and fork != source
        assert [s["seat"] for s in forked["seats"]] == [0, 1] and not set(fork_tokens) & set(tokens)

        lobby = (await client.get(f"/games/{fork}")).json()
        assert lobby["forked_from"] == forked["forked_from"] and lobby["status"] == "playing"
        assert [s["name"] for s in lobby["seats"]] == ["ana", "ben"]
        # the position is the source's at that version (as the source's time travel shows it)
        then = (await client.get(f"/games/{source}/view", params={"at": version})).json()
        now = (await client.get(f"/games/{fork}/view")).json()
        assert now["forked_from"] == forked["forked_from"] and now["flow"] == then["flow"]
        assert now["view"] == then["view"]
        seat = now["flow"]["awaiting"][0]
        mine = await client.get(f"/games/{fork}/seats/{seat}/view", headers=bearer(fork_tokens[seat]))
        assert mine.status_code == 200 and mine.json()["legal"]
        theirs = await client.get(f"/games/{fork}/seats/{seat}/view", headers=bearer(tokens[seat]))
        assert (theirs.status_code, theirs.json()["code"]) == (401, "bad_token")

        await play(client, fork, fork_tokens, rng)
        fork_record = await verified(client, fork)
        assert fork_record["header"]["forked_from"] == forked["forked_from"]
        assert fork_record["seed_hash"] != source_record["seed_hash"]
        assert [e["type"] for e in fork_record["events"][:2]] == ["table.GameCreated", "table.GameForked"]


async def test_what_cannot_be_forked_is_refused_and_creates_nothing(souk_url):
    rng = random.Random(11)
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        running, _ = await started_game(client, "yspahan", 2, "running")
        done, tokens = await started_game(client, "yspahan", 2, "done")
        await play(client, done, tokens, rng)
        length = (await client.get(f"/games/{done}/view")).json()["version"]
        before = len((await client.get("/games")).json())
        cases = [(running, {"version": 5}, 409, "game_not_over"),
                 (done, {"version": 2}, 422, "not_a_position"),
                 (done, {"version": length}, 422, "not_a_position"),
                 (done, {"version": length + 1}, 400, "bad_version"),
                 (done, {"version": 0}, 400, "bad_request"),
                 (done, {"version": 10, "seats": ["a", "b", "c"]}, 400, "bad_seats"),
                 (done, {"version": 10, "title": ""}, 422, "bad_title"),
                 ("nosuchgame0", {"version": 10}, 404, "game_not_found")]
        for game_id, body, status, code in cases:
            r = await client.post(f"/games/{game_id}/fork", json=body)
            assert (r.status_code, r.json()["code"]) == (status, code), (body, r.text)
        assert len((await client.get("/games")).json()) == before


async def test_the_sdk_forks_a_finished_game_and_its_players_join_with_their_entropy(souk_url):
    from services.client import SoukClient

    rng = random.Random(12)
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        done, tokens = await started_game(client, "yspahan", 2, "done")
        await play(client, done, tokens, rng)
    async with SoukClient(souk_url) as souk:
        forked = await souk.fork(done, 30)
        assert (forked.forked_from.game_id, forked.forked_from.version) == (done, 30) and not forked.seats
        seats = [await souk.join(forked.game_id, name) for name in ("ana", "ben")]
        view = await seats[0].view()
        assert view.status == "playing" and view.forked_from == forked.forked_from
