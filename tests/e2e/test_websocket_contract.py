"""The WebSocket contract a frontend relies on (issue #9 item 1): a refused socket is accepted, then closed with
4000 + the HTTP status, so a browser sees why (4401 a bad token, 4404 no such game)."""

from __future__ import annotations

import secrets

import httpx
import pytest
from httpx_ws import WebSocketDisconnect, aconnect_ws

from tests.e2e.support import join_all

pytestmark = pytest.mark.anyio


async def closed_with(url: str, client: httpx.AsyncClient) -> tuple[int, str]:
    async with aconnect_ws(url, client) as ws:
        with pytest.raises(WebSocketDisconnect) as info:
            await ws.receive_text()
    return info.value.code, info.value.reason


async def test_a_refused_socket_is_closed_with_4000_plus_the_status_and_the_errors_code(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_id = (await client.post("/games", json={"game": "yspahan", "title": "ws", "seats": 2})).json()["game_id"]
        await join_all(client, game_id, 2)
        assert await closed_with(f"{souk_url}/games/{game_id}/seats/0/ws?token=wrong", client) == (4401, "bad_token")
        assert await closed_with(f"{souk_url}/games/{game_id}/seats/0/ws", client) == (4401, "missing_token")
        assert await closed_with(f"{souk_url}/games/nope/seats/0/ws?token=x", client) == (4404, "game_not_found")
        assert await closed_with(f"{souk_url}/games/nope/ws", client) == (4404, "game_not_found")
        # a seat that is not a number: no route takes it, and it is still closed with a code, not refused (403)
        assert await closed_with(f"{souk_url}/games/{game_id}/seats/abc/ws?token=x", client) == (4400, "bad_request")


async def test_a_socket_reopened_with_since_gets_only_what_it_has_not_seen(souk_url):
    """The reconnection contract (issue #9 item 5): reopen with ``?since=`` the last version seen; the current
    view comes at once only if newer, then every change."""
    import asyncio
    import json

    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_id = (await client.post("/games", json={"game": "yspahan", "title": "ws", "seats": 2})).json()["game_id"]
        tokens = await join_all(client, game_id, 2)
        view = (await client.get(f"/games/{game_id}/view")).json()
        seat = view["flow"]["awaiting"][0]
        url = f"{souk_url}/games/{game_id}/seats/{seat}/ws?token={tokens[seat]}"
        async with aconnect_ws(f"{url}&since={view['version'] - 1}", client) as ws:  # it missed the last one
            assert json.loads(await ws.receive_text())["version"] == view["version"]
        async with aconnect_ws(f"{url}&since={view['version']}", client) as ws:  # it has it: nothing yet
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(ws.receive_text(), 0.5)
            auth = {"Authorization": f"Bearer {tokens[seat]}"}
            legal = (await client.get(f"/games/{game_id}/seats/{seat}/legal", headers=auth)).json()["legal"]
            r = await client.post(f"/games/{game_id}/seats/{seat}/commands", headers=auth,
                                  json={"command_id": "next", "command": legal[0]})
            assert r.status_code == 200
            pushed = json.loads(await asyncio.wait_for(ws.receive_text(), 5))
            assert pushed["version"] == r.json()["version"]


async def play_moves(client: httpx.AsyncClient, game_id: str, tokens: list[str], count: int) -> int:
    """``count`` commands, each the first legal command of an awaited seat; returns the version reached."""
    version = 0
    for n in range(count):
        view = (await client.get(f"/games/{game_id}/view", params={"min_version": version})).json()
        seat = view["flow"]["awaiting"][0]
        auth = {"Authorization": f"Bearer {tokens[seat]}"}
        legal = (await client.get(f"/games/{game_id}/seats/{seat}/legal", headers=auth)).json()["legal"]
        r = await client.post(f"/games/{game_id}/seats/{seat}/commands", headers=auth,
                              json={"command_id": f"move-{secrets.token_hex(8)}", "command": legal[0]})
        assert r.status_code == 200, r.text
        version = r.json()["version"]
    await client.get(f"/games/{game_id}/view", params={"min_version": version})  # projected
    return version


async def test_a_socket_reopened_with_from_gets_the_records_it_missed_then_the_view_then_live_pushes(souk_url):
    """Reconnecting after a dropped socket (issue #10 §1): ``?from=`` the last version seen sends the history
    entries missed (as that audience's history shows them), then the current view, then every change."""
    import asyncio
    import json

    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_id = (await client.post("/games", json={"game": "yspahan", "title": "ws", "seats": 2})).json()["game_id"]
        tokens = await join_all(client, game_id, 2)
        url = f"{souk_url}/games/{game_id}/seats/0/ws?token={tokens[0]}"
        async with aconnect_ws(url, client) as ws:
            seen = json.loads(await ws.receive_text())["version"]
        now = await play_moves(client, game_id, tokens, 5)  # the socket is gone meanwhile
        assert now > seen + 5
        auth = {"Authorization": f"Bearer {tokens[0]}"}
        for path, history, seat in ((f"{url}&", f"/games/{game_id}/seats/0/history", 0),
                                    (f"{souk_url}/games/{game_id}/ws?", f"/games/{game_id}/history", None)):
            missed = (await client.get(history, params={"after": seen, "limit": 1000}, headers=auth)).json()
            async with aconnect_ws(f"{path}from={seen}", client) as ws:
                page = json.loads(await ws.receive_text())  # as this audience's history shows them
                assert page["entries"] == missed["entries"]
                assert [e["seq"] for e in page["entries"]] == list(range(seen + 1, now + 1))
                assert page["next_after"] == page["version"] == now and page["seat"] == seat
                view = json.loads(await ws.receive_text())
                assert view["version"] == now and view["seat"] == seat and "flow" in view
                with pytest.raises(asyncio.TimeoutError):  # nothing more until the game moves
                    await asyncio.wait_for(ws.receive_text(), 0.3)
                later = await play_moves(client, game_id, tokens, 1)
                pushed = json.loads(await asyncio.wait_for(ws.receive_text(), 5))
                assert pushed["version"] == later and pushed["seat"] == seat
            seen, now = now, later
        async with aconnect_ws(f"{url}&from={now}", client) as ws:  # it missed nothing: the view only
            assert json.loads(await ws.receive_text())["version"] == now
        assert await closed_with(f"{url}&from=-1", client) == (4400, "bad_version")
        assert await closed_with(f"{url}&from=x", client) == (4400, "bad_version")
        assert await closed_with(f"{url}&from=1&since=1", client) == (4400, "bad_request")
