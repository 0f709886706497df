"""The WebSockets that push a game's views: the spectator's (``/games/{game_id}/ws``) and a seat's
(``/games/{game_id}/seats/{seat}/ws``, with ``?token=``).

A socket holds no Redis connection and reads nothing itself: the views come from ``Updates``, which reads each
new view once for every socket following it. A refused socket is accepted, then closed with 4000 + the HTTP
status (a browser's WebSocket sees the close code, never an HTTP status refused at the handshake).
"""

from __future__ import annotations

from litestar import WebSocket, websocket

from services.gateway import fanout
from services.gateway.dependencies import AuthDep, ReadsDep, UpdatesDep
from services.gateway.errors import ApiError
from services.gateway.listeners import Updates
from services.gateway.openapi import AllowingController
from services.store import keys


class SocketsController(AllowingController):
    path = "/games/{game_id:str}"

    @websocket("/ws")
    async def spectator_socket(self, socket: WebSocket, game_id: str, reads: ReadsDep, updates: UpdatesDep) -> None:
        """Pushes the spectator view (a TableView JSON text frame) at once and after every change. A game that
        does not exist: the socket is accepted, then closed with code 4404."""
        try:
            await reads.game_name(game_id)
        except ApiError as exc:
            await refuse(socket, exc)
            return
        await push_views(updates, socket, game_id, None, since(socket))

    @websocket("/seats/{seat:int}/ws")
    async def seat_socket(self, socket: WebSocket, game_id: str, seat: int, auth: AuthDep, updates: UpdatesDep) -> None:
        """Pushes this seat's view at once and after every change. Authenticate with ``?token=``. Refused, the
        socket is accepted, then closed with code 4000 + the HTTP status (4401: a missing or bad token; 4404: no
        such game) and the error's code as the reason."""
        try:
            await auth.authorize(game_id, seat, socket.query_params.get("token"))
        except ApiError as exc:
            await refuse(socket, exc)
            return
        await push_views(updates, socket, game_id, seat, since(socket))


async def refuse(socket: WebSocket, exc: ApiError) -> None:
    """Accepts, then closes with 4000 + the HTTP status and the error's code as the reason."""
    await socket.accept()
    await socket.close(code=4000 + exc.status_code, reason=exc.code)


def since(socket: WebSocket) -> int:
    """``?since=N``: the version a reconnecting client last saw (views up to it are not sent again)."""
    raw = socket.query_params.get("since")
    try:
        return max(-1, int(raw)) if raw is not None else -1
    except ValueError:
        return -1


async def push_views(updates: Updates, socket: WebSocket, game_id: str, seat: int | None, since: int = -1) -> None:
    """Sends the view now and after every change, framed once for every socket of its audience and written
    straight to the wire where uvicorn's wsproto serves the socket (``services.gateway.fanout``). A client
    reconnecting with ``?since=N`` gets the current view only if it is newer than N, then every change."""
    await fanout.push_views(updates, socket, game_id, keys.audience(seat), since)
