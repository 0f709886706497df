"""What the gateway says about itself: its OpenAPI document (``/schema/openapi.json``), and OPTIONS.

Litestar documents a 400 of its own shape (``{status_code, detail, extra}``) and no other error; the gateway
answers every error as ``{"code", "message"}`` (``contracts.api.ApiErrorBody``), with statuses Litestar cannot
know. ``Documented``, a Litestar init plugin, sets on every HTTP route:

- the errors it may answer, each as an ``ApiErrorBody`` (derived from its path and method: any request 400, 429,
  431, 500 and 503; a game's routes 404; a seat's routes, a game's cancellation and its fork, 401 (a seat's view
  and legal commands take no token with ``at`` once the game is over, a fork only for a private game: their
  security is optional); writes 409, 422, 504,
  and 413 for a body; the audit and the record 409), with ``Retry-After`` on 429 and 503;
- the ``seatToken`` bearer scheme on the routes that take a token;
- the ranges of the integer parameters the gateway checks itself (``seat``, ``after``, ``limit``,
  ``min_version``), which a client or a fuzzer otherwise cannot know.

``AllowedMethods`` answers ``OPTIONS`` on every path with an ``Allow`` naming every method the path serves (a
controller's paths: ``AllowingController``).

``served`` is the document as the gateway serves it: ``typed`` with every game's commands and views from
contracts/ (the fields Litestar can only call any JSON).

Schemathesis checks the gateway against this document (tests/fuzz/test_schemathesis.py).
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Iterable, Iterator
from typing import Any, Union

import msgspec
from litestar import Controller, Litestar, route
from litestar.config.app import AppConfig
from litestar.datastructures import ResponseHeader
from litestar.enums import HttpMethod
from litestar.handlers import BaseRouteHandler, HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import (
    Components,
    OpenAPI,
    OpenAPIHeader,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Schema,
    SecurityScheme,
)
from litestar.openapi.spec.base import BaseSchemaObject
from litestar.plugins import InitPlugin
from litestar.utils.path import join_paths

from contracts.api import MAX_INT, ApiErrorBody
from contracts.envelope import EventEnvelope
from domain.kernel import games
from services.gateway.schema import without_raw_defaults

SECURITY = "seatToken"
ERRORS = {
    400: "Malformed input: bad_request, bad_page, bad_filter, bad_command, bad_command_id, bad_request_id, bad_seed; "
         "bad_version: ?at= is not one of the game's versions (1 to its current version); token_in_query: a ?token= "
         "in the URL (send it as Authorization: Bearer; a URL ends up in logs)",
    401: "missing_token or bad_token",
    403: "platform_command: a command of the platform's (Timeout, Tick, PlayFor: its clock worker sends them), "
         "which no client may send",
    404: "game_not_found; no_such_seat (?at= of a finished game, for a seat it does not have)",
    410: "archived: the game ended and was archived to its record file (souk archive); it is no longer served",
    409: "seat_taken, game_started, game_exists, conflict, stale, game_cancelled, game_not_over, undo_pending; "
         "superseded: a later command of the same seat was applied first (this one, e.g. answered 504 before, was "
         "not played)",
    413: "body_too_large: a body over 64 KiB",
    422: "refused by the rules: not_your_turn, game_over, seed_needs_unfair, bad_seed, bad_entropy, ... (each game's"
         " codes in its rules.py); undo: undo_not_allowed, bad_undo_version, no_undo_request, not_asked, "
         "already_answered, game_not_started; clocks: bad_clock (CreateGame), seat_out (a seat out of the game); "
         "webhooks: bad_webhook (not an https URL, or a host that does not resolve), webhook_not_public (a host on "
         "a private, loopback or link-local address); bots: unknown_strategy, bad_seats, bad_invite; not_allowed (a "
         "cancel by another than the game's creator)",
    429: "rate_limited (see Retry-After), too_many_open_games, or too_many_connections (answered as the connection "
         "opens, then closed)",
    431: "headers_too_large",
    500: "internal_error: the server failed; the request may be retried (a command with the same command_id)",
    503: "store_unavailable: a Redis store does not answer (retry after Retry-After)",
    504: "engine_timeout: the command is queued; resend it with the same id to learn its outcome",
}
# What a 503 means beside store_unavailable, by path (/health declares its own 503).
UNAVAILABLE = {
    "{game_id}": "not_projected or view_not_ready: the game's read models are not built yet (retry shortly); "
                 "store_unavailable: a Redis store does not answer",
}
# The integer parameters the gateway checks itself (services/gateway/inputs.in_range), by path ("" for any).
LIMITS: dict[tuple[str, str], tuple[int, int]] = {
    ("", "seat"): (0, MAX_INT),
    ("", "after"): (0, MAX_INT),
    ("", "min_version"): (0, MAX_INT),
    ("", "at"): (1, MAX_INT),
    ("", "limit"): (1, 1000),
    ("/games", "limit"): (1, 200),
}
_TYPED = re.compile(r"\{(\w+):\w+\}")


def errors_of(path: str, method: str, body: bool = True) -> list[int]:
    """The error statuses a route may answer (``path`` as documented: ``/games/{game_id}``; ``body``: it reads
    one). Any route may meet a store that does not answer (503; the rate limits read Redis before the route) or
    fail (500)."""
    codes = {400, 429, 431, 500, 503}
    if "{game_id}" in path:
        codes |= {404, 410}
    if needs_token(path, method):
        codes.add(401)
    if method in ("POST", "PUT", "PATCH", "DELETE"):
        codes |= {409, 422, 504}
        if body:
            codes.add(413)
    if path.endswith("/commands"):  # 403 platform_command
        codes.add(403)
    if path.endswith(("/audit", "/record")):  # 409 game_not_over
        codes.add(409)
    return sorted(codes)


def _description(path: str, code: int) -> str:
    if code == 503:
        return next((text for where, text in UNAVAILABLE.items() if where in path), ERRORS[503])
    return ERRORS[code]


def needs_token(path: str, method: str) -> bool:
    return ("{seat}" in path or (method == "DELETE" and path == "/games/{game_id}") or _fork(path, method)
            or path == "/games/{game_id}/webhook")


def _fork(path: str, method: str) -> bool:
    return method == "POST" and path == "/games/{game_id}/fork"


def token_optional(path: str, method: str) -> bool:
    """A seat's route that answers without a token in one case: ``at`` on a game that is over; a fork, which
    needs a seat's token for a private game only."""
    return (method == "GET" and path.startswith("/games/{game_id}/seats/{seat}/")
            and path.endswith(("/view", "/legal"))) or _fork(path, method)


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
    body = "data" in inspect.signature(handler.fn).parameters
    errors: dict[int, Any] = {code: ResponseSpec(ApiErrorBody, generate_examples=False,
                                                 description=_description(path, code))
                              for code in errors_of(path, method, body)}
    handler.responses = {**errors, **(handler.responses or {})}
    if needs_token(path, method) and handler.security is None:
        # A seat's view and legal commands ?at=N of a game that is over are anyone's (the audit shows it all):
        # the token is optional there, which OpenAPI says as an empty requirement beside the bearer one.
        handler.security = [{SECURITY: []}, {}] if token_optional(path, method) else [{SECURITY: []}]
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
                            "the creator's token (POST /games answers it). Only in the Authorization header: a "
                            "?token= in an HTTP route's URL is refused, 400 token_in_query (URLs end up in "
                            "proxies' logs); only the WebSockets take ?token= (a browser cannot set their headers)")
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


