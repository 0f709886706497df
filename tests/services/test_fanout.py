"""Views pushed straight to the wire (services/gateway/fanout.py): one frame per change and audience, the same bytes
for every socket, valid for a standard WebSocket client, ``?since=N`` kept, a slow socket holding up no other."""

from __future__ import annotations

import asyncio
import contextlib

import httpx
import msgspec
import pytest
import redis.asyncio as aioredis
import uvicorn
from httpx_ws import aconnect_ws
from litestar import Litestar, WebSocket, websocket

from contracts.readmodels import ViewsUpdated
from services.embedded.redis import free_port
from services.gateway import fanout
from services.gateway.listeners import Follower, Updates
from services.store import keys
from services.store.codec import encoder

pytestmark = pytest.mark.anyio


def seat_view(audience: str, version: int, size: int = 0) -> bytes:
    return msgspec.json.encode({"version": version, "audience": audience, "padding": "x" * size})


async def project(redis: aioredis.Redis, game_id: str, version: int, audiences, size: int = 0) -> None:
    await redis.hset(keys.views(game_id), mapping={a: seat_view(a, version, size) for a in audiences})
    await redis.publish(keys.view_updates(game_id), encoder.encode(ViewsUpdated(version, "playing", ())))


@pytest.mark.parametrize("size", [0, 100, 70_000])
def test_a_view_is_one_final_unmasked_text_frame_with_the_length_in_the_right_form(size):
    payload = seat_view("0", 1, size)
    frame = fanout.text_frame(payload)
    assert frame[0] == 0x81  # FIN, text
    assert not frame[1] & 0x80  # a server's frames are not masked
    n = frame[1] & 0x7F
    if len(payload) < 126:
        assert n == len(payload) and frame[2:] == payload
    elif len(payload) < 65536:
        assert n == 126 and int.from_bytes(frame[2:4], "big") == len(payload) and frame[4:] == payload
    else:
        assert n == 127 and int.from_bytes(frame[2:10], "big") == len(payload) and frame[10:] == payload


@contextlib.asynccontextmanager
async def pushing_server(redis_url: str):
    """A real uvicorn (wsproto, as the gateway runs) whose sockets ``fanout.push_views`` feeds; ``wires`` tells
    whether each socket got a wire."""
    redis = aioredis.Redis.from_url(redis_url)
    updates = Updates(redis)
    wires: list[bool] = []

    @websocket("/games/{game_id:str}/{audience:str}")
    async def follow(socket: WebSocket, game_id: str, audience: str) -> None:
        wires.append(fanout.wire_of(socket) is not None)
        since = int(socket.query_params.get("since", -1))
        await fanout.push_views(updates, socket, game_id, audience, since)

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(Litestar([follow]), host="127.0.0.1", port=port, ws="wsproto",
                                           log_level="warning", lifespan="off"))
    await updates.start()
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}", redis, updates, wires
    finally:
        server.should_exit = True
        await task
        await updates.stop()
        await redis.aclose()


async def test_views_written_to_the_wire_reach_a_standard_client_each_of_its_audience_and_since_is_kept(redis_url):
    async with pushing_server(redis_url) as (url, redis, updates, wires), httpx.AsyncClient(base_url=url) as http:
        await project(redis, "g1", 1, ["0", "1"], size=300)
        async with contextlib.AsyncExitStack() as stack:
            sockets = {a: [await stack.enter_async_context(aconnect_ws(f"/games/g1/{a}", http)) for _ in range(3)]
                       for a in ("0", "1")}
            late = await stack.enter_async_context(aconnect_ws("/games/g1/0", http, params={"since": 1}))
            assert wires == [True] * 7  # every socket fed straight to the wire
            for audience, group in sockets.items():
                for ws in group:
                    assert msgspec.json.decode(await asyncio.wait_for(ws.receive_text(), 5)) == \
                        msgspec.json.decode(seat_view(audience, 1, 300))
            for version, size in ((2, 10), (3, 70_000)):  # short, medium and long frames
                await project(redis, "g1", version, ["0", "1"], size)
                for audience, group in sockets.items():
                    for ws in group:
                        assert msgspec.json.decode(await asyncio.wait_for(ws.receive_text(), 5)) == \
                            msgspec.json.decode(seat_view(audience, version, size))
                assert msgspec.json.decode(await asyncio.wait_for(late.receive_text(), 5))["version"] == version
        await asyncio.sleep(0.1)
        assert updates.games == {}  # every socket gone: nothing kept


class FakeWire:
    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.waiting = 0  # bytes the transport has not sent yet
        self.open = True

    def usable(self) -> bool:
        return self.open

    def backlog(self) -> int:
        return self.waiting

    def write(self, frame: bytes) -> None:
        self.frames.append(frame)


async def test_a_socket_with_too_much_unsent_gets_nothing_new_until_it_drains_then_only_the_newest_view():
    slow, quick = FakeWire(), FakeWire()
    followers = [Follower(wire=slow), Follower(wire=quick)]
    slow.waiting = fanout.MAX_BACKLOG + 1
    for version in (1, 2, 3):
        frame = fanout.text_frame(seat_view("0", version))
        for follower in followers:
            follower.offer(version, "", frame)
    assert quick.frames == [fanout.text_frame(seat_view("0", v)) for v in (1, 2, 3)]
    assert slow.frames == []
    slow.waiting = 0
    await asyncio.sleep(fanout.RETRY_S * 3)
    assert slow.frames == [fanout.text_frame(seat_view("0", 3))]


async def test_a_wire_the_client_closed_closes_its_follower():
    wire = FakeWire()
    follower = Follower(wire=wire)
    wire.open = False
    follower.offer(1, "", fanout.text_frame(seat_view("0", 1)))
    assert wire.frames == [] and follower.closed
    assert await asyncio.wait_for(follower.next(), 1) is None
