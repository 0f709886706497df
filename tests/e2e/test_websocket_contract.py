"""The WebSocket contract a frontend relies on (issue #9 item 1): a refused socket is accepted, then closed with
4000 + the HTTP status, so a browser sees why (4401 a bad token, 4404 no such game)."""

from __future__ import annotations

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
