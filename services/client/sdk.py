"""An async Python client for Souk's HTTP and WebSocket API, typed on the contracts.

Every call may be resent safely, so the client resends it after a timeout, a lost connection, a 5xx, a 429
(after its ``Retry-After``) or a read model not built yet: creates and joins carry a ``request_id`` made here,
commands a ``command_id``. Any other answer that is not a success raises ``SoukError(status, code, message)``.

Views come back as ``TableView`` with ``legal`` holding the game's command Structs and ``view`` its view Struct;
``follow()`` iterates over the views pushed on the WebSocket, reconnecting after a lost connection with ``?from=``
the last version it received (``follow(missed=True)`` also yields the history entries it missed meanwhile).
A seat's ``follow(commands=True)`` also carries its ``send``s while its socket is open (a ``souk.Command`` frame,
answered on the socket as the POST would answer); closed or lost, ``send`` POSTs as it does without it.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator, Sequence
from functools import cache
from typing import Any, Self, TypeVar, Union

import anyio
import httpcore
import httpx
import msgspec
from httpx_ws import (
    WebSocketDisconnect,
    WebSocketNetworkError,
    WebSocketUpgradeError,
    aconnect_ws,
)

from contracts.api import (
    COMMAND_ANSWER,
    Audit,
    BotsSeated,
    CommandAnswer,
    CommandFrame,
    Created,
    Forked,
    GameInfo,
    Joined,
    LegalCommands,
    Webhook,
)
from contracts.base import upcast_event
from contracts.envelope import Reply
from contracts.readmodels import HistoryEntry, HistoryPage, LobbyEntry, TableView
from contracts.table import TABLE_EVENTS
from domain.kernel import get_game

FINAL = ("over", "cancelled")  # a view with this status is the game's last
RETRIED_CODES = ("not_projected", "view_not_ready")  # read models not built yet: they will be
MAX_FRAME = 4 * 1024 * 1024  # the largest WebSocket frame accepted (a whole TableView)
T = TypeVar("T")
LATEST = object()  # send()'s default expected_version: the version of the newest view this seat saw


class SoukError(Exception):
    """An answer that is not a success: its HTTP status (the close code less 4000 for a socket; 0 when the server
    could not be reached) and the API's stable ``code``."""

    def __init__(self, status: int, code: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message, self.retry_after = status, code, message, retry_after

    @classmethod
    def of(cls, response: httpx.Response) -> SoukError:
        try:
            body = response.json()
            code, message = body["code"], body["message"]
        except (ValueError, KeyError, TypeError, httpx.ResponseNotRead):  # not JSON, or a socket's refused upgrade
            code, message = "http_error", f"HTTP {response.status_code}"
        try:
            retry_after = float(response.headers["retry-after"])  # seconds (Souk never sends the date form)
        except (KeyError, ValueError):
            retry_after = None
        return cls(response.status_code, code, message, retry_after)

    @property
    def retryable(self) -> bool:
        """Resending may succeed: the server failed or timed out, asked to slow down, or has not built the views."""
        return (self.status >= 500 or self.status == 0 or self.code == "rate_limited"
                or self.code in RETRIED_CODES)


_view = msgspec.json.Decoder(TableView)


@cache
def _types(game: str) -> tuple[Any, Any, Any] | None:
    """The game's commands, views and events as tagged unions (None: a game this client does not know)."""
    found = get_game(game)
    if found is None:
        return None
    # unions of types known at run time only: Union[...] (X | Y needs them written out)
    commands, views = Union[tuple(found.command_types)], Union[tuple(found.view_types)]  # noqa: UP007
    return tuple[commands, ...], views | None, Union[TABLE_EVENTS + tuple(found.event_types)]  # noqa: UP007


def _upcast(event: Any) -> Any:
    return upcast_event(event) if isinstance(event, dict) else event


def _typed_view(view: TableView) -> TableView:
    types = _types(view.game)
    if types is None:
        return view
    return msgspec.structs.replace(view, legal=msgspec.convert(view.legal, types[0]),
                                   view=msgspec.convert(view.view, types[1]))


def _typed_page(page: HistoryPage, game: str) -> HistoryPage:
    types = _types(game)
    if types is None:
        return page
    # a history shows each event as it was stored: an older shape is read in today's (contracts.base.upcast)
    entries = tuple(msgspec.structs.replace(e, event=msgspec.convert(_upcast(e.event), types[2])) for e in page.entries)
    return msgspec.structs.replace(page, entries=entries)


def _request_id() -> str:
    return secrets.token_urlsafe(24)  # 32 characters: the API wants 16 to 100, random


class SoukClient:
    """``async with SoukClient("http://127.0.0.1:8000") as souk: ...``; pass ``http`` to bring an AsyncClient
    of your own (its base_url must be the server's)."""

    def __init__(self, base_url: str = "http://127.0.0.1:8000", *, http: httpx.AsyncClient | None = None,
                 timeout: float = 15.0, retries: int = 5, reconnect_for: float = 30.0) -> None:
        # The server waits up to SOUK_REPLY_TIMEOUT (5 s) for the engine and 3 s for the views: ``timeout`` is
        # longer, so that a slow answer is not resent for nothing.
        self.http = http or httpx.AsyncClient(base_url=base_url, timeout=timeout)
        self._own_http = http is None
        self.retries = retries
        self.reconnect_for = reconnect_for  # seconds follow() keeps reconnecting without receiving a frame
        self._games: dict[str, str] = {}  # game id -> game name

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._own_http:
            await self.http.aclose()

    # --- lobby ---------------------------------------------------------------------------------------------

    async def catalog(self) -> list[GameInfo]:
        return msgspec.convert((await self._call("GET", "/catalog")).json(), list[GameInfo])

    async def lobby(self, status: str | None = None, game: str | None = None, limit: int = 100,
                    cursor: str | None = None) -> tuple[list[LobbyEntry], str | None]:
        """One page of the lobby, newest first, and the cursor of the next page (None: the last page)."""
        params = {k: v for k, v in {"status": status, "game": game, "limit": limit, "cursor": cursor}.items()
                  if v is not None}
        response = await self._call("GET", "/games", params=params)
        return msgspec.json.decode(response.content, type=list[LobbyEntry]), response.headers.get("x-next-cursor")

    async def game(self, game_id: str) -> LobbyEntry:
        entry = msgspec.json.decode((await self._call("GET", f"/games/{game_id}")).content, type=LobbyEntry)
        self._games[game_id] = entry.game
        return entry

    async def create(self, game: str, title: str, seats: int, options: dict[str, Any] | msgspec.Struct | None = None,
                     *, seed: str | None = None, unfair: bool = False, request_id: str | None = None,
                     webhook: str | None = None) -> Created:
        """Creates a game. The request id (made here unless given) makes a resend answer the same game. A ``seed``
        (64 hex digits: a reproducible game, for tests) needs ``unfair=True``: the game then shows it is not fair.
        ``webhook``: an https URL that hears every seat's notices (README, Webhooks), signed with the answer's
        ``webhook_secret``."""
        body = {"game": game, "title": title, "seats": seats, "request_id": request_id or _request_id(),
                "options": msgspec.to_builtins(options or {})}
        if webhook is not None:
            body["webhook"] = webhook
        if seed is not None:
            body["seed"] = seed
        if unfair:
            body["unfair"] = True
        created = msgspec.json.decode((await self._call("POST", "/games", json=body)).content, type=Created)
        self._games[created.game_id] = game
        return created

    async def fork(self, game_id: str, version: int, title: str | None = None, *, request_id: str | None = None,
                   token: str | None = None) -> Forked:
        """A new game from this finished game's position at ``version`` (README, Forks): its players then join it
        (``join``, each with its entropy: the fork's chance after the position is its own). Returns its id, where
        it comes from and its creator token. ``token``: a seat's, which a private game's fork needs (the fork is
        private then: its answer holds the invite code)."""
        body: dict[str, Any] = {"version": version, "request_id": request_id or _request_id()}
        if title is not None:
            body["title"] = title
        forked = msgspec.json.decode((await self._call("POST", f"/games/{game_id}/fork", token=token,
                                                       json=body)).content, type=Forked)
        self._games[forked.game_id] = self._games.get(game_id) or (await self.game(game_id)).game
        return forked

    async def join(self, game_id: str, name: str, seat: int | None = None, *,
                   request_id: str | None = None, entropy: str | None = None, webhook: str | None = None) -> Seat:
        """Takes a seat (the lowest free one unless ``seat`` is given). The request id (made here unless given)
        makes a resend answer the same seat and token instead of taking another. ``entropy``: the seat's share of
        the game's chance (64 hex digits), drawn here with ``secrets`` unless given ("" gives none). ``webhook``:
        an https URL that hears this seat's notices, signed with the seat's ``webhook_secret``."""
        entropy = secrets.token_hex(32) if entropy is None else entropy
        body = {"name": name, "seat": seat, "request_id": request_id or _request_id(), "entropy": entropy}
        if webhook is not None:
            body["webhook"] = webhook
        joined = msgspec.json.decode((await self._call("POST", f"/games/{game_id}/seats", json=body)).content,
                                     type=Joined)
        game = self._games.get(game_id) or (await self.game(game_id)).game  # Joined does not name the game
        return Seat(self, game, joined)

    async def fill_bots(self, game_id: str, seats: Sequence[int] | None = None, strategy: str | None = None, *,
                        invite: str | None = None, request_id: str | None = None) -> BotsSeated:
        """The server's bots take free seats of an open game (``seats``; None: every free one) and play them from
        the start with ``strategy`` (None: the server's takeover strategy); the game starts when the table is
        full. ``invite``: a private game's code. The request id (made here unless given) makes a resend answer
        the same seats."""
        body: dict[str, Any] = {"seats": None if seats is None else list(seats), "strategy": strategy,
                                "request_id": request_id or _request_id()}
        if invite is not None:
            body["invite"] = invite
        return msgspec.json.decode((await self._call("POST", f"/games/{game_id}/bots", json=body)).content,
                                   type=BotsSeated)

    async def game_webhook(self, game_id: str, creator_token: str) -> Webhook:
        """The game's webhook URL (every seat's notices), with the creator token its creation answered."""
        return await self._webhook("GET", f"/games/{game_id}/webhook", creator_token)

    async def set_game_webhook(self, game_id: str, creator_token: str, url: str, *,
                               request_id: str | None = None) -> Webhook:
        """Sets or changes the game's webhook URL, with the creator token: the answer's ``secret`` is new. The
        request id (made here unless given) makes a resend answer the same secret."""
        return await self._webhook("PUT", f"/games/{game_id}/webhook", creator_token, url, request_id)

    async def remove_game_webhook(self, game_id: str, creator_token: str) -> Webhook:
        """Removes the game's webhook, with the creator token; answers the URL it had."""
        return await self._webhook("DELETE", f"/games/{game_id}/webhook", creator_token)

    async def _webhook(self, method: str, path: str, token: str, url: str | None = None,
                       request_id: str | None = None) -> Webhook:
        body = None if url is None else {"url": url, "request_id": request_id or _request_id()}
        response = await self._call(method, path, token=token, **({} if body is None else {"json": body}))
        return msgspec.json.decode(response.content, type=Webhook)

    # --- spectator -----------------------------------------------------------------------------------------

    async def view(self, game_id: str, min_version: int = 0) -> TableView:
        """The spectator's view; ``min_version`` waits (up to 3 s on the server) for it."""
        response = await self._call("GET", f"/games/{game_id}/view", params={"min_version": min_version})
        return _typed_view(_view.decode(response.content))

    async def history(self, game_id: str, after: int = 0, limit: int = 100) -> HistoryPage:
        return await self._history(f"/games/{game_id}/history", game_id, after, limit, None)

    def entries(self, game_id: str, after: int = 0) -> AsyncIterator[HistoryEntry]:
        """Every history entry after ``after`` as a spectator sees it, page after page."""
        return self._entries(f"/games/{game_id}/history", game_id, after, None)

    async def audit(self, game_id: str) -> Audit:
        """Once the game is over: every event unredacted, and the seed (``services.history.audit.verify_audit``)."""
        return msgspec.json.decode((await self._call("GET", f"/games/{game_id}/audit")).content, type=Audit)

    def follow(self, game_id: str, missed: bool = False, presence: bool = False
               ) -> AsyncIterator[TableView | HistoryPage]:
        """The spectator's views as the WebSocket pushes them (see ``Seat.follow``)."""
        return self._follow(f"/games/{game_id}/ws", {}, None, missed, presence)

    # --- the plumbing --------------------------------------------------------------------------------------

    async def _call(self, method: str, path: str, *, token: str | None = None, **kwargs: Any) -> httpx.Response:
        """One request, resent while the failure is one a resend may cure (every call here is safe to resend)."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        delay = 0.1
        for attempt in range(self.retries + 1):
            try:
                response = await self.http.request(method, path, headers=headers, **kwargs)
                if response.is_success:
                    return response
                error = SoukError.of(response)
            except httpx.TransportError as exc:  # timeouts and connection errors
                error = SoukError(0, "timeout" if isinstance(exc, httpx.TimeoutException) else "unreachable",
                                  f"{type(exc).__name__}: {exc}")
                error.__cause__ = exc
            if not error.retryable or attempt == self.retries:
                raise error
            await asyncio.sleep(error.retry_after if error.retry_after is not None else delay)
            delay = min(delay * 2, 2.0)
        raise AssertionError("unreachable")

    async def _history(self, path: str, game_id: str, after: int, limit: int, token: str | None) -> HistoryPage:
        response = await self._call("GET", path, params={"after": after, "limit": limit}, token=token)
        game = self._games.get(game_id) or (await self.game(game_id)).game
        return _typed_page(msgspec.json.decode(response.content, type=HistoryPage), game)

    async def _entries(self, path: str, game_id: str, after: int, token: str | None) -> AsyncIterator[HistoryEntry]:
        while True:
            page = await self._history(path, game_id, after, 500, token)
            for entry in page.entries:
                yield entry
            if len(page.entries) < 500:
                return
            after = page.next_after

    async def _follow(self, path: str, params: dict[str, str], seat: Seat | None, missed: bool = False,
                      presence: bool = False, link: _Link | None = None) -> AsyncIterator[TableView | HistoryPage]:
        """Views from the socket, newer ones only: after a reconnection (``?from=`` the last version received) the
        server sends the history entries missed, then its current view, which may be one already yielded. With
        ``missed``, those entries are yielded too (a ``HistoryPage``, each entry once). With ``presence``, a view
        of the version last yielded is yielded again when its ``presence`` differs from the one yielded (a seat
        came or went: the server's presence push). Ends after the game's last view (status over or cancelled).
        ``link``: the seat's commands go over this socket while it is open (``Seat.send``)."""
        frames = pumped(self._socket_frames(path, params, _Received(), link))
        last = last_entry = -1
        seen: tuple = ()  # the presence of the view last yielded
        try:
            async for frame in frames:
                if _frame.decode(frame).next_after is not None:  # the history entries missed, before a view
                    if not missed:
                        continue
                    page = _page.decode(frame)
                    entries = tuple(e for e in page.entries if e.seq > last_entry)
                    if entries:
                        last_entry = entries[-1].seq
                        game = self._games.get(page.game_id) or (await self.game(page.game_id)).game
                        yield _typed_page(msgspec.structs.replace(page, entries=entries), game)
                    continue
                view = _typed_view(_view.decode(frame))
                if view.version < last or (view.version == last and not (presence and view.presence != seen)):
                    continue
                last, seen = view.version, view.presence
                last_entry = max(last_entry, view.version)
                self._games[view.game_id] = view.game
                if seat is not None:
                    seat._saw(view.version)
                yield view
                if view.status in FINAL:
                    return
        finally:
            await frames.aclose()

    async def _socket_frames(self, path: str, params: dict[str, str], received: _Received,
                             link: _Link | None = None) -> AsyncIterator[str]:
        """Connects, yields every text frame, and connects again after a lost connection (backoff from 50 ms
        doubling to 2 s) with ``?from=`` the newest view's version received. A refusal (close code 44xx, an upgrade
        refused with a 4xx other than 429), a connection failing for ``reconnect_for`` seconds, or any other error
        is raised. Iterated by a task of its own (``pumped``): httpx-ws's task group stays in that task. With
        ``link``, the socket is offered to the seat's ``send`` while it is open, and the command answers that come
        on it go to the sends waiting for them (never yielded)."""
        delay, failing_since = 0.05, None
        while True:
            query = params if received.version < 0 else {**params, "from": str(received.version)}
            try:
                async with aconnect_ws(path, self.http, params=query, max_message_size_bytes=MAX_FRAME) as ws:
                    if link is not None:
                        link.ws = ws
                    while True:
                        text = await ws.receive_text()
                        if text.startswith(_ANSWER):
                            if link is not None:
                                link.answered(_answer.decode(text))
                            continue
                        kind = _frame.decode(text)
                        if kind.next_after is None:  # a view
                            received.version = max(received.version, kind.version)
                        delay, failing_since = 0.05, None
                        yield text
            except Exception as exc:
                if link is not None:
                    link.lost()
                if asyncio.current_task().cancelling():
                    # httpx-ws's anyio task group can turn a cancellation that comes as the socket fails into
                    # that failure: this task was cancelled all the same
                    raise asyncio.CancelledError from exc
                error = _socket_error(_leaf(exc))
                if error is not None:
                    raise error from None
            now = time.monotonic()
            failing_since = failing_since or now
            if now - failing_since > self.reconnect_for:
                raise SoukError(0, "unreachable", f"no WebSocket for {self.reconnect_for} s")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)


class _Link:
    """A seat's follow() socket as its ``send`` uses it (``follow(commands=True)``): the socket while it is open,
    and the sends waiting for their answers, by command id."""

    def __init__(self) -> None:
        self.ws: Any = None
        self.waiting: dict[str, asyncio.Future] = {}

    def answered(self, answer: CommandAnswer) -> None:
        future = self.waiting.pop(answer.command_id, None)
        if future is not None and not future.done():
            future.set_result(answer)

    def lost(self) -> None:
        """The socket is gone: the sends waiting on it go over HTTP (the same command ids: never played twice)."""
        self.ws = None
        waiting, self.waiting = self.waiting, {}
        for future in waiting.values():
            if not future.done():
                future.set_result(None)

    async def send(self, frame: CommandFrame, timeout: float) -> CommandAnswer | None:
        """The frame's answer on the socket; None when there is no socket, it was lost, or no answer came within
        ``timeout`` (the caller sends the same command over HTTP)."""
        ws = self.ws
        if ws is None:
            return None
        future = self.waiting.get(frame.command_id)
        if future is None:
            future = self.waiting[frame.command_id] = asyncio.get_running_loop().create_future()
        try:
            await ws.send_text(_encode(frame).decode())
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except Exception:  # noqa: BLE001 - a socket that failed or an answer that did not come: HTTP's turn
            return None
        finally:
            if future.done() or self.waiting.get(frame.command_id) is future:
                self.waiting.pop(frame.command_id, None)


_ANSWER = f'{{"type":"{COMMAND_ANSWER}"'
_answer = msgspec.json.Decoder(CommandAnswer)
_encode = msgspec.json.Encoder().encode


class _Frame(msgspec.Struct):
    """What tells a socket's frames apart: a ``HistoryPage`` (``next_after``) or a ``TableView``."""

    version: int
    next_after: int | None = None


_frame = msgspec.json.Decoder(_Frame)
_page = msgspec.json.Decoder(HistoryPage)


class _Received:
    """The newest view's version a follow()'s socket received (-1: none yet): where a reconnection resumes."""

    __slots__ = ("version",)

    def __init__(self) -> None:
        self.version = -1


class _Failed:
    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


_DONE = object()


async def pumped(source: AsyncIterator[T], idle: float | None = None) -> AsyncIterator[T | None]:
    """The items of ``source``, iterated by a task of its own: a WebSocket's task group (httpx-ws) is entered and
    left in that one task, whatever the consumer does between items, and the socket keeps being read meanwhile.
    The source's exception is raised here; with ``idle``, None is yielded whenever no item came for that many
    seconds (the consumer may look elsewhere: ``services.client.remote_bot``). Closing this iterator cancels the
    task."""
    queue: asyncio.Queue[Any] = asyncio.Queue()

    async def pump() -> None:
        try:
            async for item in source:
                queue.put_nowait(item)
        except Exception as exc:
            queue.put_nowait(_Failed(exc))
        else:
            queue.put_nowait(_DONE)

    task = asyncio.create_task(pump())
    try:
        while True:
            try:
                item = await (queue.get() if idle is None else asyncio.wait_for(queue.get(), idle))
            except asyncio.TimeoutError:
                yield None
                continue
            if item is _DONE:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield item
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def _leaf(exc: BaseException) -> BaseException:
    """The first exception inside an exception group (httpx-ws's task group wraps what crosses it)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _socket_error(exc: BaseException) -> BaseException | None:
    """What a socket's failure means for the iterator: None (a lost connection: connect again), a SoukError (the
    server refused it), or the exception itself (anything else, such as a closed client)."""
    if isinstance(exc, WebSocketDisconnect):
        return SoukError(exc.code - 4000, exc.reason, f"the WebSocket was closed with {exc.code}") \
            if 4400 <= exc.code < 4500 else None
    if isinstance(exc, WebSocketUpgradeError):
        error = SoukError.of(exc.response)
        return None if error.retryable else error
    if isinstance(exc, _LOST):
        return None
    return exc


_LOST = (WebSocketNetworkError, httpx.TransportError, httpcore.NetworkError, anyio.BrokenResourceError,
         anyio.ClosedResourceError, anyio.EndOfStream, OSError)  # a connection lost or never made


class Seat:
    """One seat of one game, with its secret token: what a player holds after joining."""

    def __init__(self, client: SoukClient, game: str, joined: Joined) -> None:
        self.client, self.game = client, game
        self.game_id, self.seat, self.token = joined.game_id, joined.seat, joined.token
        self.webhook_secret = joined.webhook_secret  # signs the POSTs to the join's webhook (None without one)
        self.version: int | None = None  # the newest version this handle saw (view, legal, follow)
        self._link: _Link | None = None  # follow(commands=True): the socket send() uses while it is open

    def __repr__(self) -> str:
        return f"Seat({self.game_id!r}, seat={self.seat}, version={self.version})"

    @property
    def _path(self) -> str:
        return f"/games/{self.game_id}/seats/{self.seat}"

    def _saw(self, version: int) -> None:
        self.version = max(self.version or 0, version)

    async def view(self, min_version: int = 0) -> TableView:
        """This seat's view, its secrets and legal commands included; ``min_version`` waits (up to 3 s)."""
        response = await self.client._call("GET", f"{self._path}/view", params={"min_version": min_version},
                                            token=self.token)
        view = _typed_view(_view.decode(response.content))
        self._saw(view.version)
        return view

    async def legal(self) -> LegalCommands:
        response = await self.client._call("GET", f"{self._path}/legal", token=self.token)
        legal = msgspec.json.decode(response.content, type=LegalCommands)
        types = _types(self.game)
        if types is not None:
            legal = msgspec.structs.replace(legal, legal=msgspec.convert(legal.legal, types[0]))
        self._saw(legal.version)
        return legal

    async def history(self, after: int = 0, limit: int = 100) -> HistoryPage:
        """A page of the history as this seat may see it; pass ``next_after`` as ``after`` for the next."""
        return await self.client._history(f"{self._path}/history", self.game_id, after, limit, self.token)

    def entries(self, after: int = 0) -> AsyncIterator[HistoryEntry]:
        return self.client._entries(f"{self._path}/history", self.game_id, after, self.token)

    async def send(self, command: msgspec.Struct | dict[str, Any], *, expected_version: int | None | object = LATEST,
                   command_id: str | None = None) -> Reply:
        """Sends a command (a game's command Struct, or its JSON as a dict). ``expected_version``: by default the
        version of the newest view this handle saw (refused as 409 ``stale`` if the game moved on since); None
        sends without the check. Resent with the same ``command_id`` after a failure: never applied twice. While a
        ``follow(commands=True)`` of this handle has its socket open, the command goes over it (the same answer
        and errors as the POST's); a socket lost or an answer not come goes over HTTP, with the same id."""
        body = {"command": msgspec.to_builtins(command)}
        link = self._link
        if link is not None and link.ws is not None:
            if expected_version is LATEST:
                expected_version = self.version
            command_id = command_id or secrets.token_hex(16)
            answer = await link.send(CommandFrame(command_id, body["command"], expected_version),
                                     self.client.http.timeout.read or 15.0)
            if answer is not None:
                if answer.reply is not None:
                    return answer.reply
                error = answer.error
                failure = SoukError(answer.status, error.code if error else "?", error.message if error else "",
                                    answer.retry_after)
                if not failure.retryable:
                    raise failure
                # retryable (429, 5xx, ...): the HTTP path resends it as it resends its own
        return await self._post("commands", body, expected_version, command_id)

    async def undo(self, to_version: int, *, expected_version: int | None | object = LATEST,
                   command_id: str | None = None) -> Reply:
        """Takes back this seat's last command(s): the game goes back to ``to_version`` (one of its view's
        ``undo.to_versions``). Granted at once, or asked to the other seats (a table with ``undo:
        "with_consent"``; the view's ``undo.request``). Refused: SoukError 422 ``undo_not_allowed`` (across a
        chance outcome or a reveal, or the policy), 409 ``undo_pending``. Resent like ``send``."""
        return await self._post("undo", {"to_version": to_version}, expected_version, command_id)

    async def accept_undo(self, *, expected_version: int | None | object = LATEST,
                          command_id: str | None = None) -> Reply:
        """Agrees to the pending undo request (the last agreement applies it)."""
        return await self._post("undo/accept", {}, expected_version, command_id)

    async def decline_undo(self, *, expected_version: int | None | object = LATEST,
                           command_id: str | None = None) -> Reply:
        """Refuses the pending undo request (it ends); from the requester, withdraws it."""
        return await self._post("undo/decline", {}, expected_version, command_id)

    async def resign(self, *, expected_version: int | None | object = None, command_id: str | None = None) -> Reply:
        """Leaves the game in play for good: bots play this seat's decisions, or the game ends when one seat is
        left. ``expected_version``: none by default (a resignation stands whatever happened since); LATEST or a
        version refuses it as 409 ``stale`` if the game moved on. Resent like ``send``."""
        return await self._post("resign", {}, expected_version, command_id)

    async def webhook(self) -> Webhook:
        """This seat's webhook URL (SoukError 404 ``no_webhook``: none); never its secret."""
        return await self.client._webhook("GET", f"{self._path}/webhook", self.token)

    async def set_webhook(self, url: str, *, request_id: str | None = None) -> Webhook:
        """Sets or changes this seat's webhook URL: the answer's ``secret`` is new (keep it: it signs the POSTs).
        The request id (made here unless given) makes a resend answer the same secret."""
        return await self.client._webhook("PUT", f"{self._path}/webhook", self.token, url, request_id)

    async def remove_webhook(self) -> Webhook:
        """Removes this seat's webhook (SoukError 404 ``no_webhook``: none); answers the URL it had."""
        return await self.client._webhook("DELETE", f"{self._path}/webhook", self.token)

    async def _post(self, route: str, body: dict[str, Any], expected_version: int | None | object,
                    command_id: str | None) -> Reply:
        """A command of this seat to ``route``, with its id (made here unless given) and expected version."""
        if expected_version is LATEST:
            expected_version = self.version
        body = {"command_id": command_id or secrets.token_hex(16), **body}
        if expected_version is not None:
            body["expected_version"] = expected_version
        response = await self.client._call("POST", f"{self._path}/{route}", json=body, token=self.token)
        return msgspec.json.decode(response.content, type=Reply)

    def follow(self, missed: bool = False, presence: bool = False, commands: bool = False
               ) -> AsyncIterator[TableView | HistoryPage]:
        """This seat's views as the WebSocket pushes them: the current one at once, then each change. After a
        lost connection it reconnects with ``?from=`` the newest version received and goes on from the newest
        version it yielded (never an older one, never one twice); with ``missed``, the history entries of what
        happened while it was away come first, as a ``HistoryPage`` (as this seat's history shows them). With
        ``presence``, the presence pushes too: the view of the same version again whenever its ``presence``
        changed (a seat connected or left); without it, each version once (bots play versions). Ends after the
        game's last view; a refused socket (4401 bad token, 4404 no game) raises SoukError. With ``commands``,
        this handle's ``send`` goes over the socket while it is open (the POST otherwise): one connection for
        both ways, and less work for the gateway than a request (README, WebSocket)."""
        if not commands:
            return self.client._follow(f"{self._path}/ws", {"token": self.token}, self, missed, presence)
        return self._linked(missed, presence)

    async def _linked(self, missed: bool, presence: bool) -> AsyncIterator[TableView | HistoryPage]:
        link = self._link = _Link()
        frames = self.client._follow(f"{self._path}/ws", {"token": self.token}, self, missed, presence, link)
        try:
            async for item in frames:
                yield item
        finally:
            link.lost()
            if self._link is link:
                self._link = None
            await frames.aclose()
