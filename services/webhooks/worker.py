"""The webhook worker (``souk webhooks``; ``souk serve`` runs it too): notices from the events into the outbox, and
deliveries from the outbox to the receivers. Never on a command's path.

``handle`` takes batches of ``souk:events`` (its own consumer group, ``keys.WEBHOOKS_GROUP``, as the projector reads
them through its own). A game without registrations costs one HGETALL. For a game with some, it folds the events
after the game's webhook position (``keys.webhook_position``) from its cached table, or from the game's stream,
makes the notices (``notices.follow``) and writes them to the outbox with the new position in one Lua call
(``outbox.enqueue``): the position is the tracking record, so a redelivered event, or another worker's batch of the
same game, adds nothing twice.

``deliver`` (a loop, every ``webhooks_poll_s``) claims the deliveries due and POSTs each, signed, to its
registration's URL, checked again against the addresses its host resolves to then (``urls.GuardedBackend``); a 2xx
answer delivers it, anything else (an error, a timeout, a refused address) tries it again after a backoff that
doubles from ``webhooks_retry_s`` up to ``webhooks_retry_max_s``, until ``webhooks_give_up_s`` after it was due: then
it goes to the dead letters.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence

import httpx
import msgspec
import redis.asyncio as aioredis
import structlog

from contracts.envelope import EventEnvelope
from services.runtime import metrics
from services.runtime.config import Settings
from services.runtime.loop import stop_task
from services.store import keys
from services.store.codec import command_fields, event_envelope_decoder
from services.store.events import EventStore
from services.store.lru import Lru
from services.webhooks import outbox, signing
from services.webhooks.notices import Due, Followed, Thresholds, follow
from services.webhooks.outbox import Delivery
from services.webhooks.registry import GAME, Registration, registrations, seat_field
from services.webhooks.urls import WebhookRefused, check_url, guarded_client

log = structlog.get_logger("souk.webhooks")
MAX_ATTEMPTS = 10  # conflicts on one game's position before a batch is left pending (redelivered later)
CLAIM_BATCH = 100  # deliveries claimed per look at the outbox
CONCURRENCY = 32  # POSTs in flight at once
_encode = msgspec.json.Encoder().encode


class WebhookWorker:
    """``redis``: the event store (registrations, positions, the outbox); ``store``: the games' events."""

    def __init__(self, redis: aioredis.Redis, store: EventStore, settings: Settings,
                 clock: Callable[[], float] = time.time, cache_size: int = 10_000) -> None:
        self.redis = redis
        self.store = store
        self.settings = settings
        self.clock = clock
        self.thresholds = Thresholds(settings.webhooks_low_share, settings.webhooks_low_s)
        self.cache: Lru[str, Followed] = Lru(cache_size)
        self._http: httpx.AsyncClient | None = None
        self._delivering: asyncio.Task | None = None
        # Set when this worker put a notice due now in the outbox: its delivery loop looks at once instead of at
        # its next poll (which paced every notice: 0.5 s from a command's answer to the POST, measured)
        self._wake = asyncio.Event()

    # --- notices in -----------------------------------------------------------------------------------------------

    async def handle(self, entries: Sequence[dict[bytes, bytes]]) -> None:
        """A batch of ``souk:events`` entries (field ``g``: the game id, ``e``: the envelope)."""
        by_game: dict[str, list[EventEnvelope]] = {}
        for fields in entries:
            env = event_envelope_decoder.decode(fields[b"e"])
            by_game.setdefault(env.game_id, []).append(env)
        if not by_game:
            return
        pipe = self.redis.pipeline(transaction=False)
        for game_id in by_game:
            pipe.hgetall(keys.webhooks(game_id))
        for (game_id, envelopes), raw in zip(by_game.items(), await pipe.execute()):
            if not raw:  # nobody listens to this game (its cached table would go stale: dropped)
                self.cache.pop(game_id)
                continue
            await self._game(game_id, envelopes, registrations(raw))

    async def _game(self, game_id: str, envelopes: list[EventEnvelope], regs: dict[str, Registration]) -> None:
        for _ in range(MAX_ATTEMPTS):
            position = int(await self.redis.get(keys.webhook_position(game_id)) or 0)
            new = [e for e in envelopes if e.seq > position]
            if not new:
                return  # redelivered: its notices are in the outbox already
            followed = await self._load(game_id, position)
            if new[0].seq != position + 1 or await self._split(game_id, new):
                # events before these were never followed (the game had no registration yet, another worker's
                # batch), or this batch ends inside a command: the store has them all
                new = await self.store.read(game_id, after=position)  # whole appends: the engine's are atomic
            if not new:
                return
            made, cancelled = follow(followed, game_id, new, self.thresholds)
            deliveries = self._deliveries(followed, game_id, made, regs)
            cancelled_ids = [outbox.delivery_id(k, f) for k in cancelled for f in regs]
            if await outbox.enqueue(self.redis, game_id, position, new[-1].seq, deliveries, cancelled_ids):
                self.cache.put(game_id, followed)
                if deliveries:
                    log.debug("webhook_notices", game_id=game_id, deliveries=len(deliveries))
                    if min(at for _, at in deliveries) <= self.clock():
                        self._wake.set()
                return
            self.cache.pop(game_id)  # another worker moved the position: follow from where it is now
        raise RuntimeError(f"webhook notices of {game_id} conflicted {MAX_ATTEMPTS} times; the batch stays pending")

    async def _split(self, game_id: str, envelopes: list[EventEnvelope]) -> bool:
        """Whether the batch ends inside a command (the read stopped between two events of one append)."""
        last = envelopes[-1]
        entries = await self.redis.xrange(keys.game_stream(game_id), min=f"{last.seq + 1}-0", max="+", count=1)
        if not entries:
            return False
        fields = command_fields(entries[0][1][b"e"])  # None: a compact entry continuing the command before it
        return fields is None or fields == (last.command_id, last.recorded_at)

    async def _load(self, game_id: str, position: int) -> Followed:
        cached = self.cache.get(game_id)
        if cached is not None and cached.table.version == position:
            return cached
        followed = Followed()
        if position:  # folded again, notices and all, to know the clock_low notices in force (dropped)
            follow(followed, game_id, (await self.store.read(game_id))[:position], self.thresholds)
        return followed

    def _deliveries(self, followed: Followed, game_id: str, made: list[Due], regs: dict[str, Registration]
                    ) -> list[tuple[Delivery, float]]:
        """Each notice for each registration that hears it: the game's own hears every seat's (and the end once,
        seat None); a seat's hears its own, by the token of the player in that seat now."""
        table = followed.table
        now = self.clock()
        out = []
        for due in made:
            notice = due.notice
            if notice.kind == "clock_low" and notice.deadline is not None and notice.deadline <= now:
                continue  # read late (the worker was down): that clock already ran out
            fields = []
            if notice.seat is None:
                fields.append(GAME)
            else:
                if notice.kind != "game_ended":
                    fields.append(GAME)
                player = table.players[notice.seat] if notice.seat < len(table.players) else None
                if player is not None:
                    fields.append(seat_field(player.token_hash))
            for f in fields:
                if f in regs:
                    out.append((Delivery(outbox.delivery_id(notice.key, f), game_id, f, notice, due.at), due.at))
        return out

    # --- deliveries out -------------------------------------------------------------------------------------------

    def start(self) -> None:
        if self._delivering is None:
            self._delivering = asyncio.create_task(self.deliver_forever())

    async def stop(self) -> None:
        if self._delivering is not None:
            await stop_task(self._delivering, "webhook_deliveries")
            self._delivering = None
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def deliver_forever(self) -> None:
        """Claims the deliveries due while fewer than ``CONCURRENCY`` are in flight, each attempt a task of its own:
        a receiver that hangs until the timeout holds one slot, never the others' deliveries."""
        inflight: set[asyncio.Task] = set()
        try:
            while True:
                self._wake.clear()  # a notice put in the outbox from now on wakes the wait below
                room = CONCURRENCY - len(inflight)
                claimed: list[Delivery] = []
                if room > 0:
                    try:
                        claimed = await self._claim(room)
                    except Exception as exc:  # noqa: BLE001 - a store away a moment: tried again at the next look
                        log.warning("webhook_claim_failed", error=str(exc))
                for delivery in claimed:
                    task = asyncio.create_task(self._attempt_logged(delivery))
                    inflight.add(task)
                    task.add_done_callback(inflight.discard)
                if len(claimed) < room or room <= 0:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), self.settings.webhooks_poll_s)
        finally:
            for task in inflight:
                task.cancel()
            await asyncio.gather(*inflight, return_exceptions=True)

    async def _attempt_logged(self, delivery: Delivery) -> None:
        try:
            await self._attempt(delivery)
        except Exception as exc:  # noqa: BLE001 - its lease ends, and another look tries it again
            log.warning("webhook_attempt_failed", game_id=delivery.game_id, key=delivery.notice.key, error=str(exc))

    async def _claim(self, limit: int) -> list[Delivery]:
        now = self.clock()
        ids = await outbox.due(self.redis, now, limit)
        lease = 2 * self.settings.webhooks_timeout_s + 5.0  # past any attempt's end: then it was lost (a kill)
        return [d for p, i in ids if (d := await outbox.claim(self.redis, p, i, now, lease)) is not None]

    def http(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = guarded_client(self.settings.webhooks_allow_private, self.settings.webhooks_timeout_s)
        return self._http

    async def deliver(self) -> int:
        """One look at the outbox (tests, and a tool's one pass): every delivery due is attempted (at most
        ``CLAIM_BATCH``) and awaited. Returns how many."""
        claimed = await self._claim(CLAIM_BATCH)
        await asyncio.gather(*(self._attempt(d) for d in claimed))
        return len(claimed)

    async def _attempt(self, delivery: Delivery) -> None:
        raw = await self.redis.hget(keys.webhooks(delivery.game_id), delivery.field)
        if raw is None:  # the game was archived, or the registration forgotten: nobody to tell
            await outbox.done(self.redis, delivery)
            metrics.WEBHOOK_ATTEMPTS.labels("dropped").inc()
            log.info("webhook_dropped", game_id=delivery.game_id, key=delivery.notice.key, reason="no registration")
            return
        reg = registrations({b"r": raw})["r"]
        error = await self._post(reg, delivery)
        if error is None:
            await outbox.done(self.redis, delivery)
            metrics.WEBHOOK_ATTEMPTS.labels("delivered").inc()
            log.debug("webhook_delivered", game_id=delivery.game_id, key=delivery.notice.key,
                      attempts=delivery.attempts + 1)
            return
        now = self.clock()
        failed = msgspec.structs.replace(delivery, attempts=delivery.attempts + 1, last_error=error)
        backoff = min(self.settings.webhooks_retry_s * 2 ** delivery.attempts, self.settings.webhooks_retry_max_s)
        if now + backoff - delivery.made_at > self.settings.webhooks_give_up_s:
            await outbox.dead(self.redis, failed, error)
            metrics.WEBHOOK_ATTEMPTS.labels("dead").inc()
            log.warning("webhook_dead", game_id=delivery.game_id, key=delivery.notice.key,
                        attempts=failed.attempts, error=error)
            return
        await outbox.retry(self.redis, failed, now + backoff)
        metrics.WEBHOOK_ATTEMPTS.labels("retried").inc()
        log.info("webhook_retry", game_id=delivery.game_id, key=delivery.notice.key, attempts=failed.attempts,
                 retry_in_s=round(backoff, 3), error=error)

    async def _post(self, reg: Registration, delivery: Delivery) -> str | None:
        """None when the receiver answered 2xx; else why not."""
        try:
            check_url(reg.url, self.settings.webhooks_allow_http)
        except WebhookRefused as exc:  # the operator no longer allows http://
            return f"{exc.code}: {exc.message}"
        body = _encode(delivery.notice)
        headers = signing.headers(reg.secret, delivery.notice.key, body, self.clock())
        try:
            async with self.http().stream("POST", reg.url, content=body, headers=headers) as response:
                status = response.status_code
        except httpx.TimeoutException:
            return "timeout"
        except httpx.HTTPError as exc:
            return f"{type(exc).__name__}: {exc}"[:300]
        return None if 200 <= status < 300 else f"HTTP {status}"

