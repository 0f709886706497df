"""What the gateway's routes are given (Litestar's dependency injection): one set per app, built by ``create_app``.

A route names what it needs as a parameter and Litestar passes it (``Provide``):

- ``settings``: the ``Settings``;
- ``stores``: the two Redis pools (``Stores``); ``reads``: the read paths on them (``Reads``);
- ``replies``, ``updates``: the pub/sub listeners (``services.gateway.listeners``);
- ``commands``: queues a command and waits for its outcome (``Commands``);
- ``auth``: the token checks (``services.gateway.auth.Auth``);
- ``limits``: the rate and open-game limits (``Limits``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from litestar import Litestar, Request
from litestar.di import NamedDependency, Provide

from services.gateway.auth import Auth
from services.gateway.commands import Commands
from services.gateway.inputs import check_headers
from services.gateway.limits import Limits, Rate
from services.gateway.listeners import Replies, Updates
from services.gateway.stores import Reads, Stores
from services.runtime.config import Settings

# What a route's parameter is annotated with to be given one of them (Litestar 3 infers no dependency).
SettingsDep = NamedDependency[Settings]
StoresDep = NamedDependency[Stores]
ReadsDep = NamedDependency[Reads]
RepliesDep = NamedDependency[Replies]
UpdatesDep = NamedDependency[Updates]
CommandsDep = NamedDependency[Commands]
AuthDep = NamedDependency[Auth]
LimitsDep = NamedDependency[Limits]


class Gateway:
    """Everything one gateway app holds, started and stopped with it (``lifespan``)."""

    def __init__(self, settings: Settings, workers: Any = None) -> None:
        self.settings = settings
        self.workers = workers
        self.stores = Stores(settings)
        self.replies = Replies(self.stores.events, settings.reply_timeout)
        self.updates = Updates(self.stores.views)
        self.reads = Reads(self.stores, self.updates)
        self.commands = Commands(self.replies, self.reads)
        self.auth = Auth(self.reads)
        self.limits = Limits(self.stores.views, Rate(settings.rate_per_client, settings.burst_per_client),
                             Rate(settings.rate_per_token, settings.burst_per_token), settings.open_games_per_client,
                             hot=self.stores.hot_views)

    def dependencies(self) -> dict[str, Provide]:
        given = {"settings": self.settings, "stores": self.stores, "reads": self.reads, "replies": self.replies,
                 "updates": self.updates, "commands": self.commands, "auth": self.auth, "limits": self.limits}
        return {name: Provide(_constant(value), use_cache=True, sync_to_thread=False) for name, value in given.items()}

    async def before_request(self, request: Request) -> None:
        await check_headers(request)
        if request.scope["path"] != "/metrics":  # a scraper is no player: never rate limited
            await self.limits.check_request(request)

    @contextlib.asynccontextmanager
    async def lifespan(self, _: Litestar) -> AsyncIterator[None]:
        if self.workers is not None:
            await self.workers.start()
        await self.replies.start()
        await self.updates.start()
        try:
            yield
        finally:
            await self.updates.stop()
            await self.replies.stop()
            if self.workers is not None:
                await self.workers.stop()
            await self.stores.aclose()


def _constant(value: Any) -> Any:
    def provide() -> Any:
        return value

    return provide
