"""What the gateway says about itself: its OpenAPI document (``/schema/openapi.json``), and OPTIONS.

Litestar documents a 400 of its own shape (``{status_code, detail, extra}``) and no other error; the gateway
answers every error as ``{"code", "message"}`` (``contracts.api.ApiErrorBody``), with statuses Litestar cannot
know. ``Documented``, a Litestar init plugin, sets on every HTTP route:

- the errors it may answer, each as an ``ApiErrorBody`` (derived from its path and method: any request 400, 429,
  431; a game's routes 404 and 503; a seat's routes, and a game's cancellation, 401; writes 409, 422, 504, and
  413 for a body; the audit 409);
- the ``seatToken`` bearer scheme on the routes that take a token;
- the ranges of the integer parameters the gateway checks itself (``seat``, ``after``, ``limit``,
  ``min_version``), which a client or a fuzzer otherwise cannot know.

``AllowedMethods`` answers ``OPTIONS`` on every path with an ``Allow`` naming every method the path serves (a
controller's paths: ``AllowingController``).

Schemathesis checks the gateway against this document (tests/fuzz/test_schemathesis.py).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from collections.abc import Iterable, Iterator

from litestar import Controller, route
from litestar.config.app import AppConfig
from litestar.datastructures import ResponseHeader
from litestar.enums import HttpMethod
from litestar.handlers import BaseRouteHandler, HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Components, Operation, Schema, SecurityScheme
from litestar.plugins import InitPlugin
from litestar.utils.path import join_paths

from contracts.api import MAX_INT, ApiErrorBody

SECURITY = "seatToken"
ERRORS = {
    400: "Malformed input: bad_request, bad_page, bad_filter, bad_command, bad_command_id, bad_request_id, bad_seed",
    401: "missing_token or bad_token",
    404: "game_not_found",
    409: "seat_taken, game_started, game_exists, conflict, stale, game_cancelled, game_not_over",
    413: "body_too_large: a body over 64 KiB",
    422: "refused by the rules: not_your_turn, game_over, ... (each game's codes in its rules.py)",
    429: "rate_limited (see Retry-After) or too_many_open_games",
    431: "headers_too_large",
    503: "not_projected or view_not_ready: the game's read models are not built yet (retry shortly); "
         "store_unavailable: a Redis store does not answer",
    504: "engine_timeout: the command is queued; resend it with the same id to learn its outcome",
}
# The integer parameters the gateway checks itself (services/gateway/inputs.in_range), by path ("" for any).
LIMITS: dict[tuple[str, str], tuple[int, int]] = {
    ("", "seat"): (0, MAX_INT),
    ("", "after"): (0, MAX_INT),
    ("", "min_version"): (0, MAX_INT),
    ("", "limit"): (1, 1000),
    ("/games", "limit"): (1, 200),
}
_TYPED = re.compile(r"\{(\w+):\w+\}")


def errors_of(path: str, method: str) -> list[int]:
    """The error statuses a route may answer (``path`` as documented: ``/games/{game_id}``)."""
    codes = {400, 429, 431}
    if "{game_id}" in path:
        codes |= {404, 503}
    if needs_token(path, method):
        codes.add(401)
    if method in ("POST", "PUT", "PATCH", "DELETE"):
        codes |= {409, 422, 504}
        if method != "DELETE":
            codes.add(413)
    if path.endswith("/audit"):
        codes.add(409)
    return sorted(codes)


def needs_token(path: str, method: str) -> bool:
    return "{seat}" in path or (method == "DELETE" and path == "/games/{game_id}")


def _operation_class(path: str) -> type[Operation]:
    limits = {name: bounds for (where, name), bounds in LIMITS.items() if where == ""}
    limits.update({name: bounds for (where, name), bounds in LIMITS.items() if where == path})

    @dataclasses.dataclass
    class DocumentedOperation(Operation):
        def __post_init__(self) -> None:
            for parameter in self.parameters or ():
                bounds = limits.get(getattr(parameter, "name", ""))
                if bounds is not None and isinstance(parameter.schema, Schema):
                    parameter.schema = dataclasses.replace(parameter.schema, minimum=bounds[0], maximum=bounds[1])

    return DocumentedOperation


def http_handlers(route_handlers: Iterable[Any]) -> Iterator[tuple[list[str], HTTPRouteHandler]]:
    """Every HTTP route handler of an app's ``route_handlers``, those of its controllers included, with its
    paths (the controller's path joined to the handler's). A controller's handlers are the class's own: what is
    set on them here is what Litestar copies when it registers the controller."""
    for value in route_handlers:
        if isinstance(value, HTTPRouteHandler):
            yield sorted(value.paths), value
        elif isinstance(value, type) and issubclass(value, Controller):
            for name in dir(value):
                handler = getattr(value, name)
                if name not in dir(Controller) and isinstance(handler, HTTPRouteHandler):
                    yield sorted(join_paths([value.path, path]) for path in handler.paths), handler


def document(handler: HTTPRouteHandler, paths: list[str] | None = None) -> None:
    """Sets a route's error responses, security and parameter ranges (those it declares itself stay)."""
    path = _TYPED.sub(r"{\1}", min(paths or handler.paths))
    method = min(handler.http_methods)
    errors: dict[int, Any] = {code: ResponseSpec(ApiErrorBody, generate_examples=False, description=ERRORS[code])
                              for code in errors_of(path, method)}
    handler.responses = {**errors, **(handler.responses or {})}
    if needs_token(path, method) and handler.security is None:
        handler.security = [{SECURITY: []}]
    if handler.operation_class is Operation:
        handler.operation_class = _operation_class(path)


