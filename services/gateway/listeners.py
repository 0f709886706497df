"""The gateway's pub/sub listeners: the engine's replies to this gateway, and every game's view updates."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator

import msgspec
import redis.asyncio as aioredis

from contracts.envelope import CommandEnvelope, Reply
from contracts.readmodels import ViewsUpdated
from services import keys
from services.codec import encoder, reply_decoder
from services.engine import command_key
from services.gateway.errors import ApiError

_notice_decoder = msgspec.json.Decoder(ViewsUpdated)


class _Subscription:
    """A background task reading one pub/sub subscription and handing each message to ``on_message``."""

    def __init__(self, redis: aioredis.Redis) -> None:
        self.redis = redis
        self._task: asyncio.Task | None = None
        self._ready = asyncio.Event()

    async def subscribe(self, pubsub) -> None:
        raise NotImplementedError

    def on_message(self, message: dict) -> None:
        raise NotImplementedError

    async def start(self) -> None:
        self._task = asyncio.create_task(self._listen())
        await asyncio.wait_for(self._ready.wait(), 10)

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _listen(self) -> None:
        pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
        await self.subscribe(pubsub)
        self._ready.set()
        try:
            while True:
                message = await pubsub.get_message(timeout=1.0)
                if message is not None:
                    self.on_message(message)
        finally:
            await pubsub.aclose()


class Replies(_Subscription):
    """Sends commands and waits for the engine's answers on this gateway's own pub/sub channel."""

    def __init__(self, redis: aioredis.Redis, timeout: float) -> None:
        super().__init__(redis)
        self.timeout = timeout
        self.channel = keys.replies(uuid.uuid4().hex)
        self.waiting: dict[tuple[str, int | None, str], asyncio.Future[Reply]] = {}

    async def subscribe(self, pubsub) -> None:
        await pubsub.subscribe(self.channel)

    def on_message(self, message: dict) -> None:
        reply = reply_decoder.decode(message["data"])
        future = self.waiting.pop((reply.game_id, reply.seat, reply.command_id), None)
        if future is not None and not future.done():
            future.set_result(reply)

    async def send(self, env: CommandEnvelope) -> Reply:
        key = (env.game_id, env.seat, env.command_id)
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self.waiting[key] = future
        env = msgspec.structs.replace(env, reply_to=self.channel, sent_at=time.time())
        try:
            await self.redis.xadd(keys.COMMANDS, {"c": encoder.encode(env)})
            return await asyncio.wait_for(future, self.timeout)
        except TimeoutError:
            recorded = await self.redis.hget(keys.outcomes(env.game_id), command_key(env))
            if recorded is not None:
                return reply_decoder.decode(recorded)
            raise ApiError(504, "engine_timeout",
                           "the engine did not answer in time; the command is queued: resend it with the same "
                           "command_id to learn its outcome") from None
        finally:
            self.waiting.pop(key, None)


class Updates(_Subscription):
    """One pattern subscription to every game's view updates, fanned out to local WebSocket listeners."""

    _prefix = len(keys.view_updates(""))

    def __init__(self, redis: aioredis.Redis) -> None:
        super().__init__(redis)
        self.listeners: dict[str, set[asyncio.Queue[int]]] = defaultdict(set)

    async def subscribe(self, pubsub) -> None:
        await pubsub.psubscribe(keys.view_updates("*"))

    def on_message(self, message: dict) -> None:
        game_id = message["channel"][self._prefix:].decode()
        for queue in list(self.listeners.get(game_id, ())):
            queue.put_nowait(_notice_decoder.decode(message["data"]).version)

    @contextlib.asynccontextmanager
    async def listen(self, game_id: str) -> AsyncIterator[asyncio.Queue[int]]:
        queue: asyncio.Queue[int] = asyncio.Queue()
        self.listeners[game_id].add(queue)
        try:
            yield queue
        finally:
            self.listeners[game_id].discard(queue)
            if not self.listeners[game_id]:
                del self.listeners[game_id]


