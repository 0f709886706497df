"""Commands over a seat's WebSocket (issue #21, "WebSockets in"): a ``souk.Command`` frame is answered on the same
socket by a ``souk.CommandAnswer`` with the outcome the POST ``…/seats/{seat}/commands`` gives the same body, and
the socket goes on pushing views; a frame that is no command is answered with a stable code, never a close."""

from __future__ import annotations

import asyncio
import json
import secrets
from typing import Any

import httpx
import pytest
from httpx_ws import aconnect_ws

from tests.e2e.support import join_all, serve_on_databases

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def ws_url(redis_server_url, tmp_path_factory):
    env = {"SOUK_RATE_PER_CLIENT": "0", "SOUK_RATE_PER_TOKEN": "0", "SOUK_OPEN_GAMES_PER_CLIENT": "0",
           "SOUK_CONNECTIONS_PER_CLIENT": "0"}
    with serve_on_databases(redis_server_url, 8, 9, tmp_path_factory.mktemp("wscommands"), env) as url:
        yield url


async def started(client: httpx.AsyncClient) -> tuple[str, list[str], dict[str, Any]]:
    game_id = (await client.post("/games", json={"game": "yspahan", "title": "ws", "seats": 2})).json()["game_id"]
    tokens = await join_all(client, game_id, 2)
    return game_id, tokens, (await client.get(f"/games/{game_id}/view")).json()


def frame(command: dict, command_id: str | None = None, **more: Any) -> str:
    return json.dumps({"type": "souk.Command", "command_id": command_id or secrets.token_hex(8),
                       "command": command, **more})


async def answer_of(ws, views: list[dict] | None = None) -> dict:
    """The next CommandAnswer on ``ws``; the views pushed before it go to ``views``."""
    while True:
        got = json.loads(await asyncio.wait_for(ws.receive_text(), 10))
        if got.get("type") == "souk.CommandAnswer":
            return got
        if views is not None:
            views.append(got)


async def seat_socket(ws_url: str, client: httpx.AsyncClient, game_id: str, seat: int, token: str):
    return aconnect_ws(f"{ws_url}/games/{game_id}/seats/{seat}/ws?token={token}", client)


async def test_a_command_sent_on_the_seats_socket_is_accepted_answered_and_its_view_pushed(ws_url):
    async with httpx.AsyncClient(base_url=ws_url, timeout=30) as client:
        game_id, tokens, view = await started(client)
        seat = view["flow"]["awaiting"][0]
        async with await seat_socket(ws_url, client, game_id, seat, tokens[seat]) as ws:
            mine = json.loads(await ws.receive_text())
            views: list[dict] = []
            await ws.send_text(frame(mine["legal"][0], "first", expected_version=mine["version"]))
            answer = await answer_of(ws, views)
            assert answer["status"] == 200 and answer["command_id"] == "first" and "error" not in answer
            reply = answer["reply"]
            assert reply["status"] == "accepted" and reply["game_id"] == game_id and reply["seat"] == seat
            assert reply["version"] > mine["version"]
            while not views or views[-1]["version"] < reply["version"]:  # the push follows (or came first)
                views.append(json.loads(await asyncio.wait_for(ws.receive_text(), 10)))
            assert views[-1]["version"] == reply["version"] and views[-1]["seat"] == seat
        public = (await client.get(f"/games/{game_id}/view")).json()
        assert public["version"] == reply["version"]


async def test_a_resent_command_id_answers_the_same_on_the_socket_and_over_http(ws_url):
    async with httpx.AsyncClient(base_url=ws_url, timeout=30) as client:
        game_id, tokens, view = await started(client)
        seat = view["flow"]["awaiting"][0]
        async with await seat_socket(ws_url, client, game_id, seat, tokens[seat]) as ws:
            mine = json.loads(await ws.receive_text())
            sent = frame(mine["legal"][0], "again", expected_version=mine["version"])
            await ws.send_text(sent)
            first = await answer_of(ws)
            await ws.send_text(sent)
            assert await answer_of(ws) == first
            r = await client.post(f"/games/{game_id}/seats/{seat}/commands",
                                  headers={"Authorization": f"Bearer {tokens[seat]}"},
                                  json={"command_id": "again", "command": mine["legal"][0],
                                        "expected_version": mine["version"]})
            assert r.status_code == 200 and r.json() == first["reply"]
            assert (await client.get(f"/games/{game_id}/view")).json()["version"] == first["reply"]["version"]


