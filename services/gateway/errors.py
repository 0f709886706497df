"""The gateway's errors: every one is ``{"code", "message"}`` with a stable code (contracts.api.ApiErrorBody)."""

from __future__ import annotations

import re
from functools import cache

import structlog
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.status_codes import HTTP_500_INTERNAL_SERVER_ERROR

from contracts.api import MAX_BODY_BYTES, ApiErrorBody
from contracts.envelope import Reply
from services.store.refusals import refusal

log = structlog.get_logger("souk.gateway")


class ApiError(HTTPException):
    def __init__(self, status_code: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(status_code=status_code, detail=message, headers=headers)
        self.code = code
        self.message = message


def error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
    return Response(ApiErrorBody(code, message), status_code=status, headers=headers)


def on_api_error(_: Request, exc: ApiError) -> Response:
    return error_response(exc.status_code, exc.code, exc.message, exc.headers)


def on_validation(_: Request, exc: ValidationException) -> Response:
    """Litestar's own checks of the path and query (an integer that is none) and of a body that is missing."""
    problems = [_problem(e) for e in exc.extra] if isinstance(exc.extra, list) and exc.extra else [str(exc.detail)]
    return error_response(400, "bad_request", "; ".join(problems))


def _problem(error: object) -> str:
    if not isinstance(error, dict):
        return str(error)
    key, source = error.get("key"), getattr(error.get("source"), "value", error.get("source"))
    if key == "data" and source == "body":
        return "the request needs a JSON body"
    return f"{source} parameter {key!r}: {error.get('message')}" if source else f"{key!r}: {error.get('message')}"


_HTTP_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 413: "body_too_large",
               431: "headers_too_large"}
_HTTP_MESSAGES = {413: f"the body is over {MAX_BODY_BYTES} bytes"}


def on_http(request: Request, exc: HTTPException) -> Response:
    """Litestar's own refusals, with their headers (a 405 names the methods the path allows: ``Allow``). A path
    that no route takes only because an integer parameter is not an integer (``/games/X/seats/abc/view``) is a 400,
    as a query parameter that is not one is."""
    if exc.status_code == 404 and (name := not_an_integer(request.app.routes, request.scope["path"])):
        return error_response(400, "bad_request", f"path parameter {name!r}: expected an integer")
    message = _HTTP_MESSAGES.get(exc.status_code, str(exc.detail))
    return error_response(exc.status_code, _HTTP_CODES.get(exc.status_code, "http_error"), message, exc.headers)


def not_an_integer(routes: list, path: str) -> str | None:
    """The integer parameter that keeps ``path`` from a route, if another value there would have matched."""
    for pattern in _integer_routes(tuple(route.path for route in routes)):
        if (match := pattern.fullmatch(path)) is not None:
            for name, value in match.groupdict().items():
                if not re.fullmatch(r"-?\d+", value):
                    return name
    return None


@cache
def _integer_routes(paths: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """Each route with an integer parameter as a pattern that takes any segment there (named groups)."""
    def segment(part: str) -> str:
        if (param := re.fullmatch(r"\{(\w+):int\}", part)) is not None:
            return f"(?P<{param[1]}>[^/]+)"
        return ".*" if re.fullmatch(r"\{\w+:path\}", part) else "[^/]+" if part.startswith("{") else re.escape(part)
    return tuple(re.compile("/".join(segment(part) for part in path.split("/")))
                 for path in paths if ":int}" in path)


def store_unavailable(exc: BaseException) -> ApiError | None:
    """A store's refusal (``services.store.refusals``: loading, out of memory, read-only, busy, away), logged: 503
    ``store_unavailable`` with ``Retry-After``, the condition in the message (not our fault, and the client may
    retry). None for an exception that is no refusal. The one place a refusal becomes an answer, on every path."""
    found = refusal(exc)
    if found is None:
        return None
    log.warning("store_unavailable", condition=found.condition, error=str(exc))
    return ApiError(503, "store_unavailable", found.message, {"Retry-After": str(found.retry_after_s)})


def answer_of(exc: BaseException) -> ApiError | None:
    """The answer an error gets where no exception handler runs (a WebSocket's): an ApiError as it is, a store's
    refusal as ``store_unavailable``; None for anything else (a bug)."""
    return exc if isinstance(exc, ApiError) else store_unavailable(exc)


def crash_answer(exc: BaseException) -> ApiError:
    """The answer to an exception that is no ApiError, logged: a store's refusal as ``store_unavailable``, anything
    else (a bug) as 500 ``internal_error``. The route's exception handler, its fast path and a socket's command
    frames all answer this way."""
    answer = store_unavailable(exc)
    if answer is not None:
        return answer
    log.exception("gateway_error", error=str(exc))
    return ApiError(HTTP_500_INTERNAL_SERVER_ERROR, "internal_error", "the server failed; the request may be retried")


def on_crash(request: Request, exc: Exception) -> Response:
    return on_api_error(request, crash_answer(exc))


def raise_if_rejected(reply: Reply) -> None:
    if reply.status != "accepted":
        status = 404 if reply.code == "game_not_found" else 409 if reply.code in _CONFLICTS else 422
        raise ApiError(status, reply.code, reply.message)


_CONFLICTS = {"seat_taken", "game_started", "game_exists", "conflict", "stale", "superseded", "game_cancelled",
              "undo_pending"}


