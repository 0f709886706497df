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
        wire = fanout.wire_of(socket)
        wires.append(wire is not None and fanout.wire_of(socket) is wire)  # one Wire a connection: its writes gather
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
            assert wires == [True] * 7  # every socket fed straight to the wire, through one Wire
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


class FakeTransport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closing

    def get_write_buffer_size(self) -> int:
        return 0


def open_wire() -> tuple[fanout.Wire, FakeTransport, object]:
    from wsproto.connection import ConnectionState

    transport = FakeTransport()
    protocol = type("Protocol", (), {})()
    protocol.handshake_complete, protocol.close_sent, protocol.transport = True, False, transport
    protocol.conn = type("Conn", (), {"state": ConnectionState.OPEN})()
    return fanout.Wire(protocol), transport, protocol  # (the Wire does not keep its connection alive)


async def test_frames_pushed_while_a_command_awaits_its_answer_go_with_the_answer_in_one_write_in_order():
    wire, transport, _protocol = open_wire()
    wire.write(b"before")  # no answer awaited: written at once
    assert transport.writes == [b"before"]
    wire.expect_answer()  # a command frame came in
    wire.write(b"view-0")  # the views pushed from its projection, then its answer
    wire.write(b"view-0-again")
    assert transport.writes == [b"before"]
    assert wire.backlog() == len(b"view-0view-0-again")  # counted as unsent until written
    await asyncio.sleep(0)  # the answer comes in the pass after the notice
    wire.answer(b"answer")
    assert transport.writes == [b"before", b"view-0view-0-againanswer"]
    assert wire.backlog() == 0
    for _ in range(3):
        await asyncio.sleep(0)
    wire.write(b"later")
    assert transport.writes == [b"before", b"view-0view-0-againanswer", b"later"]


async def test_an_answer_that_does_not_come_holds_the_frames_back_two_passes_of_the_loop_at_most():
    wire, transport, _protocol = open_wire()
    wire.expect_answer()
    wire.write(b"view")
    for _ in range(3):
        await asyncio.sleep(0)
    assert transport.writes == [b"view"]
    wire.answer(b"answer")
    assert transport.writes == [b"view", b"answer"]


async def test_frames_gathered_when_the_connection_closes_are_dropped():
    wire, transport, _protocol = open_wire()
    wire.expect_answer()
    wire.write(b"view")
    transport.closing = True
    for _ in range(3):
        await asyncio.sleep(0)
    assert transport.writes == []
