"""The WebSocket contract a frontend relies on (issue #9 item 1): a refused socket is accepted, then closed with
4000 + the HTTP status, so a browser sees why (4401 a bad token, 4404 no such game)."""

from __future__ import annotations

import httpx
import pytest
from httpx_ws import WebSocketDisconnect, aconnect_ws

from tests.e2e.test_play_over_http import join_all

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