# --- The wire format in the document: commands, views and legal commands typed per game -------------------------

REF = "#/components/schemas/"
SEAT_COMMAND = "SeatCommand"  # any game's command, as POST /games/{game_id}/seats/{seat}/commands takes it


@dataclasses.dataclass
class Verbatim(BaseSchemaObject):
    """A JSON Schema written as it is into Litestar's document (msgspec's, with ``null`` defaults kept)."""

    value: dict[str, Any]

    def to_schema(self) -> dict[str, Any]:
        return self.value


def wire_components(taken: set[str]) -> dict[str, dict[str, Any]]:
    """JSON Schemas of every game's commands and views (the tagged unions of contracts/, as ``souk schema``
    writes them), by component name: a tagged Struct is named by its tag (``samarkand.ChooseCard``), a game's
    unions ``{game}.Command`` and ``{game}.View`` (``oneOf`` with a discriminator on ``type``), all the games'
    commands together ``SeatCommand``, and the audit's ``EventEnvelope``. A name in ``taken`` (Litestar's
    own components) is not reused: an untagged Struct named like one becomes ``wire.{name}``."""
    unions: dict[str, Any] = {}
    for name, game in sorted(games().items()):
        unions[f"{name}.Command"] = Union[tuple(game.command_types)]  # type: ignore[valid-type]
        unions[f"{name}.View"] = Union[tuple(game.view_types)]  # type: ignore[valid-type]
    structs = [without_raw_defaults(EventEnvelope)]
    roots, components = msgspec.json.schema_components([*unions.values(), *structs], ref_template=REF + "{name}")
    renamed = {}
    for name, schema in components.items():
        tag = schema.get("properties", {}).get("type", {}).get("enum", [])
        renamed[name] = tag[0] if len(tag) == 1 else f"wire.{name}" if name in taken or name in unions else name
    refs = {REF + old: REF + new for old, new in renamed.items()}
    found: dict[str, dict[str, Any]] = {renamed[n]: _rewrite(s, refs) for n, s in components.items()}
    for name, root in zip(unions, roots):  # the structs' roots are references to their components
        found[name] = _one_of(_rewrite(root, refs))
    commands = [found[f"{name}.Command"] for name in sorted(games())]
    found[SEAT_COMMAND] = {
        "description": "A command of one of the games: its ``type`` names the game and the command. A seat sends "
                       "its game's commands only; ``legal`` lists those it may send now.",
        "oneOf": [ref for c in commands for ref in c.get("oneOf", [c])],
        "discriminator": {"propertyName": "type", "mapping": {
            tag: ref for c in commands for tag, ref in c.get("discriminator", {}).get("mapping", {}).items()}},
    }
    return found


