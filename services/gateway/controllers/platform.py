"""The platform's routes: health, the catalog of games, metrics, and the AsyncAPI document."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import MediaType, Response, get

from contracts.api import GameInfo
from domain.kernel import games
from services.gateway.dependencies import RepliesDep, SettingsDep, StoresDep, UpdatesDep, WorkersDep
from services.gateway.errors import ApiError
from services.gateway.openapi import AllowingController
from services.projector.service import Partition
from services.runtime import metrics
from services.store import keys
from services.store.streams import idle_consumers, stream_backlog


class PlatformController(AllowingController):
    path = "/"
    tags = ["platform"]

    @get("/health")
    async def health(self, stores: StoresDep, replies: RepliesDep, updates: UpdatesDep,
                     settings: SettingsDep) -> Response[dict[str, Any]]:
        """Checks both stores (the event store's Redis and the read store's, which may be the same), and shows
        the commands and events streams (length, last id) with each consumer group's backlog (``pending``:
        delivered, not yet acknowledged; ``last_delivered_id``; ``lag``: not yet delivered, Redis 7+).
        ``warnings`` names projector partitions that never ran. ``listeners``: the state of the gateway's pub/sub
        listeners (engine replies, view updates); one that lost its connection makes the answer a 503 while it
        reconnects (``status``: ``listener_down``). ``parked``: the commands the engine could neither decide nor
        answer (``souk:parked``, newest first). ``idle_consumers``: consumers that have not read for a minute, a
        worker that stopped reading or is gone (the engine drops those idle ten minutes with nothing pending)."""
        events = stores.events
        for name, redis in (("event store", events), ("read store", stores.views)):
            try:
                await redis.ping()
            except Exception as exc:  # noqa: BLE001 - any failure is "unhealthy"
                raise ApiError(503, "redis_unavailable", f"the {name} Redis does not answer: {exc}") from None
        streams = {stream: await stream_backlog(events, stream) for stream in (keys.COMMANDS, keys.EVENTS)}
        warnings = [f"projector partition {p} has never run: its games' views are not kept"
                    for p in Partition.missing(streams[keys.EVENTS]["groups"])]
        listeners = {lst.name: lst.state for lst in (replies, updates)}
        down = [name for name, state in listeners.items() if not state.connected]
        warnings += [f"the {name} listener has no Redis connection since {listeners[name].since}: "
                     f"{listeners[name].last_error}; it reconnects by itself" for name in down]
        parked = {"count": await events.xlen(keys.PARKED),
                  "newest": [{"id": i.decode(), "reason": f[b"reason"].decode(), "detail": f[b"detail"].decode()}
                             for i, f in await events.xrevrange(keys.PARKED, count=5)]}
        if parked["count"]:
            warnings.append(f"{parked['count']} commands are parked in {keys.PARKED}: the engine could not decide "
                            "them (see 'parked')")
        idle = [c for stream in (keys.COMMANDS, keys.EVENTS)
                for c in await idle_consumers(events, stream, settings.idle_consumer_ms)]
        warnings += [f"consumer {c['consumer']} of group {c['group']} has not read for {c['idle_ms'] // 1000} s "
                     f"({c['pending']} entries pending)" for c in idle]
        body = {"status": "listener_down" if down else "ok", "event_store": "ok", "read_store": "ok",
                "streams": streams, "listeners": {name: msgspec.to_builtins(s) for name, s in listeners.items()},
                "parked": parked, "idle_consumers": idle, "warnings": warnings}
        return Response(body, status_code=503 if down else 200)

    @get("/catalog")
    async def catalog(self) -> list[GameInfo]:
        """The games this server plays, with their seat counts and default options."""
        return [GameInfo(g.name, g.title, g.min_seats, g.max_seats, msgspec.to_builtins(g.options_type()))
                for g in games().values()]

    @get("/metrics", include_in_schema=False)
    async def prometheus_metrics(self, stores: StoresDep) -> Response:
        """The metrics in Prometheus' text format (``services/runtime/metrics.py``): this process's, and the
        streams' backlog read now (within a second, else the last reading, with its age)."""
        await metrics.BACKLOG.refresh(stores.events)
        body, content_type = metrics.exposition()
        return Response(content=body, media_type=content_type)

    @get("/asyncapi.json", include_in_schema=False)
    async def asyncapi(self, workers: WorkersDep, settings: SettingsDep) -> Response:
        """FastStream's AsyncAPI document of the streams and channels."""
        from services.runtime.workers import Workers  # the gateway alone describes the workers it talks to

        described = workers if workers is not None else Workers(settings)
        return Response(content=described.asyncapi().to_specification().to_json(), media_type=MediaType.JSON)
