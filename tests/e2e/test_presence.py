"""Presence (issue #19 section 3): views and the lobby show which seats are connected (a WebSocket open with the
seat's token, or a request with it in the last ``SOUK_PRESENCE_WINDOW_S``) and since when; a game's followers are
pushed the view again when a seat comes or goes. Against `souk serve` (and a second `souk gateway`) on real Redis,
with a short window and lease so the tests are short."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
from httpx_ws import aconnect_ws

from tests.e2e.support import bearer, serve, started_game

pytestmark = pytest.mark.anyio

WINDOW = 2.0  # SOUK_PRESENCE_WINDOW_S: a request with a seat's token makes it connected this long
LEASE = 1.0  # SOUK_PRESENCE_LEASE_S: a gateway killed -9 leaves its sockets' seats connected at most this long


@pytest.fixture
def souk_env(souk_env) -> dict[str, str]:
    return {**souk_env, "SOUK_PRESENCE_WINDOW_S": str(WINDOW), "SOUK_PRESENCE_LEASE_S": str(LEASE)}


async def frame(ws, timeout: float = 5.0) -> dict:
    return json.loads(await asyncio.wait_for(ws.receive_text(), timeout))


async def shown(client: httpx.AsyncClient, game_id: str) -> dict[str, list]:
    """The presence the spectator's view, the game's lobby entry and the lobby's list show now."""
    view = (await client.get(f"/games/{game_id}/view")).json()
    entry = (await client.get(f"/games/{game_id}")).json()
    listed = [e for e in (await client.get("/games")).json() if e["game_id"] == game_id]
    return {"view": view["presence"], "entry": entry["presence"], "lobby": listed[0]["presence"]}


