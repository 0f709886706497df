"""Slow clients and many connections from one address (issue #18 item 7), with real sockets against `souk serve`:
a connection that does not send a whole request head in ``SOUK_HEAD_TIMEOUT_S`` is answered 408 and closed; one
address holds at most ``SOUK_CONNECTIONS_PER_CLIENT`` connections (WebSockets included); a WebSocket handshake
takes from the client's rate budget as any request does."""

from __future__ import annotations

import contextlib
import json
import socket
import time

import httpx
import pytest
from httpx_ws import WebSocketDisconnect, aconnect_ws

from tests.e2e.support import join_all

pytestmark = pytest.mark.anyio


def address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def answer(sock: socket.socket) -> tuple[int, dict, float] | None:
    """The status and JSON body the server answers, and when the connection was closed after it (monotonic);
    None if it closed without answering."""
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    closed = time.monotonic()
    if not data:
        return None
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body), closed


def request(sock: socket.socket) -> int:
    """One keep-alive GET /catalog on an open connection: its status."""
    sock.sendall(b"GET /catalog HTTP/1.1\r\nHost: souk\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length"))
    while len(body) < length:
        body += sock.recv(65536)
    return int(head.split()[1])


class TestHeadDeadline:
    @pytest.fixture
    def souk_env(self) -> dict[str, str]:
        return {"SOUK_RATE_PER_CLIENT": "0", "SOUK_RATE_PER_TOKEN": "0", "SOUK_OPEN_GAMES_PER_CLIENT": "0",
                "SOUK_HEAD_TIMEOUT_S": "1"}

    def test_a_head_sent_a_header_line_at_a_time_is_answered_408_and_closed(self, souk_url):
        with socket.create_connection(address(souk_url), timeout=10) as sock:
            start = time.monotonic()
            sock.sendall(b"GET /catalog HTTP/1.1\r\nHost: souk\r\n")
            sock.settimeout(0.3)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                for i in range(20):  # a header line every 0.3 s: 6 s, if nobody stops it
                    try:
                        if sock.recv(65536, socket.MSG_PEEK):
                            break
                    except TimeoutError:
                        pass
                    sock.sendall(b"X-Slow-%d: 1\r\n" % i)
            sock.settimeout(10)
            status, body, closed = answer(sock)
        assert status == 408 and body["code"] == "request_timeout"
        assert closed - start < 4

    def test_a_connection_that_sends_nothing_is_closed(self, souk_url):
        with socket.create_connection(address(souk_url), timeout=10) as sock:
            start = time.monotonic()
            status, body, closed = answer(sock)
        assert status == 408 and body["code"] == "request_timeout" and closed - start < 4

    def test_a_keep_alive_connection_whose_every_head_comes_in_time_goes_on_being_served(self, souk_url):
        with socket.create_connection(address(souk_url), timeout=10) as sock:
            for _ in range(5):  # 2.5 s on one connection, each head whole at once
                assert request(sock) == 200
                time.sleep(0.5)


class TestConnectionsPerAddress:
    @pytest.fixture
    def souk_env(self) -> dict[str, str]:
        return {"SOUK_RATE_PER_CLIENT": "0", "SOUK_RATE_PER_TOKEN": "0", "SOUK_OPEN_GAMES_PER_CLIENT": "0",
                "SOUK_CONNECTIONS_PER_CLIENT": "4", "SOUK_HEAD_TIMEOUT_S": "30"}

    def test_one_address_holds_at_most_its_share_of_connections(self, souk_url):
        time.sleep(0.3)  # the start-up's /health polls have closed
        held = [socket.create_connection(address(souk_url), timeout=10) for _ in range(4)]
        try:
            assert [request(sock) for sock in held] == [200] * 4
            with socket.create_connection(address(souk_url), timeout=10) as extra:
                status, body, _ = answer(extra)
            assert status == 429 and body["code"] == "too_many_connections"
            held.pop().close()
            time.sleep(0.3)
            with socket.create_connection(address(souk_url), timeout=10) as sock:  # one left: room for another
                assert request(sock) == 200
        finally:
            for sock in held:
                sock.close()

    async def test_websockets_count_as_connections_until_they_close(self, souk_url):
        async with httpx.AsyncClient(base_url=souk_url, timeout=30,
                                     limits=httpx.Limits(max_keepalive_connections=0)) as client:
            body = {"game": "yspahan", "title": "ws", "seats": 2}
            game_id = (await client.post("/games", json=body)).json()["game_id"]
            await join_all(client, game_id, 2)
            async with contextlib.AsyncExitStack() as sockets:
                for _ in range(4):
                    ws = await sockets.enter_async_context(aconnect_ws(f"{souk_url}/games/{game_id}/ws", client))
                    await ws.receive_text()
                with socket.create_connection(address(souk_url), timeout=10) as extra:
                    status, body, _ = answer(extra)
                assert status == 429 and body["code"] == "too_many_connections"
            time.sleep(0.3)
            assert (await client.get("/catalog")).status_code == 200


class TestWebSocketHandshakes:
    @pytest.fixture
    def souk_env(self) -> dict[str, str]:
        return {"SOUK_RATE_PER_CLIENT": "0.5", "SOUK_BURST_PER_CLIENT": "4", "SOUK_RATE_PER_TOKEN": "0",
                "SOUK_OPEN_GAMES_PER_CLIENT": "0"}

    async def test_a_websocket_handshake_takes_from_the_clients_rate_budget(self, souk_url):
        codes = []
        async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
            for _ in range(8):
                async with aconnect_ws(f"{souk_url}/games/nope/ws", client) as ws:
                    with pytest.raises(WebSocketDisconnect) as info:
                        await ws.receive_text()
                codes.append((info.value.code, info.value.reason))
        assert codes[0] == (4404, "game_not_found")
        assert codes.count((4429, "rate_limited")) >= 3, codes


class TestWhatOneAddressHolds:
    """``souk bench slow``'s measurement against a real gateway: what it holds stays at the cap, none longer than
    the head deadline."""

    @pytest.fixture
    def souk_env(self) -> dict[str, str]:
        return {"SOUK_RATE_PER_CLIENT": "0", "SOUK_RATE_PER_TOKEN": "0", "SOUK_OPEN_GAMES_PER_CLIENT": "0",
                "SOUK_CONNECTIONS_PER_CLIENT": "5", "SOUK_HEAD_TIMEOUT_S": "1"}

    async def test_slow_heads_from_one_address_are_held_at_most_by_the_cap_and_the_deadline(self, souk_url):
        from services.bench.slow import measure

        figures = await measure(souk_url, sockets=30, every=0.3, seconds=5, pause=0.3)
        assert figures["mean_held"] <= 6 and figures["longest_held_s"] < 2.5, figures
        assert figures["answers"].get("408", 0) >= 5 and figures["answers"].get("429", 0) >= 20, figures