async def test_a_refused_command_gets_the_posts_status_and_error_and_the_socket_goes_on(ws_url):
    """The seat the game does not await, a stale version, a command of another game: each answered as the POST
    answers the same body, with its status and code."""
    async with httpx.AsyncClient(base_url=ws_url, timeout=30) as client:
        game_id, tokens, view = await started(client)
        awaited = view["flow"]["awaiting"][0]
        other = 1 - awaited
        auth = {"Authorization": f"Bearer {tokens[other]}"}
        legal = (await client.get(f"/games/{game_id}/seats/{awaited}/legal",
                                  headers={"Authorization": f"Bearer {tokens[awaited]}"})).json()["legal"]
        bodies = [{"command": legal[0]}, {"command": legal[0], "expected_version": 0},
                  {"command": {"type": "samarkand.Pass"}}, {"command": {"type": "yspahan.Nope"}},
                  {"command": legal[0], "expected_version": -1}, {"command": legal[0], "command_id": ""}]
        async with await seat_socket(ws_url, client, game_id, other, tokens[other]) as ws:
            json.loads(await ws.receive_text())
            for body in bodies:
                body = {"command_id": secrets.token_hex(8), **body}
                await ws.send_text(json.dumps({"type": "souk.Command", **body}))
                answer = await answer_of(ws)
                r = await client.post(f"/games/{game_id}/seats/{other}/commands", headers=auth,
                                      json={**body, "command_id": body["command_id"] + "h" if body["command_id"]
                                            else ""})
                assert r.status_code >= 400, body
                assert (answer["status"], answer["error"]) == (r.status_code, r.json()), body
                assert answer["command_id"] == body["command_id"] and "reply" not in answer
            assert answer["status"] == 400 and answer["error"]["code"] == "bad_command_id"
        assert (await client.get(f"/games/{game_id}/view")).json()["version"] == view["version"]


async def test_malformed_frames_get_a_bad_frame_answer_and_the_socket_stays_usable(ws_url):
    async with httpx.AsyncClient(base_url=ws_url, timeout=30) as client:
        game_id, tokens, view = await started(client)
        seat = view["flow"]["awaiting"][0]
        async with await seat_socket(ws_url, client, game_id, seat, tokens[seat]) as ws:
            mine = json.loads(await ws.receive_text())
            for raw in ("not json", "[1, 2]", "{}", '{"type": "souk.Nope", "command_id": "x1"}', '"souk.Command"',
                        '{"command_id": "x2", "command": {}}', "{" * 40):
                await ws.send_text(raw)
                answer = await answer_of(ws)
                assert answer["status"] == 400 and answer["error"]["code"] == "bad_frame", raw
                assert answer["command_id"] == (raw[raw.index("x"):raw.index("x") + 2] if '"x' in raw else ""), raw
            await ws.send_bytes(b"\xff\xfe binary")
            assert (await answer_of(ws))["error"]["code"] == "bad_frame"
            # a command frame that does not fit: the POST's own refusal of that body
            for raw, code, named in ((frame({"type": "x"}, "y1", extra=1), "bad_request", "y1"),
                                     ('{"type": "souk.Command", "command_id": "y2"}', "bad_request", "y2"),
                                     (frame({"type": "x"}, "y3", expected_version="one"), "bad_request", "y3"),
                                     (frame({"pad": "x" * 70_000}, "y4"), "body_too_large", "y4")):
                await ws.send_text(raw)
                answer = await answer_of(ws)
                assert answer["error"]["code"] == code and answer["command_id"] == named, raw
                assert answer["status"] == (413 if code == "body_too_large" else 400)
            assert (await client.get(f"/games/{game_id}/view")).json()["version"] == view["version"]
            await ws.send_text(frame(mine["legal"][0], "after", expected_version=mine["version"]))
            answer = await answer_of(ws)
            assert answer["status"] == 200 and answer["reply"]["status"] == "accepted"


