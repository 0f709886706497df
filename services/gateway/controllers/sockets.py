"""The WebSockets that push a game's views: the spectator's (``/games/{game_id}/ws``) and a seat's
(``/games/{game_id}/seats/{seat}/ws``, with ``?token=``).

Reconnecting: ``?from=V`` (the last version the client saw) first sends what the audience missed since V, its
history entries V < seq <= W as ``HistoryPage`` frames (up to ``CATCH_UP_PAGE`` entries each, redacted as its
history is), then the current view (version W), then every newer one. ``?since=V`` sends only the views newer
than V. ``?patch=1``: after the first whole view, each view comes as a JSON Patch frame from the one before
(``{"patch": [RFC 6902 operations], "from": V, "version": W}``) where it can (``services.gateway.fanout``).

A socket holds no Redis connection and reads nothing itself: the views come from ``Updates``, which reads each
new view once for every socket following it. A refused socket is accepted, then closed with 4000 + the HTTP
status (a browser's WebSocket sees the close code, never an HTTP status refused at the handshake).
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import WebSocket, websocket
from litestar.params import FromPath

from contracts.api import MAX_INT
from contracts.readmodels import HistoryPage
from services.gateway import fanout
from services.gateway.dependencies import GatewayDep
from services.gateway.errors import ApiError, answer_of, not_an_integer
from services.gateway.inputs import in_range
from services.gateway.listeners import Updates
from services.gateway.openapi import AllowingController
from services.gateway.stores import Reads
from services.store import keys
from services.store.codec import encoder


class SocketsController(AllowingController):
    path = "/games/{game_id:str}"

    @websocket("/ws")
    async def spectator_socket(self, socket: WebSocket, game_id: FromPath[str], gateway: GatewayDep) -> None:
        """Pushes the spectator view (a TableView JSON text frame) at once and after every change. A game that
        does not exist: the socket is accepted, then closed with code 4404; a handshake over the client's rate,
        4429."""
        try:
            await gateway.limits.check_request(socket)  # a handshake takes from the client's budget as a request
            await gateway.reads.game_name(game_id)
        except Exception as exc:  # noqa: BLE001 - answer_of re-raises what is no refusal
            await refuse_or_raise(socket, exc)
            return
        await push_views(gateway.updates, socket, game_id, None, since(socket), gateway.reads)

    @websocket("/seats/{seat:int}/ws")
    async def seat_socket(self, socket: WebSocket, game_id: FromPath[str], seat: FromPath[int],
                          gateway: GatewayDep) -> None:
        """Pushes this seat's view at once and after every change. Authenticate with ``?token=``. Refused, the
        socket is accepted, then closed with code 4000 + the HTTP status (4401: a missing or bad token; 4404: no
        such game; 4429: over the client's or the token's rate) and the error's code as the reason."""
        try:
            await gateway.limits.check_request(socket)
            # not "seen" for a minute as a request is: the socket holds the seat's presence while it is open
            await gateway.auth.authorize(game_id, seat, socket.query_params.get("token"), seen=False)
        except Exception as exc:  # noqa: BLE001 - answer_of re-raises what is no refusal
            await refuse_or_raise(socket, exc)
            return
        await push_views(gateway.updates, socket, game_id, seat, since(socket), gateway.reads)


def closing_bad_paths(handler: Any, routes: list) -> Any:
    """``handler`` (the app's ASGI handler) with the WebSockets that no route takes only because the seat is not a
    number (``/games/X/seats/abc/ws``) accepted, then closed with 4400 ``bad_request`` as every refused socket is:
    Litestar refuses them at the handshake (an HTTP 403 that a browser's WebSocket never shows)."""

    async def handle(scope, receive, send) -> None:
        if scope["type"] == "websocket" and not_an_integer(routes, scope["path"]):
            await receive()  # websocket.connect
            await send({"type": "websocket.accept"})
            await send({"type": "websocket.close", "code": 4400, "reason": "bad_request"})
            return
        await handler(scope, receive, send)

    return handle


