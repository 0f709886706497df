"""The gateway under faults and load, as a real `souk serve` process: an event-store Redis restart (issue #8
item 9), and many clients waiting on one game (item 12)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time

import httpx
import pytest
from httpx_ws import aconnect_ws
from wsproto.utilities import LocalProtocolError

from services.embedded.redis import RedisServer
from tests.e2e.support import bearer, serve, started_game

pytestmark = pytest.mark.anyio


async def new_game(client: httpx.AsyncClient, seats: int = 4) -> tuple[str, list[dict[str, str]]]:
    game_id, tokens = await started_game(client, "samarkand", seats, "faults")
    return game_id, [bearer(t) for t in tokens]


async def a_legal_command(client: httpx.AsyncClient, game_id: str, auth: list[dict[str, str]]) -> tuple[int, dict]:
    view = (await client.get(f"/games/{game_id}/view")).json()
    seat = view["flow"]["awaiting"][0]
    legal = (await client.get(f"/games/{game_id}/seats/{seat}/legal", headers=auth[seat])).json()["legal"]
    return seat, legal[0]


async def play_one(client: httpx.AsyncClient, game_id: str, auth: list[dict[str, str]], command_id: str) -> tuple[float, dict]:
    """Sends one legal command; returns how long the gateway took to answer it, and the answer."""
    seat, command = await a_legal_command(client, game_id, auth)
    started = time.monotonic()
    r = await client.post(f"/games/{game_id}/seats/{seat}/commands", headers=auth[seat],
                          json={"command_id": command_id, "command": command})
    assert r.status_code == 200, r.text
    return time.monotonic() - started, r.json()


async def test_after_the_event_store_restarts_commands_are_answered_at_once_and_sockets_pushed(tmp_path):
    server = RedisServer(tmp_path / "redis", appendonly=True).start()  # AOF: the events survive the restart
    base = server.url.rsplit("/", 1)[0]
    try:
        with serve(f"{base}/0", f"{base}/1", tmp_path / "souk.log", {"SOUK_LOG_LEVEL": "info"}) as url:
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                game_id, auth = await new_game(client)
                token = auth[0]["Authorization"].split()[1]
                async with aconnect_ws(f"{url}/games/{game_id}/seats/0/ws?token={token}", client) as ws:
                    first = json.loads(await ws.receive_text())

                    server.stop()
                    server.start()

                    # The engine and projector workers come back on their own schedule (issue #8 item 11): wait
                    # for the first command accepted after the restart, resending it under its id meanwhile.
                    deadline = time.monotonic() + 40
                    while True:
                        seat, command = await a_legal_command(client, game_id, auth)
                        r = await client.post(f"/games/{game_id}/seats/{seat}/commands", headers=auth[seat],
                                              json={"command_id": "after-restart", "command": command})
                        if r.status_code == 200:
                            break
                        assert r.status_code == 504 and time.monotonic() < deadline, r.text
                    # The workers are back: the gateway's own part must not cost the reply timeout (5 s).
                    took, reply = await play_one(client, game_id, auth, "next")
                    assert took < 1.5, f"the gateway took {took:.2f} s to pass on the engine's answer"

                    # The same socket, never reconnected, is pushed the views of both commands.
                    pushed = first["version"]
                    while pushed < reply["version"]:
                        pushed = json.loads(await asyncio.wait_for(ws.receive_text(), 5))["version"]
                    assert pushed == reply["version"]

                health = (await client.get("/health")).json()
                for name in ("replies", "updates"):
                    listener = health["listeners"][name]
                    assert listener["connected"] and listener["reconnects"] >= 1, health
                    assert listener["last_error"], health
        logged = [json.loads(line) for line in (tmp_path / "souk.log").read_text().splitlines()
                  if line.startswith("{")]
        assert {e["listener"] for e in logged if e.get("event") == "listener_reconnected"} == {"replies", "updates"}
    finally:
        server.stop()


@pytest.fixture
def souk_env(souk_env: dict[str, str]) -> dict[str, str]:
    """The head timeout (5 s) measured from a connection's opening is not what these tests are about: a loaded
    machine's test process, opening a thousand sockets at once, sent some heads later than that (408 in a run at
    load 10 to 16)."""
    return {**souk_env, "SOUK_HEAD_TIMEOUT_S": "60"}


async def test_a_thousand_websockets_on_one_game_are_all_pushed_the_next_view(souk_url):
    sockets, audiences = 1000, [0, 1, 2, 3, None]
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(base_url=souk_url, timeout=30, limits=limits) as client:
        game_id, auth = await new_game(client)
        tokens = [a["Authorization"].split()[1] for a in auth]
        version = (await client.get(f"/games/{game_id}/view")).json()["version"]
        connected, all_connected, sent = [0], asyncio.Event(), asyncio.Event()
        target: list[int] = []

        async def follow(i: int) -> int:
            seat = audiences[i % len(audiences)]
            path = f"/games/{game_id}/ws" if seat is None else f"/games/{game_id}/seats/{seat}/ws?token={tokens[seat]}"
            pushed = None
            try:
                async with aconnect_ws(f"{souk_url}{path}", client) as ws:
                    assert json.loads(await ws.receive_text())["version"] == version
                    connected[0] += 1
                    if connected[0] == sockets:
                        all_connected.set()
                    await sent.wait()
                    seen = version
                    while seen < target[0]:
                        seen = json.loads(await ws.receive_text())["version"]
                    pushed = seen
            except* LocalProtocolError:
                # httpx-ws answers a ping of the server (uvicorn's, every 20 s) that comes while it closes the
                # socket with a Pong wsproto refuses in LOCAL_CLOSING (CI, load 10): the client's bug, once this
                # socket has read what it came for
                if pushed is None:
                    raise
            return pushed

        followers = asyncio.gather(*(follow(i) for i in range(sockets)))
        try:
            ready = asyncio.ensure_future(all_connected.wait())
            await asyncio.wait([ready, followers], timeout=40, return_when=asyncio.FIRST_COMPLETED)
            ready.cancel()
            if followers.done():
                followers.result()  # a socket failed: its error
            assert all_connected.is_set(), f"{connected[0]} of {sockets} sockets got their first view"
            _, reply = await play_one(client, game_id, auth, "pushed")
            target.append(reply["version"])
            sent.set()
            versions = await asyncio.wait_for(followers, 20)
        finally:
            if not followers.done():
                followers.cancel()
                with contextlib.suppress(BaseException):
                    await followers
        assert versions == [reply["version"]] * sockets


async def test_two_hundred_long_polls_on_one_game_all_answer(souk_url):
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(base_url=souk_url, timeout=30, limits=limits) as client:
        game_id, auth = await new_game(client)
        version = (await client.get(f"/games/{game_id}/view")).json()["version"]

        async def poll(i: int) -> httpx.Response:
            seat = i % 5
            if seat == 4:
                return await client.get(f"/games/{game_id}/view", params={"min_version": version + 1})
            return await client.get(f"/games/{game_id}/seats/{seat}/view", params={"min_version": version + 1},
                                    headers=auth[seat])

        polls = asyncio.gather(*(poll(i) for i in range(200)))
        await asyncio.sleep(0.5)
        _, reply = await play_one(client, game_id, auth, "polled")
        answers = await asyncio.wait_for(polls, 20)
        assert [r.status_code for r in answers] == [200] * 200, {r.status_code: r.text for r in answers}
        assert {r.json()["version"] for r in answers} == {reply["version"]}
