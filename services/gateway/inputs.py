"""What the gateway accepts: every request is checked at the door, before anything is queued (issue #8).

A refusal is an ``ApiError`` (``{"code", "message"}``, a 4xx status) and changes nothing; the limits are in
``contracts.api``:

- headers over ``MAX_HEADER_BYTES`` → 431 ``headers_too_large`` (``check_headers``, before the route runs). A
  request line and headers over ``MAX_HEAD_BYTES``, or a request that is not HTTP/1.1, never reach the app:
  uvicorn's parser (httptools) refuses them, and ``JsonHttpToolsProtocol`` (``protocols``, given to uvicorn by
  ``protocols.uvicorn_config``) makes that answer JSON too (431 or 400);
- a body over ``MAX_BODY_BYTES`` → 413 ``body_too_large`` (Litestar's ``request_max_body_size``);
- a body that is not UTF-8, not JSON, nested deeper than ``MAX_BODY_DEPTH``, or not of the route's type →
  400 ``bad_request`` (``StrictBody``: decoded strictly, no ``"3"`` for ``3``, no unknown field);
- an integer in the path or query out of its range → 400 (``in_range``); one that is no integer at all is
  Litestar's ``ValidationException`` (400 ``bad_request``, ``errors.on_validation``).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any, TypeVar

import msgspec
from litestar import Request
from litestar.dto import MsgspecDTO

from contracts.api import MAX_BODY_DEPTH, MAX_HEADER_BYTES, MAX_INT
from services.gateway.errors import ApiError

T = TypeVar("T")

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')  # a JSON string, escapes included
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")


def depth(raw: bytes, limit: int = MAX_BODY_DEPTH) -> int:
    """How deep arrays and objects nest in a JSON text, strings skipped; stops counting past ``limit``.
    Malformed text is left to the decoder (an unterminated string's brackets count: it is refused anyway)."""
    level = deepest = 0
    for bracket in _NOT_BRACKET.sub(b"", _STRING.sub(b"", raw)):
        if bracket in b"[{":
            level += 1
            if level > deepest:
                deepest = level
                if deepest > limit:
                    break
        else:
            level -= 1
    return deepest


def decode(raw: bytes, decoder: msgspec.json.Decoder) -> Any:
    """The body as the decoder's type, strictly; or 400 ``bad_request`` saying what is wrong with it."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(400, "bad_request", f"the body is not valid UTF-8 (byte {exc.start})") from None
    if depth(raw) > MAX_BODY_DEPTH:
        raise ApiError(400, "bad_request", f"the body nests arrays and objects more than {MAX_BODY_DEPTH} deep")
    try:
        return decoder.decode(raw)
    except msgspec.ValidationError as exc:
        raise ApiError(400, "bad_request", f"the body does not fit this request: {exc}") from None
    except msgspec.DecodeError as exc:
        raise ApiError(400, "bad_request", f"the body is not JSON: {exc}") from None


@cache
def _decoder(model: type) -> msgspec.json.Decoder:
    return msgspec.json.Decoder(model, strict=True)


class StrictBody(MsgspecDTO[T]):
    """Decodes a route's ``data`` with ``decode``: strictly (Litestar's own decoding is lax: ``"3"`` for an
    ``int``), refusing what is not UTF-8 or nests too deep. The OpenAPI schema still describes the body."""

    def decode_bytes(self, value: bytes) -> Any:
        return decode(value, _decoder(self.model_type))


def strict(model: type) -> type[StrictBody]:
    """The ``dto`` of a route whose body is ``model``; the schema keeps the model's name."""
    return type(f"Strict{model.__name__}", (StrictBody[model],), {"__schema_name__": model.__name__})


def in_range(value: int, name: str, low: int = 0, high: int = MAX_INT, code: str = "bad_request") -> int:
    if not low <= value <= high:
        raise ApiError(400, code, f"{name} must be an integer from {low} to {high}, not {value}")
    return value


async def check_headers(request: Request) -> None:
    """Litestar's ``before_request``: refuses headers over ``MAX_HEADER_BYTES`` (names and values together)."""
    size = sum(len(name) + len(value) for name, value in request.scope["headers"])
    if size > MAX_HEADER_BYTES:
        raise ApiError(431, "headers_too_large", f"the headers take {size} bytes; at most {MAX_HEADER_BYTES}")

