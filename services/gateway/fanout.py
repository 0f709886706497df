"""Pushing views to WebSockets: one frame per change and audience, the same bytes written to each of its sockets.

A view reaches a socket as one unfragmented, uncompressed text frame. ``Updates`` (``services.gateway.listeners``)
reads a game's views once per change; for each audience the frame is built once (``text_frame``) and written
straight to each socket's transport (``Wire``), in the loop that read it: no task wakes up per socket, and nothing
is encoded per socket. Through the ASGI ``send`` (Litestar's wrapper, then uvicorn's, then wsproto's framing) the
same push cost about 65-75 µs of gateway CPU per socket (``souk bench http --mode fanout``, see the README).

The wire is uvicorn's wsproto connection found behind the Litestar socket's ``send`` (``wire_of``); where there
is none (another server, another WebSocket implementation, Litestar's test client), ``push_views`` sends through
ASGI as before, with the same guarantees. A frame written alongside wsproto's is valid WebSocket: uvicorn sends
whole messages only (no fragmented message can be in progress), and with permessage-deflate negotiated an
uncompressed frame (RSV1 clear) is still allowed.

A socket may take JSON Patch frames (``?patch=1``): after a whole view, each view goes as the RFC 6902 patch from
the view its audience had before (``step``: computed once per audience and change, ``diff``), as
``{"patch": [...], "from": V, "version": W}``, when that view is the last one the socket was sent and the patch is
smaller than the view; else the whole view goes (``listeners.Follower``). The client applies it to the view of
version ``from`` it holds and gets the view of ``version``; a client that cannot (it holds another) reconnects.

A slow socket holds up no other: when more than ``MAX_BACKLOG`` bytes wait in its transport, it gets nothing new
until they drain (checked every ``RETRY_S``), then the newest view only (each view is whole).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import msgspec
import structlog
from litestar import WebSocket
from litestar.exceptions import WebSocketDisconnect

from contracts.readmodels import ViewPatch

if TYPE_CHECKING:
    from services.gateway.listeners import Updates

log = structlog.get_logger("souk.gateway")

MAX_BACKLOG = 256 * 1024  # bytes waiting in a socket's transport past which it is sent nothing new for now
RETRY_S = 0.05  # how often a socket held back is checked again


def text_frame(payload: bytes) -> bytes:
    """A final, unmasked (server-to-client) text frame carrying ``payload`` (UTF-8)."""
    n = len(payload)
    if n < 126:
        head = bytes((0x81, n))
    elif n < 65536:
        head = bytes((0x81, 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x81, 127)) + n.to_bytes(8, "big")
    return head + payload


class Step:
    """One view of a feed (an audience's views in this gateway, in the order read): its number ``n``, the number
    of the view before it (``base``, -1: none), and for sockets that take patches, the JSON Patch from that view
    as a text (``patch``) and a frame (``patch_frame``); None when there is no view before or the patch is not
    smaller than the view."""

    __slots__ = ("base", "doc", "n", "patch", "patch_frame", "version")

    def __init__(self, n: int, base: int, version: int, doc: Any, patch: bytes | None) -> None:
        self.n, self.base, self.version, self.doc = n, base, version, doc
        self.patch = patch.decode() if patch is not None else None
        self.patch_frame = text_frame(patch) if patch is not None else None


_encode = msgspec.json.Encoder().encode


def patch_bytes(before: Any, after: Any, from_version: int, version: int) -> bytes:
    """The patch frame's JSON from the view ``before`` to ``after`` (both decoded)."""
    ops: list[dict[str, Any]] = []
    diff(before, after, "", ops)
    return _encode(ViewPatch(tuple(ops), from_version, version))


def diff(before: Any, after: Any, path: str, ops: list[dict[str, Any]]) -> None:
    """Appends to ``ops`` the RFC 6902 operations (add, remove, replace) that make ``before`` into ``after`` (JSON
    values, decoded), in one pass: objects key by key, arrays by their common head and tail and the elements
    between pairwise, the rest added or removed at the end of that middle. Not the shortest patch (no move, no copy),
    but linear in the size of the views: ``jsonpatch.make_patch`` took 5 to 13 ms per view here at the median, and up
    to a second for one Yspahan view (its list diff), in the gateway's event loop."""
    if type(before) is not type(after):
        ops.append({"op": "replace", "path": path, "value": after})
    elif type(after) is dict:
        for key in before:
            if key not in after:
                ops.append({"op": "remove", "path": f"{path}/{_escape(key)}"})
        for key, value in after.items():
            if key in before:
                diff(before[key], value, f"{path}/{_escape(key)}", ops)
            else:
                ops.append({"op": "add", "path": f"{path}/{_escape(key)}", "value": value})
    elif type(after) is list:
        shorter = min(len(before), len(after))
        head = 0
        while head < shorter and type(before[head]) is type(after[head]) and before[head] == after[head]:
            head += 1
        tail = 0
        while (tail < shorter - head and type(before[-1 - tail]) is type(after[-1 - tail])
               and before[-1 - tail] == after[-1 - tail]):
            tail += 1
        old, new = len(before) - tail - head, len(after) - tail - head  # the middles' lengths
        for k in range(min(old, new)):
            diff(before[head + k], after[head + k], f"{path}/{head + k}", ops)
        for _ in range(old - new):  # removed at the same index, one after the other
            ops.append({"op": "remove", "path": f"{path}/{head + new}"})
        for k in range(old, new):
            ops.append({"op": "add", "path": f"{path}/{head + k}", "value": after[head + k]})
    elif before != after:
        ops.append({"op": "replace", "path": path, "value": after})


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def step(previous: Step | None, previous_raw: bytes | None, version: int, raw: bytes) -> Step:
    """The feed's next view after ``previous`` (None: its first), with its patch from ``previous_raw``."""
    doc = msgspec.json.decode(raw)
    if previous is None or previous_raw is None:
        return Step(1, -1, version, doc, None)
    patch = patch_bytes(previous.doc, doc, previous.version, version)
    return Step(previous.n + 1, previous.n, version, doc, patch if len(patch) < len(raw) else None)


class Wire:
    """Direct writes to one uvicorn wsproto WebSocket's transport."""

    __slots__ = ("_open", "protocol")

    def __init__(self, protocol: Any) -> None:
        self.protocol = protocol
        from wsproto.connection import ConnectionState

        self._open = ConnectionState.OPEN

    def usable(self) -> bool:
        """Accepted, not closing, and the client has not started closing it."""
        p = self.protocol
        return (p.handshake_complete and not p.close_sent and p.transport is not None
                and not p.transport.is_closing() and p.conn.state is self._open)

    def backlog(self) -> int:
        return self.protocol.transport.get_write_buffer_size()

    def write(self, frame: bytes) -> None:
        self.protocol.transport.write(frame)


def wire_of(socket: WebSocket) -> Wire | None:
    """The uvicorn wsproto connection that serves ``socket``, found behind its ``send`` (a bound method of the
    protocol, under Litestar's wrappers); None when the socket is served by anything else."""
    try:
        from uvicorn.protocols.websockets.wsproto_impl import WSProtocol
    except ImportError:  # pragma: no cover - uvicorn's wsproto support is a dependency
        return None
    pending, seen = [socket.send], set()
    while pending and len(seen) < 16:
        fn = pending.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, WSProtocol):
            return Wire(owner)
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if callable(value):
                pending.append(value)
    return None


