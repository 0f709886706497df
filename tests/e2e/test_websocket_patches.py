"""WebSockets that take JSON Patch frames (``?patch=1``, issue #20): after a whole view, each view comes as the
RFC 6902 patch from the one before (``{"patch", "from", "version"}``), which a library of its own (``jsonpatch``)
applies to give exactly the view a GET shows; a reconnection with ``?from=`` while patching gets the history
missed, a whole view, then patches again."""

from __future__ import annotations

import asyncio
import json
import random

import httpx
import jsonpatch
import pytest
from httpx_ws import aconnect_ws

from tests.e2e.support import bearer, join_all

pytestmark = pytest.mark.anyio


async def play(client: httpx.AsyncClient, game_id: str, tokens: list[str], commands: int, rng: random.Random) -> int:
    """``commands`` random legal commands of the awaited seats; returns the game's version after them."""
    version = 0
    for _ in range(commands):
        spectator = (await client.get(f"/games/{game_id}/view", params={"min_version": version})).json()
        if spectator["status"] != "playing":
            break
        seat = spectator["flow"]["awaiting"][0]
        legal = (await client.get(f"/games/{game_id}/seats/{seat}/legal", headers=bearer(tokens[seat]))).json()
        r = await client.post(f"/games/{game_id}/seats/{seat}/commands", headers=bearer(tokens[seat]),
                              json={"command_id": f"c{rng.random()}", "command": rng.choice(legal["legal"]),
                                    "expected_version": legal["version"]})
        assert r.status_code == 200, r.text
        version = r.json()["version"]
    return version


async def follow_until(ws, view: dict | None, version: int, frames: list[dict]) -> dict:
    """Reads frames, applying patches to ``view``, until the view reaches ``version``; ``frames`` gets each."""
    while view is None or view["version"] < version:
        text = await asyncio.wait_for(ws.receive_text(), 10)
        frame = json.loads(text)
        frames.append(frame)
        if "patch" in frame:
            assert view is not None and frame["from"] == view["version"], frame
            view = jsonpatch.apply_patch(view, frame["patch"])
            assert view["version"] == frame["version"]
            # smaller than the view it gives (else the whole view is sent)
            assert len(text) < len(json.dumps(view, separators=(",", ":"), ensure_ascii=False))
        elif "next_after" not in frame:
            view = frame
    return view


def without_presence(view: dict) -> dict:
    return {k: v for k, v in view.items() if k != "presence"}


async def test_a_patching_socket_gets_patches_that_give_the_views_and_patches_again_after_a_reconnection(souk_url):
    rng = random.Random(20)
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_id = (await client.post("/games", json={"game": "yspahan", "title": "p", "seats": 2})).json()["game_id"]
        tokens = await join_all(client, game_id, 2)
        url = f"{souk_url}/games/{game_id}/seats/0/ws?token={tokens[0]}&patch=1"
        frames: list[dict] = []
        async with aconnect_ws(url, client) as ws:
            view = await follow_until(ws, None, 1, frames)
            assert "patch" not in frames[0] and frames[0]["seat"] == 0  # a whole view first
            version = await play(client, game_id, tokens, 12, rng)
            view = await follow_until(ws, view, version, frames)
        patches = [f for f in frames if "patch" in f]
        assert patches, "no patch frame"
        got = (await client.get(f"/games/{game_id}/seats/0/view", headers=bearer(tokens[0]))).json()
        assert without_presence(view) == without_presence(got)

        # away, the game moves on; back with ?from= the last version seen, still patching
        seen = view["version"]
        version = await play(client, game_id, tokens, 6, rng)
        frames = []
        async with aconnect_ws(f"{url}&from={seen}", client) as ws:
            view = await follow_until(ws, view, version, frames)
            pages = [f for f in frames if "next_after" in f]
            missed = [e["seq"] for page in pages for e in page["entries"]]
            assert missed == list(range(seen + 1, version + 1))
            assert "patch" not in frames[len(pages)]  # after the history missed: the whole view
            version = await play(client, game_id, tokens, 6, rng)
            view = await follow_until(ws, view, version, frames)
        assert any("patch" in f for f in frames[len(pages) + 1:])
        got = (await client.get(f"/games/{game_id}/seats/0/view", headers=bearer(tokens[0]))).json()
        assert without_presence(view) == without_presence(got)


async def test_a_socket_that_does_not_ask_for_patches_gets_whole_views_beside_one_that_does(souk_url):
    rng = random.Random(21)
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_id = (await client.post("/games", json={"game": "yspahan", "title": "p", "seats": 2})).json()["game_id"]
        tokens = await join_all(client, game_id, 2)
        base = f"{souk_url}/games/{game_id}/ws"
        whole: list[dict] = []
        patched: list[dict] = []
        async with aconnect_ws(base, client) as plain, aconnect_ws(f"{base}?patch=1", client) as patching:
            first = await follow_until(plain, None, 1, whole)
            await follow_until(patching, None, first["version"], patched)
            version = await play(client, game_id, tokens, 8, rng)
            a = await follow_until(plain, first, version, whole)
            b = await follow_until(patching, first, version, patched)
        assert not any("patch" in f for f in whole) and any("patch" in f for f in patched)
        assert a == b
