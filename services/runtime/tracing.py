"""W3C trace context (``traceparent``: https://www.w3.org/TR/trace-context/) for following one command across
the gateway, the engine and the projector in the logs.

The gateway takes a request's ``traceparent`` header when it is valid (else starts a new trace), makes its own
span of it (same trace id, a new parent id), binds ``trace_id`` in structlog's context for every log line of the
request, answers the header, and puts it in each ``CommandEnvelope`` it queues. The engine copies it into every
``EventEnvelope`` it appends (not into the hash chain) and binds ``trace_id`` while deciding; the projector logs
it with the command's projection. No spans are exported: the ids are for the logs (and any tracer in front).
"""

from __future__ import annotations

import contextvars
import re
import secrets

from services.runtime import logs

HEADER = "traceparent"
# version - trace id - parent id - flags; a later version may append fields after a dash (the spec's rule).
_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?")
_ZERO_TRACE, _ZERO_SPAN = "0" * 32, "0" * 16

current: contextvars.ContextVar[str] = contextvars.ContextVar("souk_traceparent", default="")


def parse(header: str | None) -> tuple[str, str] | None:
    """(trace id, flags) of a valid ``traceparent``, else None (as the spec says: lowercase hex, ids not all
    zeros, version ``ff`` invalid, version ``00`` exactly 55 characters)."""
    if not header:
        return None
    match = _TRACEPARENT.fullmatch(header.strip())
    if match is None:
        return None
    version, trace_id, parent_id, flags, rest = match.groups()
    if version == "ff" or (version == "00" and rest) or trace_id == _ZERO_TRACE or parent_id == _ZERO_SPAN:
        return None
    return trace_id, flags


def child(header: str | None = None) -> str:
    """This hop's ``traceparent``: the caller's trace (from ``header``) with a new parent id, or a new trace."""
    parsed = parse(header)
    trace_id, flags = parsed if parsed is not None else (secrets.token_hex(16), "01")
    return f"00-{trace_id}-{secrets.token_hex(8)}-{flags}"


def trace_id(traceparent: str) -> str | None:
    """The trace id of a ``traceparent`` this code made (version 00), None for ""."""
    return traceparent[3:35] or None


def asgi_middleware(app):
    """Litestar middleware: each HTTP request gets its ``traceparent`` (``current``), ``trace_id`` bound in
    structlog's context, and the header in its response (error responses included)."""

    async def traced(scope, receive, send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        incoming = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"traceparent"), None)
        traceparent = child(incoming)
        header = (b"traceparent", traceparent.encode())

        async def send_traced(message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), header]}
            await send(message)

        token = current.set(traceparent)
        try:
            with logs.bound(trace_id=trace_id(traceparent)):
                await app(scope, receive, send_traced)
        finally:
            current.reset(token)

    return traced
