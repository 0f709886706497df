"""The gateway's routes resolve their dependencies without a task per dependency.

Litestar resolves the dependencies of a route that has several of them in an anyio task group, a task each, on
every request (``KwargsModel.resolve_dependencies``); on the command route that cost 7-13% of the gateway's CPU
and a turn of the event loop per request. Every route takes the one ``Gateway`` dependency instead
(``services.gateway.dependencies``).
"""

from __future__ import annotations

from litestar.routes import HTTPRoute, WebSocketRoute

from services.gateway import create_app
from services.runtime.config import Settings


def _kwargs_models(app):
    for route in app.routes:
        if isinstance(route, HTTPRoute):
            for handler, model in route.route_handler_map.values():
                yield f"{sorted(handler.http_methods)} {route.path}", model
        elif isinstance(route, WebSocketRoute):
            model = route.route_handler.create_kwargs_model(path_parameters=route.path_parameters)
            yield f"WS {route.path}", model


def test_no_route_resolves_several_dependencies_at_once():
    # an unused port: building the app connects to nothing
    app = create_app(Settings(redis_url="redis://127.0.0.1:1/0", views_redis_url="redis://127.0.0.1:1/0"))
    several = {name: [sorted(d.key for d in batch) for batch in model.dependency_batches]
               for name, model in _kwargs_models(app) if any(len(batch) > 1 for batch in model.dependency_batches)}
    assert several == {}
    seen = {name for name, model in _kwargs_models(app) if model.dependency_batches}
    assert any("/commands" in name for name in seen)  # the command route does take the Gateway