def _one_of(union: dict[str, Any]) -> dict[str, Any]:
    """msgspec writes a union as ``anyOf``; tagged, its members exclude one another: ``oneOf``."""
    if "anyOf" in union and "discriminator" in union:
        union = {("oneOf" if k == "anyOf" else k): v for k, v in union.items()}
    elif "$ref" in union:  # a union of one Struct
        union = {"oneOf": [union]}
    return union


def _rewrite(value: Any, refs: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: _rewrite(v, refs) for k, v in value.items()}
    if isinstance(value, list):
        return [_rewrite(v, refs) for v in value]
    return refs.get(value, value) if isinstance(value, str) else value


def served(app: Litestar) -> dict[str, Any]:
    """The document an app serves (``/schema/openapi.json`` and its pages): Litestar's, ``typed``; built on its
    first request (it takes about a second: not at every start of the app), then kept in the app's state."""
    document = app.state.get("souk_openapi")
    if document is None:
        document = app.state["souk_openapi"] = typed(app.openapi_schema).to_schema()
    return document


def typed(document: OpenAPI) -> OpenAPI:
    """Types what Litestar documents as any JSON (the fields of contracts/ typed ``Any``): a command's body
    (``CommandRequest.command``: ``SeatCommand``), a view's ``legal`` and ``LegalCommands.legal`` (arrays of
    ``SeatCommand``), a view's ``view`` (one of the games' views, or null before the start), and the audit's
    ``events`` (``EventEnvelope``). Every error response says the ``Retry-After`` header it carries (429, 503);
    the lobby's 200 its ``X-Next-Cursor``."""
    components = document.components
    schemas: dict[str, Any] = dict(components.schemas or {})
    wire = wire_components(set(schemas))
    commands = {"type": "array", "items": {"$ref": REF + SEAT_COMMAND},
                "description": "The commands this seat may send now, ready to post back as they are"}
    views = {"oneOf": [{"$ref": f"{REF}{name}.View"} for name in sorted(games())] + [{"type": "null"}],
             "description": "The game's own view for this seat (its game's tagged View); null before the start"}
    fields = {("CommandRequest", "command"): {"$ref": REF + SEAT_COMMAND},
              ("TableView", "legal"): commands, ("LegalCommands", "legal"): commands, ("TableView", "view"): views,
              ("Audit", "events"): {"type": "array", "items": {"$ref": REF + "EventEnvelope"},
                                    "description": "Every event of the game, unredacted, as the chain hashed it"}}
    for (struct, field), schema in fields.items():
        target = schemas.get(struct)
        if isinstance(target, Schema) and target.properties and field in target.properties:
            target.properties[field] = Verbatim(schema)
    schemas.update({name: Verbatim(schema) for name, schema in wire.items() if name not in schemas})
    components.schemas = dict(sorted(schemas.items()))
    retry_after = OpenAPIHeader(schema=Schema(type=OpenAPIType.INTEGER, minimum=1),
                                description="Seconds to wait before retrying")
    cursor = OpenAPIHeader(schema=Schema(type=OpenAPIType.STRING), required=False,
                           description="The cursor of the next page, when there are more games")
    for path, item in (document.paths or {}).items():
        for method in ("get", "post", "put", "patch", "delete"):
            operation = getattr(item, method, None)
            if operation is None or not operation.responses:
                continue
            for status, response in operation.responses.items():
                if status in ("429", "503") and isinstance(response, OpenAPIResponse):
                    response.headers = {**(response.headers or {}), "Retry-After": retry_after}
                if path == "/games" and method == "get" and status == "200" and isinstance(response, OpenAPIResponse):
                    response.headers = {**(response.headers or {}), "X-Next-Cursor": cursor}
    return document
