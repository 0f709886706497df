"""Every HTTP request the gateway answers is counted and timed (``souk_http_requests_total``,
``souk_http_request_duration_seconds``: ``services.runtime.metrics``) and, with ``SOUK_ACCESS_LOG`` on, logged in
one line (``http_request``: method, route, path, status, duration_ms, client, trace_id).

It wraps the app's whole ASGI handler (``observed``), outside Litestar's router: a request no route takes (404,
405) is counted too, which an app middleware never sees. The route is the template Litestar matched
(``/games/{game_id}/view``), never the raw path, and an unknown method is ``other``: the metrics' labels stay
bounded whatever clients send. The path is logged without its query string (where a token may be).

Cost on the hot path: two clock readings, one wrapped ``send`` and two cached metric children per request.
"""

from __future__ import annotations

import time
from typing import Any

import structlog

from services.runtime import metrics

log = structlog.get_logger("souk.access")

UNMATCHED = "unmatched"
OTHER = "other"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT"})


def observed(app: Any, access_log: bool = False) -> Any:
    """``app`` (an ASGI app) with its HTTP requests measured, and logged when ``access_log``."""

    async def observe(scope, receive, send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        started = time.perf_counter()
        path = scope["path"]  # before the router rewrites it (a mount's remaining path)
        answer: list[Any] = [500, None]  # status, traceparent (nothing answered: the server will say 500)

        async def send_observed(message) -> None:
            if message["type"] == "http.response.start":
                answer[0] = message["status"]
                if access_log:
                    answer[1] = next((v for k, v in message.get("headers", ()) if k == b"traceparent"), None)
            await send(message)

        try:
            await app(scope, receive, send_observed)
        finally:
            seconds = time.perf_counter() - started
            method = scope["method"] if scope["method"] in METHODS else OTHER
            route = scope.get("path_template") or UNMATCHED
            metrics.observe_request(method, route, answer[0], seconds)
            if access_log:
                client = scope.get("client")
                traceparent = answer[1].decode("latin-1") if answer[1] else ""
                log.info("http_request", method=method, route=route, path=path, status=answer[0],
                         duration_ms=round(seconds * 1000, 3), client=client[0] if client else None,
                         trace_id=traceparent[3:35] or None)

    return observe