async def refuse(socket: WebSocket, exc: ApiError) -> None:
    """Accepts, then closes with 4000 + the HTTP status and the error's code as the reason."""
    await socket.accept()
    await socket.close(code=4000 + exc.status_code, reason=exc.code)


async def refuse_or_raise(socket: WebSocket, exc: Exception) -> None:
    """An ApiError, or a store's refusal (4503 ``store_unavailable``), refuses the socket; anything else is a bug
    and raised (Litestar closes the socket with 4500)."""
    answer = answer_of(exc)
    if answer is None:
        raise exc
    await refuse(socket, answer)


def since(socket: WebSocket) -> int:
    """``?since=N``: the version a reconnecting client last saw (views up to it are not sent again)."""
    raw = socket.query_params.get("since")
    try:
        return max(-1, int(raw)) if raw is not None else -1
    except ValueError:
        return -1


def patching(socket: WebSocket) -> bool:
    """``?patch=1`` (or ``true``): the client applies JSON Patch frames."""
    return socket.query_params.get("patch", "").lower() in ("1", "true")


def start_from(socket: WebSocket) -> int | None:
    """``?from=V``: the version a reconnecting client last saw (None: not given); 400 ``bad_version`` when it is
    not a whole number from 0, ``bad_request`` beside ``since``."""
    raw = socket.query_params.get("from")
    if raw is None:
        return None
    if socket.query_params.get("since") is not None:
        raise ApiError(400, "bad_request", "reconnect with from (the records missed, then the view) or since (the "
                                           "views only), not both")
    try:
        return in_range(int(raw), "from", 0, MAX_INT, "bad_version")
    except ValueError:
        raise ApiError(400, "bad_version", f"from is the last version the client saw, not {raw!r}") from None


async def push_views(updates: Updates, socket: WebSocket, game_id: str, seat: int | None, since: int = -1,
                     reads: Reads | None = None) -> None:
    """Sends the view now and after every change, framed once for every socket of its audience and written
    straight to the wire where uvicorn's wsproto serves the socket (``services.gateway.fanout``). A client
    reconnecting with ``?since=N`` gets the current view only if it is newer than N, then every change; with
    ``?from=N`` (and ``reads``), the history entries it missed first (see the module). A seat's socket holds its
    presence while it is open (``reads.presence``): the views pushed, its own first, show it connected."""
    prelude = None
    patches = patching(socket)
    if reads is not None:
        try:
            start = start_from(socket)
        except ApiError as exc:
            await refuse(socket, exc)
            return
        if start is not None:
            async def prelude() -> int | None:
                return await catch_up(reads, socket, game_id, seat, start)
    if seat is None or reads is None or reads.presence is None:
        await fanout.push_views(updates, socket, game_id, keys.audience(seat), since, prelude, patches)
        return
    async with reads.presence.socket(game_id, seat):
        await fanout.push_views(updates, socket, game_id, keys.audience(seat), since, prelude, patches)


CATCH_UP_PAGE = 500  # history entries per frame of a ?from= catch-up


async def catch_up(reads: Reads, socket: WebSocket, game_id: str, seat: int | None, start: int) -> int | None:
    """Sends (``socket`` accepted) the audience's history entries after ``start`` up to the current view, as
    ``HistoryPage`` frames, then the view; returns its version. A read that fails closes the socket with 4000 +
    its status (None)."""
    try:
        raw = await reads.view_bytes(game_id, seat)
        version = _version.decode(raw).version
        after = start
        while after < version:
            page = await reads.history(game_id, seat, after, min(CATCH_UP_PAGE, version - after))
            entries = tuple(e for e in page.entries if e.seq <= version)
            if not entries:
                break
            after = entries[-1].seq
            await socket.send_data(encoder.encode(HistoryPage(game_id, seat, entries, after, version)).decode(),
                                   mode="text")
    except Exception as exc:  # noqa: BLE001 - answer_of re-raises what is no refusal
        answer = answer_of(exc)
        if answer is None:
            raise
        await socket.close(code=4000 + answer.status_code, reason=answer.code)
        return None
    await socket.send_data(raw.decode(), mode="text")
    return version


class _Versioned(msgspec.Struct):
    version: int


_version = msgspec.json.Decoder(_Versioned)
