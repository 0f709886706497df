"""The command route's fast path: ``POST /games/{game_id}/seats/{seat}/commands`` served in front of Litestar.

Litestar's request machinery (routing, the signature model's keyword arguments, the DTO's body extraction, the
``Response`` and its ``ASGIResponse``) cost about a third of the gateway's CPU a command, more than the route's
own work (measured with py-spy on ``souk bench http --target split``: ``Litestar.__call__`` 50% of the gateway's
samples, ``send_command`` 10% of them). This ASGI wrapper answers that one route itself, with the same steps in the
same order and the same functions as the route (``controllers.seats.send_command``):

1. the app's ``before_request`` (header size, no ``?token=``, rate limits);
2. the body decoded strictly (``inputs.decode``, what the route's ``StrictBody`` DTO calls);
3. the seat's token (``Auth.authorize``), then the route's own ``controllers.seats.send_checked``: the command
   id, the game's name, the command checked (``convert``), queued and waited for (``_submit``);
4. the answer, or the error as ``{"code", "message"}`` (``errors``), with its headers (``Retry-After``).

Anything it does not handle the way Litestar would goes to Litestar unchanged, before any step has run: another
path or method, a query string, a ``root_path``, a body without ``Content-Length`` or over ``MAX_BODY_BYTES``, an
empty body, a seat that is not a plain number, a ``Host`` Litestar refuses, or CORS configured (its headers are
Litestar's). The request's ``traceparent`` (``tracing.asgi_middleware``) and the access log and metrics
(``access.observed``, with Litestar's route template) are the same. ``tests/services/test_gateway_fastpath.py``
compares its answers byte for byte with Litestar's.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
from litestar._asgi.utils import is_valid_host

from contracts.api import MAX_BODY_BYTES, ApiErrorBody, CommandRequest
from services.gateway.errors import ApiError, crash_answer
from services.gateway.inputs import _decoder, decode
from services.runtime import tracing


_PATH = re.compile(r"/games/([^/]+)/seats/([0-9]{1,18})/commands")
_JSON = (b"content-type", b"application/json")
_encode = msgspec.json.Encoder().encode


class _Address:
    __slots__ = ("host", "port")

    def __init__(self, client: Any) -> None:
        self.host, self.port = client[0], client[1]


class _Headers:
    """What the gateway's checks read of a request's headers: ``get`` by lower-case name, the first value."""

    __slots__ = ("_raw",)

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        self._raw = raw

    def get(self, name: str, default: Any = None) -> Any:
        wanted = name.encode("latin-1")
        for key, value in self._raw:
            if key.lower() == wanted:
                return value.decode("latin-1")
        return default


class FastRequest:
    """The few parts of a Litestar ``Request`` that ``Gateway.before_request``, ``Limits.check_request`` and
    ``auth.bearer`` use (the fast path takes no query string: ``query_params`` is empty)."""

    __slots__ = ("scope", "headers", "query_params", "client")

    def __init__(self, scope: dict) -> None:
        self.scope = scope
        self.headers = _Headers(scope["headers"])
        self.query_params: dict[str, str] = {}
        client = scope.get("client")
        self.client = _Address(client) if client else None


def _content_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    found = None
    for key, value in headers:
        if key.lower() == b"content-length":
            if found is not None or not value.isdigit():
                return None  # twice, or not a number: Litestar's to answer
            found = int(value)
        elif key.lower() == b"host" and not is_valid_host(value):
            return None
    return found


async def _send_json(send: Any, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
    raw = [_JSON, (b"content-length", str(len(body)).encode())]
    if headers:
        raw += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def commands_fast_path(app: Any, gateway: Any, path_template: str, enabled: bool = True) -> Any:
    """``app`` (the gateway's ASGI handler) with the command route served by the fast path (``enabled``: False
    when CORS is configured, or to measure without it)."""
    from services.gateway.auth import bearer
    from services.gateway.controllers.seats import send_checked

    decoder = _decoder(CommandRequest)

    async def handle(scope, receive, send) -> None:
        game_id, seat, body = scope.pop("souk.fast")
        request = FastRequest(scope)
        try:
            await gateway.before_request(request)
            data = decode(body, decoder)
            hashed = await gateway.auth.authorize(game_id, seat, bearer(request))
            reply = await send_checked(gateway, game_id, seat, hashed, data)
        except ApiError as exc:
            await _send_json(send, exc.status_code, _encode(ApiErrorBody(exc.code, exc.message)), exc.headers)
            return
        except Exception as exc:  # noqa: BLE001 - as errors.on_crash answers it
            answer = crash_answer(exc)
            await _send_json(send, answer.status_code, _encode(ApiErrorBody(answer.code, answer.message)),
                             answer.headers)
            return
        await _send_json(send, 200, _encode(reply))

    traced = tracing.asgi_middleware(handle)

    async def fast(scope, receive, send) -> None:
        if (not enabled or scope["type"] != "http" or scope["method"] != "POST" or scope.get("query_string")
                or scope.get("root_path")):
            await app(scope, receive, send)
            return
        match = _PATH.fullmatch(scope["path"])
        length = _content_length(scope["headers"]) if match is not None else None
        if match is None or not length or length > MAX_BODY_BYTES:
            await app(scope, receive, send)
            return
        chunks = []
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away: Litestar's to answer
                await app(scope, _replay([], message, receive), send)
                return
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if len(body) != length:
            await app(scope, _replay(chunks, None, receive), send)
            return
        scope["path_template"] = path_template
        scope["souk.fast"] = (match[1], int(match[2]), body)
        await traced(scope, receive, send)

    return fast


def _replay(chunks: list[bytes], last: Any, receive: Any) -> Any:
    """A ``receive`` that gives the body already read, then what follows."""
    queue = [{"type": "http.request", "body": b"".join(chunks), "more_body": False}] if chunks else []
    if last is not None:
        queue.append(last)

    async def replayed() -> Any:
        return queue.pop(0) if queue else await receive()

    return replayed