async def test_a_seat_with_a_socket_open_is_connected_since_it_opened_and_not_once_it_closed(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_id, tokens = await started_game(client, "yspahan", 2)
        async with aconnect_ws(f"{souk_url}/games/{game_id}/ws", client) as spectator:
            first = await frame(spectator)
            assert first["presence"] == [{"seat": 0, "connected": False, "since": 0.0},
                                         {"seat": 1, "connected": False, "since": 0.0}]
            before = time.time()
            async with aconnect_ws(f"{souk_url}/games/{game_id}/seats/1/ws?token={tokens[1]}", client) as ws:
                own = (await frame(ws))["presence"]  # its own first view shows it connected
                after = time.time()
                assert own[0] == {"seat": 0, "connected": False, "since": 0.0}
                assert own[1]["connected"] is True and before <= own[1]["since"] <= after
                pushed = await frame(spectator)  # the followers learn it: the same version, the new presence
                assert (pushed["version"], pushed["presence"]) == (first["version"], own)
                assert await shown(client, game_id) == {"view": own, "entry": own, "lobby": own}
                await asyncio.sleep(LEASE * 2)  # the gateway renews its lease: still connected, since the same
                assert (await shown(client, game_id))["view"] == own
            gone = (await frame(spectator))["presence"]
            assert gone[1]["connected"] is False and after <= gone[1]["since"] <= time.time()
            assert await shown(client, game_id) == {"view": gone, "entry": gone, "lobby": gone}
            with pytest.raises(TimeoutError):  # no lease left behind to run out later
                await frame(spectator, LEASE * 2)


async def test_a_request_with_a_seats_token_makes_it_connected_for_the_window(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_id, tokens = await started_game(client, "yspahan", 2)
        async with aconnect_ws(f"{souk_url}/games/{game_id}/ws", client) as spectator:
            first = await frame(spectator)
            r = await client.get(f"/games/{game_id}/seats/0/legal", headers=bearer("not the token"))
            assert r.status_code == 401
            assert not (await shown(client, game_id))["view"][0]["connected"]  # a bad token is nobody
            before = time.time()
            r = await client.get(f"/games/{game_id}/seats/0/view", headers=bearer(tokens[0]))
            assert r.status_code == 200
            seen = r.json()["presence"][0]  # its own answer shows it connected already
            assert seen["connected"] is True and before <= seen["since"] <= time.time()
            pushed = await frame(spectator)
            assert pushed["version"] == first["version"] and pushed["presence"][0] == seen
            assert (await shown(client, game_id))["entry"][0] == seen
            await asyncio.sleep(WINDOW / 2)
            r = await client.get(f"/games/{game_id}/seats/0/history", headers=bearer(tokens[0]))  # another one
            assert r.status_code == 200
            assert (await shown(client, game_id))["view"][0] == seen  # the same stretch: since unchanged
            # nobody writes when the window runs out: the gateway following the game notices it by itself
            gone = (await frame(spectator, WINDOW + 3))["presence"][0]
            assert gone["connected"] is False
            assert time.time() - gone["since"] < 1.5 and gone["since"] - seen["since"] >= WINDOW * 1.5 - 0.1
            assert (await shown(client, game_id))["lobby"][0] == gone


async def test_two_gateways_agree_and_one_killed_leaves_its_seats_connected_no_longer_than_the_lease(
        redis_url, souk_url, souk_env, tmp_path):
    views_url = redis_url.rsplit("/", 1)[0] + "/1"
    started = []
    with serve(redis_url, views_url, tmp_path / "gateway.log", souk_env, command="gateway",
               started=started) as other_url:
        async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client, \
                httpx.AsyncClient(base_url=other_url, timeout=30) as other:
            game_id, tokens = await started_game(client, "yspahan", 2)
            async with aconnect_ws(f"{souk_url}/games/{game_id}/ws", client) as spectator:
                first = await frame(spectator)
                checked = False
                try:
                    async with aconnect_ws(f"{other_url}/games/{game_id}/seats/0/ws?token={tokens[0]}", other) as ws:
                        own = (await frame(ws))["presence"]
                        assert own[0]["connected"] is True
                        # the socket is on the other gateway: this one's follower learns it, both serve the same
                        assert (await frame(spectator))["presence"] == own
                        assert await shown(client, game_id) == await shown(other, game_id)
                        # a second socket of the seat on this gateway, then closed: the seat is still connected
                        async with aconnect_ws(f"{souk_url}/games/{game_id}/seats/0/ws?token={tokens[0]}",
                                               client) as ws2:
                            assert (await frame(ws2))["presence"] == own
                        await asyncio.sleep(0.5)
                        assert (await shown(client, game_id))["view"] == own
                        started[0].kill()  # kill -9: the other gateway lets go of nothing
                        killed = time.monotonic()
                        gone = (await frame(spectator, LEASE + 3))["presence"]
                        # within the lease (+ a second for a loaded machine)
                        assert gone[0]["connected"] is False and time.monotonic() - killed <= LEASE + 1.0
                        assert gone[1] == first["presence"][1]
                        assert (await shown(client, game_id))["view"] == gone
                        checked = True
                except Exception:  # noqa: BLE001 - closing a socket whose server was killed may fail: not the test
                    if not checked:
                        raise


async def test_a_socket_reconnecting_with_from_and_a_long_poll_show_the_presence_too(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_id, tokens = await started_game(client, "yspahan", 2)
        async with aconnect_ws(f"{souk_url}/games/{game_id}/seats/0/ws?token={tokens[0]}&from=0", client) as ws:
            data = await frame(ws)
            while "entries" in data:  # the history missed first, then the view
                data = await frame(ws)
            assert [p["connected"] for p in data["presence"]] == [True, False]
            polled = (await client.get(f"/games/{game_id}/view", params={"min_version": data["version"]})).json()
            assert polled["presence"] == data["presence"]


async def test_the_sdks_follow_yields_the_presence_pushes_when_asked_and_each_version_once_otherwise(souk_url):
    from services.client import Seat, SoukClient
    from contracts.api import Joined

    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_id, tokens = await started_game(client, "yspahan", 2)
        async with SoukClient(souk_url) as souk:
            watcher = Seat(souk, "yspahan", Joined(game_id, 0, tokens[0], 0))
            plain = Seat(souk, "yspahan", Joined(game_id, 0, tokens[0], 0))
            with_presence = watcher.follow(presence=True)
            without = plain.follow()
            first = await anext(with_presence)
            assert (await anext(without)).version == first.version
            async with aconnect_ws(f"{souk_url}/games/{game_id}/seats/1/ws?token={tokens[1]}", client) as ws:
                await frame(ws)
                pushed = await asyncio.wait_for(anext(with_presence), 5)
                assert pushed.version == first.version and pushed.presence != first.presence
                assert pushed.presence[1].connected is True
                # the plain follow does not yield it: its next view is the next version
                view = await watcher.view()
                [seat] = view.flow.awaiting
                mover = Seat(souk, "yspahan", Joined(game_id, seat, tokens[seat], 0))
                await mover.send((await mover.view()).legal[0])
                after = await asyncio.wait_for(anext(without), 5)
                assert after.version > first.version
            await with_presence.aclose()
            await without.aclose()
