"""What the gateway's routes are given (Litestar's dependency injection): the ``Gateway``, one per app, built by
``create_app``. A route names it as a parameter, ``gateway: GatewayDep``, and uses what it holds:

- ``settings``: the ``Settings``;
- ``stores``: the two Redis pools (``Stores``); ``reads``: the read paths on them (``Reads``);
- ``replies``, ``updates``: the pub/sub listeners (``services.gateway.listeners``);
- ``presence``: the seats' presence this gateway records (``services.gateway.presence.Presence``);
- ``commands``: queues a command and waits for its outcome (``Commands``);
- ``auth``: the token checks (``services.gateway.auth.Auth``);
- ``limits``: the rate and open-game limits (``Limits``).

One dependency, not one per part: Litestar resolves the dependencies of a route that has several in an anyio task
group, a task each, for every request; on the command route that cost 7-13% of the gateway's CPU and a turn of
the event loop per request (``souk bench http``: 8-14% more commands/s with one).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from litestar import Litestar, Request
from litestar.di import NamedDependency, Provide

from services.gateway.auth import Auth, refuse_token_in_query
from services.gateway.commands import Commands
from services.gateway.inputs import check_headers
from services.gateway.limits import Limits, Rate
from services.gateway.listeners import Replies, Updates
from services.gateway.presence import Presence
from services.gateway.stores import Reads, Stores
from services.runtime.config import Settings
from services.store.refusals import refusal

class Gateway:
    """Everything one gateway app holds, started and stopped with it (``lifespan``)."""

    def __init__(self, settings: Settings, workers: Any = None) -> None:
        self.settings = settings
        self.workers = workers
        self.stores = Stores(settings)
        self.replies = Replies(self.stores.events, settings.reply_timeout)
        self.presence = Presence(self.stores.hot_views, settings.presence_window_s, settings.presence_lease_s)
        self.updates = Updates(self.stores.views, self.presence)
        self.reads = Reads(self.stores, self.updates, self.presence)
        self.commands = Commands(self.replies, self.reads)
        self.auth = Auth(self.reads)
        self.limits = Limits(self.stores.views, Rate(settings.rate_per_client, settings.burst_per_client),
                             Rate(settings.rate_per_token, settings.burst_per_token), settings.open_games_per_client,
                             hot=self.stores.hot_views)

    def dependencies(self) -> dict[str, Provide]:
        return {"gateway": Provide(_constant(self), use_cache=True, sync_to_thread=False)}

    async def before_request(self, request: Request) -> None:
        await check_headers(request)
        refuse_token_in_query(request)
        path = request.scope["path"]
        if path == "/metrics":  # a scraper is no player: never rate limited
            return
        try:
            await self.limits.check_request(request)
        except Exception as exc:
            if path != "/health" or refusal(exc) is None:
                raise
            # The read store refuses the limit's write (out of memory, say): /health goes on, to tell why

    @contextlib.asynccontextmanager
    async def lifespan(self, _: Litestar) -> AsyncIterator[None]:
        if self.workers is not None:
            await self.workers.start()
        await self.replies.start()
        await self.updates.start()
        self.presence.start()
        try:
            yield
        finally:
            await self.presence.stop()
            await self.updates.stop()
            await self.replies.stop()
            if self.workers is not None:
                await self.workers.stop()
            await self.stores.aclose()


def _constant(value: Any) -> Any:
    def provide() -> Any:
        return value

    return provide


# What a route's parameter is annotated with to be given the Gateway (Litestar 3 infers no dependency).
GatewayDep = NamedDependency[Gateway]
