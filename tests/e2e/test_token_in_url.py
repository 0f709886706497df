"""Tokens never in an HTTP route's URL (issue #18 item 8): a URL ends up in proxies' and servers' logs. HTTP routes
take the token in ``Authorization: Bearer``; a ``?token=`` there is refused (400 ``token_in_query``) and changes
nothing. Only a WebSocket handshake takes ``?token=`` (a browser's WebSocket cannot set headers)."""

from __future__ import annotations

import json

import httpx
import pytest
from httpx_ws import aconnect_ws

from tests.e2e.support import bearer, join_all

pytestmark = pytest.mark.anyio


async def test_a_token_in_the_query_of_an_http_route_is_refused_and_changes_nothing(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        created = (await client.post("/games", json={"game": "yspahan", "title": "t", "seats": 2})).json()
        game_id = created["game_id"]
        cancel = await client.delete(f"/games/{game_id}", params={"token": created["creator_token"]})
        assert cancel.status_code == 400 and cancel.json()["code"] == "token_in_query"
        assert created["creator_token"] not in cancel.text
        tokens = await join_all(client, game_id, 2)  # not cancelled: it starts
        view = await client.get(f"/games/{game_id}/seats/0/view", params={"token": tokens[0]})
        assert view.status_code == 400 and view.json()["code"] == "token_in_query"
        version = (await client.get(f"/games/{game_id}/view")).json()["version"]
        seat = (await client.get(f"/games/{game_id}/view")).json()["flow"]["awaiting"][0]
        legal = (await client.get(f"/games/{game_id}/seats/{seat}/legal", headers=bearer(tokens[seat]))).json()
        sent = await client.post(f"/games/{game_id}/seats/{seat}/commands", params={"token": tokens[seat]},
                                 json={"command_id": "in-url", "command": legal["legal"][0]})
        assert sent.status_code == 400 and sent.json()["code"] == "token_in_query"
        assert (await client.get(f"/games/{game_id}/view")).json()["version"] == version
        # with the header (and a query token beside it, still refused)
        assert (await client.get(f"/games/{game_id}/seats/0/view", headers=bearer(tokens[0]))).status_code == 200
        both = await client.get(f"/games/{game_id}/seats/0/view", headers=bearer(tokens[0]),
                                params={"token": tokens[0]})
        assert both.status_code == 400


async def test_a_websocket_still_takes_its_token_in_the_query(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_id = (await client.post("/games", json={"game": "yspahan", "title": "t", "seats": 2})).json()["game_id"]
        tokens = await join_all(client, game_id, 2)
        async with aconnect_ws(f"{souk_url}/games/{game_id}/seats/1/ws?token={tokens[1]}", client) as ws:
            assert json.loads(await ws.receive_text())["seat"] == 1


async def test_the_api_document_says_where_the_token_goes(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        document = (await client.get("/schema/openapi.json")).json()
    scheme = document["components"]["securitySchemes"]["seatToken"]
    assert "token_in_query" in scheme["description"]
    assert "token_in_query" in json.dumps(document["paths"]["/games/{game_id}/seats/{seat}/view"]["get"]["responses"])
