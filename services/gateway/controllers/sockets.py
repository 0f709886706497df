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

A seat's socket carries its commands too (``Commands``): the client sends a ``CommandFrame`` (the POST
``…/seats/{seat}/commands`` body with ``"type": "souk.Command"``), the gateway answers each frame with a
``CommandAnswer`` on the same socket: the POST's status and body, through the POST's own steps (the client's and the
token's rate, the body decoded strictly, the token checked, ``controllers.seats.send_checked``). Frames are handled
one at a time, in the order sent. A frame that is no command (not JSON, another ``type``) is answered 400
``bad_frame``, a spectator's command 403 ``not_a_seat``; the socket stays open either way.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from litestar import WebSocket, websocket
from litestar.params import FromPath

from contracts.api import COMMAND_FRAME, MAX_BODY_BYTES, MAX_INT, ApiErrorBody, CommandAnswer, CommandFrame
from contracts.readmodels import HistoryPage
from services.gateway import fanout
from services.gateway.dependencies import Gateway, GatewayDep
from services.gateway.errors import ApiError, answer_of, crash_answer, not_an_integer
from services.gateway.inputs import _decoder, decode, in_range
from services.gateway.listeners import Updates
from services.gateway.openapi import AllowingController
from services.gateway.stores import Reads
from services.runtime import metrics
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
        await push_views(gateway.updates, socket, game_id, None, since(socket), gateway.reads,
                         Commands(gateway, socket, game_id, None).on_frame)

    @websocket("/seats/{seat:int}/ws")
    async def seat_socket(self, socket: WebSocket, game_id: FromPath[str], seat: FromPath[int],
                          gateway: GatewayDep) -> None:
        """Pushes this seat's view at once and after every change. Authenticate with ``?token=``. Refused, the
        socket is accepted, then closed with code 4000 + the HTTP status (4401: a missing or bad token; 4404: no
        such game; 4429: over the client's or the token's rate) and the error's code as the reason. Carries the
        seat's commands too: a ``CommandFrame`` is answered with a ``CommandAnswer`` (the module)."""
        try:
            await gateway.limits.check_request(socket)
            # not "seen" for a minute as a request is: the socket holds the seat's presence while it is open
            await gateway.auth.authorize(game_id, seat, socket.query_params.get("token"), seen=False)
        except Exception as exc:  # noqa: BLE001 - answer_of re-raises what is no refusal
            await refuse_or_raise(socket, exc)
            return
        await push_views(gateway.updates, socket, game_id, seat, since(socket), gateway.reads,
                         Commands(gateway, socket, game_id, seat).on_frame)


_frame_decoder = _decoder(CommandFrame)
_encode = msgspec.json.Encoder().encode


class _Named(msgspec.Struct):
    """What is read of a frame that is no command: its ``type`` and ``command_id`` (for the answer) if any."""

    type: Any = None
    command_id: Any = None


class Commands:
    """The commands a socket carries (see the module): each frame decoded and sent as the POST sends its body, and
    answered on the socket, straight to the wire where there is one (``fanout.Wire``), else through ASGI."""

    __slots__ = ("game_id", "gateway", "seat", "socket", "wire")

    def __init__(self, gateway: Gateway, socket: WebSocket, game_id: str, seat: int | None) -> None:
        self.gateway, self.socket, self.game_id, self.seat = gateway, socket, game_id, seat
        self.wire: fanout.Wire | None | bool = False  # False: not looked for yet (the socket is accepted first)

    async def on_frame(self, raw: str | bytes) -> None:
        body = raw.encode() if isinstance(raw, str) else raw
        command_id = ""
        try:
            if len(body) > MAX_BODY_BYTES:
                raise ApiError(413, "body_too_large", f"the frame is over {MAX_BODY_BYTES} bytes")
            frame = _command_frame(body)
            command_id = frame.command_id
            answer = await self._send(frame)
        except Exception as exc:  # noqa: BLE001 - every frame is answered; what is no refusal is a bug, answered 500
            answer = self._refusal(command_id or _command_id(body), exc)
        await self._answer(answer)

    async def _send(self, frame: CommandFrame) -> CommandAnswer:
        """The POST's steps (``fastpath``: before_request, the body, the token, ``send_checked``) for one frame."""
        from services.gateway.controllers.seats import send_checked

        gateway = self.gateway
        await gateway.limits.check_request(self.socket)  # a command takes from the client's and token's budgets
        if self.seat is None:
            raise ApiError(403, "not_a_seat", "a spectator's socket carries no commands: send them on the seat's "
                                              "socket (/games/{game_id}/seats/{seat}/ws?token=) or POST them")
        # the token as the socket was opened with, checked again as each POST's is (a seat given back loses it);
        # not "seen": the open socket holds the seat's presence
        hashed = await gateway.auth.authorize(self.game_id, self.seat, self.socket.query_params.get("token"),
                                              seen=False)
        reply = await send_checked(gateway, self.game_id, self.seat, hashed, frame)
        return CommandAnswer(frame.command_id, 200, reply=reply)

    @staticmethod
    def _refusal(command_id: str, exc: Exception) -> CommandAnswer:
        answer = exc if isinstance(exc, ApiError) else crash_answer(exc)
        retry = (answer.headers or {}).get("Retry-After")
        return CommandAnswer(command_id, answer.status_code, error=ApiErrorBody(answer.code, answer.message),
                             retry_after=int(retry) if retry and retry.isdigit() else None)

    async def _answer(self, answer: CommandAnswer) -> None:
        metrics.SOCKET_COMMANDS.labels(str(answer.status), answer.error.code if answer.error else "").inc()
        payload = _encode(answer)
        if self.wire is False:
            self.wire = fanout.wire_of(self.socket)
        wire = self.wire
        if wire is not None and wire is not False:
            if wire.usable():
                wire.write(fanout.text_frame(payload))
            return
        await self.socket.send_data(payload.decode(), mode="text")


def _command_frame(body: bytes) -> CommandFrame:
    """The frame as a command, decoded as the POST decodes its body (400 ``bad_request`` for what does not fit);
    400 ``bad_frame`` when it is no JSON object of ``"type": "souk.Command"``."""
    try:
        frame = decode(body, _frame_decoder)
    except ApiError as exc:
        if _named(body).type != COMMAND_FRAME:
            raise _bad_frame(exc.message) from None
        raise
    if _named(body).type != COMMAND_FRAME:  # msgspec takes a lone tagged struct without its tag
        raise _bad_frame("no type")
    return frame


def _bad_frame(why: str) -> ApiError:
    return ApiError(400, "bad_frame", f'a client sends command frames only: a JSON object with "type": '
                                      f'"{COMMAND_FRAME}", "command_id", "command" (and "expected_version"), not this '
                                      f'({why})')


def _named(body: bytes) -> _Named:
    """The frame's ``type`` and ``command_id`` as far as they can be read (None where they cannot)."""
    try:
        return msgspec.json.decode(body, type=_Named)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return _Named()


def _command_id(body: bytes) -> str:
    found = _named(body).command_id
    return found if isinstance(found, str) and len(found) <= 100 else ""


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
                     reads: Reads | None = None, on_frame: Any = None) -> None:
    """Sends the view now and after every change, framed once for every socket of its audience and written
    straight to the wire where uvicorn's wsproto serves the socket (``services.gateway.fanout``). A client
    reconnecting with ``?since=N`` gets the current view only if it is newer than N, then every change; with
    ``?from=N`` (and ``reads``), the history entries it missed first (see the module). A seat's socket holds its
    presence while it is open (``reads.presence``): the views pushed, its own first, show it connected.
    ``on_frame``: given each frame the client sends (``Commands.on_frame``)."""
    prelude: Callable[[], Awaitable[int | None]] | None = None
    patches = patching(socket)
    if reads is not None:
        try:
            start = start_from(socket)
        except ApiError as exc:
            await refuse(socket, exc)
            return
        if start is not None:
            prelude = functools.partial(catch_up, reads, socket, game_id, seat, start)
    if seat is None or reads is None or reads.presence is None:
        await fanout.push_views(updates, socket, game_id, keys.audience(seat), since, prelude, patches, on_frame)
        return
    async with reads.presence.socket(game_id, seat):
        await fanout.push_views(updates, socket, game_id, keys.audience(seat), since, prelude, patches, on_frame)


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