async def test_a_spectators_socket_refuses_commands_and_goes_on_pushing(ws_url):
    async with httpx.AsyncClient(base_url=ws_url, timeout=30) as client:
        game_id, tokens, view = await started(client)
        seat = view["flow"]["awaiting"][0]
        auth = {"Authorization": f"Bearer {tokens[seat]}"}
        legal = (await client.get(f"/games/{game_id}/seats/{seat}/legal", headers=auth)).json()["legal"]
        async with aconnect_ws(f"{ws_url}/games/{game_id}/ws", client) as ws:
            assert json.loads(await ws.receive_text())["version"] == view["version"]
            await ws.send_text(frame(legal[0], "spectating"))
            answer = await answer_of(ws)
            assert (answer["status"], answer["error"]["code"], answer["command_id"]) == (403, "not_a_seat",
                                                                                          "spectating")
            assert (await client.get(f"/games/{game_id}/view")).json()["version"] == view["version"]
            r = await client.post(f"/games/{game_id}/seats/{seat}/commands", headers=auth,
                                  json={"command_id": "by-http", "command": legal[0]})
            assert r.status_code == 200
            pushed = json.loads(await asyncio.wait_for(ws.receive_text(), 10))
            assert pushed["version"] == r.json()["version"] and pushed["seat"] is None


async def test_a_seat_given_back_loses_its_sockets_commands(ws_url):
    """The token is checked for every command, as every POST's is: a seat given back before the start (its token
    stops working) cannot play through the socket it opened before."""
    async with httpx.AsyncClient(base_url=ws_url, timeout=30) as client:
        game_id = (await client.post("/games", json={"game": "yspahan", "title": "ws", "seats": 2})).json()["game_id"]
        token = (await client.post(f"/games/{game_id}/seats", json={"name": "p0"})).json()["token"]
        async with await seat_socket(ws_url, client, game_id, 0, token) as ws:
            json.loads(await ws.receive_text())
            r = await client.delete(f"/games/{game_id}/seats/0", headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 200
            await ws.send_text(frame({"type": "yspahan.Pass"}, "gone"))
            answer = await answer_of(ws)
            assert (answer["status"], answer["error"]["code"]) == (401, "bad_token")


def socket_commands(metrics: str) -> dict[tuple[str, str], float]:
    """``souk_socket_commands_total`` by (status, code) from the gateway's /metrics."""
    counted = {}
    for line in metrics.splitlines():
        if line.startswith("souk_socket_commands_total{"):
            labels, value = line[len("souk_socket_commands_total{"):].split("} ")
            named = dict(part.split("=", 1) for part in labels.split(","))
            counted[(named["status"].strip('"'), named["code"].strip('"'))] = float(value)
    return counted


async def test_the_commands_a_socket_carries_are_counted_by_status_and_code_in_the_metrics(ws_url):
    """A POST is counted by souk_http_requests; a command on a socket has no HTTP request: it has its own counter."""
    async with httpx.AsyncClient(base_url=ws_url, timeout=30) as client:
        before = socket_commands((await client.get("/metrics")).text)
        game_id, tokens, view = await started(client)
        seat = view["flow"]["awaiting"][0]
        async with await seat_socket(ws_url, client, game_id, seat, tokens[seat]) as ws:
            mine = json.loads(await ws.receive_text())
            await ws.send_text(frame(mine["legal"][0], expected_version=mine["version"]))
            assert (await answer_of(ws))["status"] == 200
            await ws.send_text("not json")
            assert (await answer_of(ws))["error"]["code"] == "bad_frame"
        after = socket_commands((await client.get("/metrics")).text)
    assert after.get(("200", ""), 0) - before.get(("200", ""), 0) == 1
    assert after.get(("400", "bad_frame"), 0) - before.get(("400", "bad_frame"), 0) == 1
