"""The gateway: HTTP and WebSocket for frontends (Litestar, msgspec bodies, OpenAPI at /schema).

It writes nothing itself: commands go to ``souk:commands`` and the engine's reply comes back on this gateway's
reply channel; reads come from the projectors' read models. Seat tokens are checked against the token hashes
the projector keeps (``souk:seats:{game}``); the raw token never leaves the client and this process.

Litestar's shape: one controller per resource (``services.gateway.controllers``), given what they use by
dependency injection (``services.gateway.dependencies``: stores, listeners, token checks, limits, settings); the
token checks in ``auth``, the pub/sub listeners in ``listeners``, errors in ``errors``, input checks in
``inputs``, the OpenAPI document's additions in ``openapi``.
"""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.config.cors import CORSConfig
from litestar.exceptions import HTTPException, NotFoundException, ValidationException
from litestar.openapi import OpenAPIConfig

from contracts.api import MAX_BODY_BYTES
from services.gateway import access, docs, fastpath, openapi, web
from services.gateway.controllers import CONTROLLERS
from services.gateway.controllers.sockets import closing_bad_paths
from services.gateway.dependencies import Gateway
from services.gateway.errors import ApiError, on_api_error, on_crash, on_http, on_validation
from services.runtime import collector, logs, tracing
from services.runtime.config import Settings
from services.store import keys


def create_app(settings: Settings, workers: Any = None, fast_commands: bool = True) -> Litestar:
    """The ASGI app. ``workers`` (a ``services.cli.workers.Workers``) are started and stopped with it when
    given. ``fast_commands``: the command route served by ``fastpath`` (False: by Litestar alone, as the tests
    that compare the two do)."""
    gateway = Gateway(settings, workers)
    app = Litestar(
        route_handlers=[*CONTROLLERS, docs.assets(), web.index, web.assets()],
        dependencies=gateway.dependencies(),
        lifespan=[gateway.lifespan],
        middleware=[tracing.asgi_middleware],  # traceparent in, bound to the logs, and out in every response
        exception_handlers={ApiError: on_api_error, ValidationException: on_validation,
                            NotFoundException: on_http, HTTPException: on_http, Exception: on_crash},
        before_request=gateway.before_request,
        cors_config=CORSConfig(allow_origins=list(settings.cors_origins),
                               allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
                               allow_headers=["Authorization", "Content-Type", "traceparent"],
                               expose_headers=["Retry-After", "traceparent", "X-Next-Cursor"], max_age=600)
        if settings.cors_origins else None,
        request_max_body_size=MAX_BODY_BYTES,
        openapi_config=OpenAPIConfig(title="Souk", version="0.1.0",
                                     description="Event-sourced board games: lobby, seats, commands, views, history.",
                                     render_plugins=docs.render_plugins()),  # pages served offline
        plugins=[openapi.Documented(), openapi.AllowedMethods()],  # the document's errors, tokens, ranges; OPTIONS
        debug=False,
        logging_config=None,  # the root logger is set up by services/runtime/logs.py: every line JSON
    )
    # Outside the router, as Litestar's own OpenTelemetry plugin wraps it: the requests no route takes are measured
    # too (an app middleware runs only once a route matched).
    # The command route's fast path (``fastpath``) in front of Litestar, with Litestar's route template for the
    # metrics; not with CORS (Litestar adds its headers).
    template = app.asgi_router.handle_routing(path="/games/g/seats/0/commands", method="POST")[4]
    handler = fastpath.commands_fast_path(closing_bad_paths(app.asgi_handler, app.routes), gateway, template,
                                          enabled=fast_commands and not settings.cors_origins)
    app.asgi_handler = access.observed(handler, settings.access_log)
    return app


def from_env() -> Litestar:
    """The app of one of `souk gateway --processes N`'s processes (uvicorn's factory, called in the process): the
    settings from the environment, which the parent filled with the stores it resolved and the event store's
    partitions it read (``SOUK_PARTITIONS``: the store's, not the setting's)."""
    settings = Settings.from_env()
    keys.use(settings.partitions)
    logs.configure(settings.log_level, settings.log_format)
    app = create_app(settings)
    collector.tune()  # the app is built: freeze it out of the collector, collect less often (as _listen does)
    return app
