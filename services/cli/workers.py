"""The engine, the projector and the webhook worker as FastStream subscribers on one RedisBroker, and the clock
worker beside them.

``souk engine``, ``souk projector``, ``souk clock`` and ``souk webhooks`` run one role each; ``souk serve`` runs them
all beside the gateway.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import msgspec
import structlog
from faststream import FastStream
from faststream.specification import AsyncAPI

from contracts.envelope import CommandEnvelope
from services.store import clients, keys
from services.store.codec import command_envelope_decoder
from services.store.resp import Resp
from services.runtime.config import Settings
from services.runtime.loop import stop_task
from services.clock import ClockWorker, Takeover
from services.engine.service import Engine
from services.runtime.logs import LIBRARIES
from services.runtime.metrics import Server as MetricsServer
from services.projector.service import Partition, Projector
from services.store.events import RedisEventStore
from services.store.leases import Leases
from services.engine.upkeep import expire_open_games
from services.webhooks.worker import WebhookWorker
from services.store.streams import (
    IdentifiedEntries,
    batch_subscription,
    drop_stale_consumers,
    ensure_group,
    trim_acknowledged,
    when_redis_answers,
)

log = structlog.get_logger("souk.workers")
ENGINE, PROJECTOR, CLOCK, WEBHOOKS = "engine", "projector", "clock", "webhooks"
EVERY_ROLE = (ENGINE, PROJECTOR, CLOCK, WEBHOOKS)  # souk serve's


class Workers:
    """A broker with the chosen roles subscribed, and the Redis client they share."""

    def __init__(self, settings: Settings, roles: tuple[str, ...] = (ENGINE, PROJECTOR)) -> None:
        self.settings = settings
        self.roles = roles
        self._watch: asyncio.Task | None = None
        self._upkeep: asyncio.Task | None = None
        self._clock: asyncio.Task | None = None
        self.metrics: MetricsServer | None = None  # /metrics on SOUK_METRICS_PORT, when set
        # apply_types=False: the handlers take the entries as Redis gave them (services/store/streams.py); there is
        # nothing for FastDepends to inject or validate.
        # FastStream logs through a standard logger that structlog renders (services/runtime/logs.py), not its own
        # coloured handler: every line a worker prints is JSON.
        # On a Redis Cluster (a redis+cluster:// URL: services/store/clients.py) FastStream's RedisClusterBroker,
        # redis-py's cluster clients and the lean connection routed by slot.
        self.broker = clients.broker(settings.redis_url, log_level=logging.DEBUG, apply_types=False,
                                     logger=logging.getLogger(LIBRARIES))
        self.redis = clients.async_client(settings.redis_url)
        self.views_redis = clients.async_client(settings.views_url)
        self.store = RedisEventStore(self.redis, settings.events_maxlen, settings.refusal_ttl_s,
                                     settings.outcome_window)
        # The engine's entries are acknowledged by the appends that answer them (one script: no XACK of their own)
        self.engine = Engine(self.redis, self.store, snapshot_every=settings.engine_snapshot_every,
                             acknowledge=keys.ENGINE_GROUP)
        self.partition = Partition.parse(settings.projector_partition)
        self.projector = Projector(self.views_redis, self.store, partition=self.partition,
                                   snapshot_every=settings.snapshot_every, trim_every_s=settings.trim_events_s,
                                   finished_ttl_s=settings.finished_ttl_s)
        self.clock: ClockWorker | None = None  # the clock worker, in the role clock
        # The clock workers own the partitions' deadline indexes as the engines own their commands (leases with
        # no stream: services/clock/worker.py)
        self.clock_leases: Leases | None = None
        if CLOCK in roles:
            self.clock_leases = Leases(self.redis, keys.CLOCK_GROUP, f"clock-{settings.consumer}",
                                       settings.clock_lease_ms, stream=None)
            self.clock = ClockWorker(self.redis, self.store, poll_s=settings.clock_poll_s,
                                     retry_s=settings.clock_retry_s, batch=settings.clock_batch,
                                     takeover=Takeover(settings.takeover_strategy, settings.takeover_budget),
                                     leases=self.clock_leases)
        self.webhooks = WebhookWorker(self.redis, self.store, settings) if WEBHOOKS in roles else None
        # The engine's, the projector's and the webhook worker's reads, each on a lean connection of its own
        # (streams.lean_reads), each one XREADGROUP over every partition's stream; on a cluster, where one
        # XREADGROUP may only name streams of one slot, a reader per partition (streams.batch_subscription).
        self.reads: list[Resp] = []
        self.commands = [keys.commands(p) for p in keys.PARTITIONS]
        self.events = [keys.events(p) for p in keys.PARTITIONS]
        # The engines own the partitions: each partition's commands are read by one engine at a time, which keeps
        # its games cached (services/store/leases.py); several engines share the partitions, not their commands.
        self.leases: Leases | None = None
        if ENGINE in roles:
            self.leases = Leases(self.redis, keys.ENGINE_GROUP, f"engine-{settings.consumer}",
                                 settings.engine_lease_ms, on_take=self.engine.forget)
            batch_subscription(
                self.broker, self.commands, keys.ENGINE_GROUP, f"engine-{settings.consumer}", self.on_commands,
                max_records=settings.batch, reclaim_idle_ms=settings.reclaim_idle_ms, title="souk:commands",
                with_ids=True, acknowledges=True, lean=self._lean_read(), leases=self.leases,
                description="Commands (field `c`: CommandEnvelope JSON), one stream per partition "
                            "(souk:{pN}:commands). The engine decides them, appends the events to the game's stream "
                            "and its partition's events stream, and answers on the envelope's reply_to.",
            )
            self.broker.publisher(stream=self.events[0], title="souk:{pN}:events (appended by the engine)",
                                  description="Every game's events in commit order: fields g (game id), k (game), "
                                              "e (EventEnvelope JSON; see `souk schema`).")
            self.broker.publisher("souk:replies:{gateway}", title="souk:replies",
                                  description="The engine's answer to one command (Reply JSON; see `souk schema`), "
                                              "on the command's reply_to channel.")
        # The projectors own the events partitions as the engines own the commands': a partition's events are
        # projected by one projector at a time, which keeps its games cached. ``--partition i/N`` (a deployment of
        # before) keeps its group of its own, which reads every event and projects the games hashing to i.
        self.projector_leases: Leases | None = None
        if PROJECTOR in roles:
            if self.partition.count == 1:
                self.projector_leases = Leases(self.redis, keys.PROJECTOR_GROUP, f"projector-{settings.consumer}",
                                               settings.projector_lease_ms, stream=keys.events,
                                               on_take=self.projector.forget)
            batch_subscription(
                self.broker, self.events, self.partition.group, f"projector-{settings.consumer}", self.on_events,
                max_records=settings.batch, reclaim_idle_ms=settings.reclaim_idle_ms, title="souk:events",
                with_ids=True, acknowledges=True, lean=self._lean_read(), leases=self.projector_leases,
                description="Events (field `e`: EventEnvelope JSON) folded into the read models. Group `projector`, "
                            "whose members own the partitions; or `projector:i/N` for partition i of N (each reads "
                            "every event, projects its games).",
            )
            self.broker.publisher("souk:updates:{game_id}", title="souk:updates",
                                  description="A game's read models reached a new version (ViewsUpdated JSON: version, "
                                              "status, awaiting seats; see `souk schema`).")

        if self.webhooks is not None:
            batch_subscription(
                self.broker, self.events, keys.WEBHOOKS_GROUP, f"webhooks-{settings.consumer}", self.webhooks.handle,
                max_records=settings.batch, reclaim_idle_ms=settings.reclaim_idle_ms, title="souk:events (webhooks)",
                lean=self._lean_read(),
                description="Events (field `e`: EventEnvelope JSON) read by the webhook worker (group `webhooks`): "
                            "the notices of games with webhooks go to the outbox (services/webhooks).",
            )

    def _lean_read(self) -> Callable[[], Resp]:
        """A maker of lean connections for the stream readers (one per reader: a blocking read holds its own)."""

        def make() -> Resp:
            lean = Resp.like(self.redis)
            self.reads.append(lean)
            return lean

        return make

    async def prepare(self) -> None:
        """Consumer groups at 0, so a worker started after the first entries still sees them. A Redis away at
        that moment (restarting) is waited for, as the subscribers' start waits for it (``streams``)."""
        await when_redis_answers(self._prepare, "prepare")

    async def _prepare(self) -> None:
        if ENGINE in self.roles:
            for stream in self.commands:
                await ensure_group(self.redis, stream, keys.ENGINE_GROUP)
        if PROJECTOR in self.roles:
            for stream in self.events:
                await ensure_group(self.redis, stream, self.partition.group)
            rebuilt = await self.projector.initialise()
            if rebuilt is not None:
                log.info("read_store_initialised", games=rebuilt)
        if self.webhooks is not None:
            for stream in self.events:
                await ensure_group(self.redis, stream, keys.WEBHOOKS_GROUP)

    async def start(self) -> None:
        await self.prepare()
        await self.start_leases()
        await self.broker.start()
        self.start_watch()
        await self.start_metrics()

    async def start_metrics(self) -> None:
        """prometheus-client's HTTP server on ``metrics_port`` (a worker has no other), with the streams' backlog
        read every few seconds. ``souk serve`` needs none: its gateway's /metrics shows every role."""
        if self.settings.metrics_port and self.metrics is None:
            self.metrics = MetricsServer(self.redis, self.settings.host, self.settings.metrics_port)
            await self.metrics.start()

    async def start_leases(self) -> None:
        """The engine's, the projector's and the clock's first round of leases (on its own, each owns every
        partition before its first read), then their rounds; taken again when Redis was away at the start
        (``when_redis_answers``)."""
        for leases in (self.leases, self.projector_leases, self.clock_leases):
            if leases is not None and leases.running is None:
                await when_redis_answers(leases.start, "leases")

    def start_watch(self) -> None:
        if PROJECTOR in self.roles and self._watch is None:
            self._watch = asyncio.create_task(self.watch_read_store())
        if ENGINE in self.roles and self._upkeep is None:
            self._upkeep = asyncio.create_task(self.keep_streams())
        if self.clock is not None and self._clock is None:
            self._clock = asyncio.create_task(self.clock.run())
        if self.webhooks is not None:
            self.webhooks.start()  # the deliveries from the outbox

    async def keep_streams(self) -> None:
        """The engine's upkeep, every ``upkeep_s``: games still open ``open_game_ttl_s`` after their creation are
        cancelled, acknowledged commands are trimmed from ``souk:commands`` (it used to grow without bound), the
        outcomes of refusals older than ``refusal_ttl_s`` are forgotten, and
        consumers of stopped processes, idle for ``stale_consumer_ms`` with nothing pending, are removed from both
        streams' groups."""
        while True:
            await asyncio.sleep(self.settings.upkeep_s)
            try:
                expired = await expire_open_games(self.redis, self.settings.open_game_ttl_s)
                trimmed = sum([await trim_acknowledged(self.redis, stream, keys.ENGINE_GROUP)
                               for stream in self.commands])
                forgotten = await self.store.forget_refusals()
                dropped = []
                for stream in self.commands + self.events:
                    dropped += await drop_stale_consumers(self.redis, stream, self.settings.stale_consumer_ms)
            except Exception as exc:  # noqa: BLE001 - tried again next time
                log.warning("upkeep_failed", error=str(exc))
                continue
            if trimmed or dropped or expired or forgotten:
                log.info("upkeep", commands_trimmed=trimmed, consumers_dropped=dropped, open_games_expired=expired,
                         refusals_forgotten=forgotten)

    async def watch_read_store(self) -> None:
        """A running projector notices a lost read store (a views Redis restarted empty, flushed, evicted) and
        rebuilds it from the events, without a restart: every ``read_store_check_s`` it looks for the mark the
        rebuild leaves. Writes in flight meanwhile are safe: each is conditional on the positions it read."""
        while True:
            await asyncio.sleep(self.settings.read_store_check_s)
            try:
                rebuilt = await self.projector.initialise()
            except Exception as exc:  # noqa: BLE001 - a store down now is checked again next time
                log.warning("read_store_check_failed", error=str(exc))
                continue
            if rebuilt is not None:
                log.warning("read_store_rebuilt", games=rebuilt, reason="the read store was found empty")

    async def _started(self) -> None:
        self.start_watch()
        await self.start_metrics()

    async def _stop_watch(self) -> None:
        for name, task in (("watch", self._watch), ("upkeep", self._upkeep), ("clock", self._clock)):
            if task is not None:
                await stop_task(task, name)
        self._watch = self._upkeep = self._clock = None
        if self.webhooks is not None:
            await self.webhooks.stop()
        if self.metrics is not None:
            await self.metrics.stop()
            self.metrics = None

    async def _close_reads(self) -> None:
        """After the broker stopped: a read still blocked on the server ends with its connection, nothing
        delivered to it (a later call would reconnect); then the engine's, the projector's and the clock's leases are
        released (a clean stop: SIGTERM; the clock stopped before, ``_stop_watch``), so that the others take their
        partitions at once, not after the leases lapse."""
        for lean in self.reads:
            await lean.aclose()
        for leases in (self.leases, self.projector_leases, self.clock_leases):
            if leases is None:
                continue
            try:
                await leases.stop()
            except Exception as exc:  # noqa: BLE001 - a store away: the leases lapse on their own
                log.warning("leases_not_released", group=leases.group, error=f"{type(exc).__name__}: {exc}")

    async def stop(self) -> None:
        await self._stop_watch()
        await self.broker.stop()
        await self._close_reads()
        await self.store.aclose()
        await self.projector.aclose()
        await self.redis.aclose()
        await self.views_redis.aclose()

    async def on_commands(self, entries: IdentifiedEntries) -> None:
        """A batch of ``souk:commands`` entries, with their ids: they order each seat's commands (``superseded``),
        and the engine acknowledges each with the append that answers it (FastStream acknowledges nothing here)."""
        envelopes: list[CommandEnvelope] = []
        ids: list[bytes] = []
        parked: list[str] = []
        for entry, fields in entries:
            try:
                envelopes.append(command_envelope_decoder.decode(fields[b"c"]))
                ids.append(entry)
            except (KeyError, msgspec.ValidationError, msgspec.DecodeError, RecursionError) as exc:
                # Nobody to answer (the reply channel is inside): parked for an operator, and acknowledged.
                log.warning("command_envelope_unreadable", error=str(exc))
                await self.engine.park(None, "envelope_unreadable", str(exc), raw=fields.get(b"c", b""))
                parked.append(entry.decode())
        if parked:
            await self.store.acknowledge(entries.stream, keys.ENGINE_GROUP, parked)
        await self.engine.handle(envelopes, ids)  # answers each sender on its reply_to channel

    async def on_events(self, entries: IdentifiedEntries) -> None:
        """A batch of ``souk:events`` entries: projected (their read models and positions written), then
        acknowledged in the partition's group with one XACK on the store's lean connection (a batch whose
        projection raised stays pending, and comes again)."""
        await self.projector.handle([fields for _, fields in entries])
        await self.store.acknowledge(entries.stream, self.partition.group, [entry for entry, _ in entries])

    def asyncapi(self) -> AsyncAPI:
        return AsyncAPI(self.broker, title="Souk streams", version="0.1.0",
                        description="Commands, events and replies of Souk on Redis Streams and pub/sub.")

    def app(self) -> FastStream:
        app = FastStream(self.broker, specification=self.asyncapi(), logger=logging.getLogger(LIBRARIES))
        app.on_startup(self.prepare)
        app.on_startup(self.start_leases)
        app.after_startup(self._started)
        app.on_shutdown(self._stop_watch)
        app.after_shutdown(self._close_reads)
        return app