class Documented(InitPlugin):
    """``Litestar(plugins=[Documented()])``: documents every HTTP route as above, and the bearer scheme."""

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        for paths, handler in http_handlers(app_config.route_handlers):
            if handler.include_in_schema:
                document(handler, paths)
        config = app_config.openapi_config
        if config is not None:
            schemes = dict(config.components.security_schemes or {}) if config.components else {}
            schemes[SECURITY] = SecurityScheme(
                type="http", scheme="bearer",
                description="A seat's token (POST /games/{game_id}/seats answers it); DELETE /games/{game_id} takes "
                            "the creator's token (POST /games answers it)")
            components = dataclasses.replace(config.components or Components(), security_schemes=schemes)
            app_config.openapi_config = dataclasses.replace(config, components=components)
        return app_config


class AllowedMethods(InitPlugin):
    """``OPTIONS`` on a path answers 204 with ``Allow`` naming every method of the path. Litestar's own OPTIONS
    handler names only the methods of the path's first handler: ``OPTIONS /games`` said ``GET, OPTIONS`` where
    ``POST`` is served too (found by Schemathesis). A CORS preflight is answered before, by the CORS middleware."""

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        # The handlers registered one by one; a controller's paths: AllowingController.
        methods: dict[str, set[str]] = {}
        for handler in app_config.route_handlers:
            if isinstance(handler, HTTPRouteHandler):
                for path in handler.paths:
                    methods.setdefault(path, set()).update(handler.http_methods)
        # First: the first handler a path registers decides whether Litestar adds its own OPTIONS handler.
        options = [_options(path, served) for path, served in methods.items() if "OPTIONS" not in served]
        app_config.route_handlers = [*options, *app_config.route_handlers]
        return app_config


class AllowingController(Controller):
    """A controller whose paths answer ``OPTIONS`` with an ``Allow`` naming each of their methods. Litestar adds an
    OPTIONS handler to a path when its first handler registers, naming that handler's methods only (``OPTIONS
    /games`` said ``POST, OPTIONS``): this one's OPTIONS handlers register first."""

    def get_route_handlers(self) -> list[BaseRouteHandler]:
        handlers = super().get_route_handlers()
        methods: dict[str, set[str]] = {}
        for handler in handlers:
            if isinstance(handler, HTTPRouteHandler):
                for path in handler.paths:
                    methods.setdefault(path, set()).update(handler.http_methods)
        options = [_options(path, served) for path, served in methods.items() if "OPTIONS" not in served]
        for handler in options:
            handler.owner = self
        return [*options, *handlers]


def _options(path: str, served: set[str]) -> HTTPRouteHandler:
    allow = ", ".join(sorted(served | {"OPTIONS"}))

    @route(path, http_method=[HttpMethod.OPTIONS], include_in_schema=False, status_code=204, sync_to_thread=False,
           response_headers=[ResponseHeader(name="Allow", value=allow)])
    def options() -> None:
        return None

    return options