async def push_views(updates: Updates, socket: WebSocket, game_id: str, audience: str, since: int = -1,
                     prelude: Callable[[], Awaitable[int | None]] | None = None, patches: bool = False,
                     on_frame: Callable[[str | bytes], Awaitable[None]] | None = None) -> None:
    """Accepts ``socket``, then sends the audience's view now and after every change, straight to the wire when
    there is one (see the module), else through ASGI. With ``since`` (``?since=N``: the last version the client
    saw), a view is sent only if it is newer. ``prelude``: sends what comes first (``?from=``: the records
    missed, then the current view) and returns the version the client then has (None: it closed the socket).
    With ``patches``, the views after the first whole one go as JSON Patch frames where they can (see the
    module). ``on_frame``: given each frame the client sends (text or bytes), one at a time, in order (the next
    is read when it returns); without it they are read and dropped. Returns when the client leaves."""
    await socket.accept()
    if prelude is not None:
        sent = await prelude()
        if sent is None:
            return
        since = sent
    wire = wire_of(socket)
    async with updates.follow(game_id, audience, since=since, wire=wire, patches=patches) as follower:

        async def drain() -> None:  # the client's frames, and notices the client leaving
            try:
                while True:
                    event = await socket.receive()
                    if event["type"] == "websocket.disconnect":
                        break
                    if on_frame is not None:
                        text = event.get("text")
                        await on_frame(text if text is not None else event.get("bytes") or b"")
            except (WebSocketDisconnect, Exception):  # noqa: BLE001
                pass
            follower.close()

        reader = asyncio.create_task(drain())
        try:
            # the follower offers only what the client has not had (``since`` included); with a wire, nothing:
            while (view := await follower.next()) is not None:  # it returns when the follower closes
                await socket.send_data(view, mode="text")
        except WebSocketDisconnect:
            pass
        finally:
            reader.cancel()
