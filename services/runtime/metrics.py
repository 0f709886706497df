"""Prometheus metrics (prometheus-client, the default registry).

The gateway serves them at ``GET /metrics``; ``souk engine`` and ``souk projector`` have no HTTP server and
serve them with prometheus-client's own on ``SOUK_METRICS_PORT`` when it is set (``Server``). ``souk serve``
runs every role in one process: its ``/metrics`` shows everything.

- ``souk_commands_total{game, outcome, code}``: commands the engine decided, counted once each when their
  outcome is recorded (``outcome`` accepted or rejected, ``code`` the refusal's code, "" when accepted; ``game``
  the game's name, "none" for a game that does not exist). A resend answered from the record is not counted again.
- ``souk_engine_conflicts_total``: commands the engine decided again because their append found the game moved
  on under its cached state (another engine appended to it, or a resend of a game it had cached): the game was
  reloaded and the command decided again. Engines that share a game's commands pay this on most of them.
- ``souk_command_latency_seconds{game}``: from a command's publication (``CommandEnvelope.sent_at``, the
  gateway's clock) to its views being written by the projector (its clock).
- ``souk_stream_length{stream}``, ``souk_consumer_group_pending{stream, group}`` (delivered, not acknowledged),
  ``souk_consumer_group_lag{stream, group}`` (not delivered yet; Redis 7+), ``souk_parked_commands``
  (``souk:parked``), ``souk_backlog_age_seconds`` (how old that reading is): read from Redis (XINFO) by
  ``Backlog.refresh``, bounded by a timeout, never during the scrape itself.
- ``souk_event_store_writable`` (1 while the event store's Redis takes writes, 0 while it refuses them: loading,
  out of memory, a read-only replica, busy, away) and ``souk_event_store_memory_used_ratio`` (the share of its
  ``maxmemory`` in use; 0 without one): read by ``/health`` and by each scrape of the gateway's ``/metrics``
  (``refresh_store``, bounded by a timeout).
- ``souk_websockets_open``, ``souk_listener_connected{listener}``, ``souk_listener_reconnects_total{listener}``:
  the gateway's sockets and pub/sub listeners.
- ``souk_http_requests_total{method, route, status}`` and ``souk_http_request_duration_seconds{method, route}``
  (a histogram): the gateway's HTTP requests (``services.gateway.access``). ``route`` is the route's template
  (``/games/{game_id}/view``), ``unmatched`` for a request no route took (404, 405); ``method`` one of the
  methods HTTP defines, else ``other``: every label takes a bounded set of values.
- ``souk_webhook_attempts_total{outcome}``: the webhook worker's POSTs (``services.webhooks``), by what came of
  each: ``delivered`` (2xx), ``retried`` (failed, tried again later), ``dead`` (failed past the limit: a dead
  letter), ``dropped`` (nobody registered any more: the game archived).

The hot paths only add to counters: the engine once per batch and outcome, the projector one observation per
command.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import redis.asyncio as aioredis
import structlog
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from services.store import keys
from services.store.refusals import BUSY, LOADING, TIMEOUT, UNREACHABLE, Capacity, writable
from services.store.streams import stream_backlog

log = structlog.get_logger("souk.metrics")

NO_GAME = "none"
REFRESH_TIMEOUT_S = 1.0  # a Redis slower than this leaves the previous reading in place
REFRESH_EVERY_S = 5.0  # how often a worker serving its own metrics reads the backlog again

COMMANDS = Counter("souk_commands", "Commands decided by the engine, counted once each when their outcome is "
                   "recorded: outcome accepted or rejected, code the refusal's code", ["game", "outcome", "code"])
CONFLICTS = Counter("souk_engine_conflicts", "Commands the engine decided again because their append found the game "
                    "moved on under its cached state (reloaded, decided again)")
LATENCY = Histogram("souk_command_latency_seconds", "From a command's publication (CommandEnvelope.sent_at) to its "
                    "views being projected", ["game"],
                    buckets=(0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0))
WEBSOCKETS = Gauge("souk_websockets_open", "WebSockets following a game's views in this gateway")
LISTENER_CONNECTED = Gauge("souk_listener_connected", "1 while the gateway's pub/sub listener has its connection",
                           ["listener"])
LISTENER_RECONNECTS = Counter("souk_listener_reconnects", "Times the gateway's pub/sub listener connected again "
                              "after losing its connection", ["listener"])
HTTP_REQUESTS = Counter("souk_http_requests", "HTTP requests the gateway answered, by method, route template "
                        "(unmatched: no route) and status", ["method", "route", "status"])
SOCKET_COMMANDS = Counter("souk_socket_commands", "Command frames the gateway answered on a seat's WebSocket (no HTTP "
                          "request: souk_http_requests does not count them), by the answer's status and error code "
                          "(empty when accepted)", ["status", "code"])
HTTP_DURATION = Histogram("souk_http_request_duration_seconds", "How long the gateway took to answer an HTTP request "
                          "(from its head to the end of the answer), by method and route template",
                          ["method", "route"],
                          buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0))
STORE_WRITABLE = Gauge("souk_event_store_writable", "1 while the event store's Redis takes writes, 0 while it "
                       "refuses them (loading, out of memory, read-only replica, busy script, away), as last read")
STORE_MEMORY = Gauge("souk_event_store_memory_used_ratio", "The share of its maxmemory the event store's Redis uses "
                     "(0 without a maxmemory), as last read")
CLOCK_SENT = Counter("souk_clock_commands", "Commands the clock worker sent for what fell due (timeout, tick, bot), "
                     "each copy counted (two workers may send the same one: the engine decides it once)", ["kind"])
CLOCK_LATENESS = Histogram("souk_clock_lateness_seconds", "From the instant something fell due (a deadline, a game "
                           "timer, a bot's turn) to the clock worker sending its command, by kind", ["kind"],
                           buckets=(0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 60.0))
WEBHOOK_ATTEMPTS = Counter("souk_webhook_attempts", "Webhook deliveries attempted by the webhook worker, by outcome: "
                           "delivered, retried, dead, dropped", ["outcome"])
BACKLOG_FAILURES = Counter("souk_backlog_refresh_failures", "Readings of the streams' backlog that failed or "
                           "timed out (the previous reading stays)")

_commands: dict[tuple[str, str, str], Any] = {}
_latency: dict[str, Any] = {}


def count_commands(counts: dict[tuple[str, str, str], int]) -> None:
    """Adds a batch's outcomes: (game, outcome, code) -> how many."""
    for key, n in counts.items():
        child = _commands.get(key)
        if child is None:
            child = _commands[key] = COMMANDS.labels(key[0] or NO_GAME, key[1], key[2])
        child.inc(n)


_requests: dict[tuple[str, str, int], Any] = {}
_durations: dict[tuple[str, str], Any] = {}


def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    """One HTTP request answered (labels already bounded: ``services.gateway.access``)."""
    counted = _requests.get((method, route, status))
    if counted is None:
        counted = _requests[(method, route, status)] = HTTP_REQUESTS.labels(method, route, str(status))
    counted.inc()
    timed = _durations.get((method, route))
    if timed is None:
        timed = _durations[(method, route)] = HTTP_DURATION.labels(method, route)
    timed.observe(seconds)


def observe_latency(game: str, seconds: float) -> None:
    child = _latency.get(game)
    if child is None:
        child = _latency[game] = LATENCY.labels(game or NO_GAME)
    child.observe(seconds if seconds > 0 else 0.0)


def clock_sent(kind: str, lateness: float) -> None:
    CLOCK_SENT.labels(kind).inc()
    CLOCK_LATENESS.labels(kind).observe(lateness if lateness > 0 else 0.0)


def note_store(capacity: Capacity) -> None:
    """The gauges of the event store's ability to take writes (``services.store.refusals.writable``)."""
    STORE_WRITABLE.set(1 if capacity.takes_writes else 0)
    if capacity.condition not in (UNREACHABLE, TIMEOUT, BUSY, LOADING):  # these say nothing of its memory
        STORE_MEMORY.set(capacity.memory_used)


async def refresh_store(redis: aioredis.Redis, nearly_full: float) -> Capacity:
    capacity = await writable(redis, nearly_full, REFRESH_TIMEOUT_S)
    note_store(capacity)
    return capacity


class Backlog(Collector):
    """The streams' backlog as last read from the event store: ``refresh`` reads it (bounded by a timeout),
    ``collect`` (the scrape) only reports the last reading."""

    def __init__(self) -> None:
        self.reading: dict[str, Any] | None = None
        self.at = 0.0

    async def refresh(self, redis: aioredis.Redis, timeout: float = REFRESH_TIMEOUT_S) -> bool:
        try:
            self.reading = await asyncio.wait_for(self._read(redis), timeout)
        except Exception as exc:  # noqa: BLE001 - a Redis away or slow: the last reading stays, marked by its age
            BACKLOG_FAILURES.inc()
            log.debug("backlog_refresh_failed", error=f"{type(exc).__name__}: {exc}")
            return False
        self.at = time.time()
        return True

    @staticmethod
    async def _read(redis: aioredis.Redis) -> dict[str, Any]:
        streams = {stream: await stream_backlog(redis, stream)
                   for p in keys.PARTITIONS for stream in (keys.commands(p), keys.events(p))}
        return {"streams": streams, "parked": await redis.xlen(keys.PARKED)}

    def collect(self) -> Iterator[GaugeMetricFamily]:
        reading = self.reading
        if reading is None:
            return
        length = GaugeMetricFamily("souk_stream_length", "Entries in the stream", labels=["stream"])
        pending = GaugeMetricFamily("souk_consumer_group_pending", "Entries delivered to the group's consumers and "
                                    "not yet acknowledged (XINFO GROUPS pending)", labels=["stream", "group"])
        lag = GaugeMetricFamily("souk_consumer_group_lag", "Entries not yet delivered to the group (XINFO GROUPS lag, "
                                "Redis 7+; absent when Redis cannot tell)", labels=["stream", "group"])
        for stream, backlog in reading["streams"].items():
            length.add_metric([stream], backlog["length"])
            for group, info in backlog["groups"].items():
                pending.add_metric([stream, group], info["pending"])
                if info["lag"] is not None:
                    lag.add_metric([stream, group], info["lag"])
        yield length
        yield pending
        yield lag
        yield GaugeMetricFamily("souk_parked_commands", "Commands the engine could not decide nor answer "
                                "(XLEN souk:parked)", value=reading["parked"])
        yield GaugeMetricFamily("souk_backlog_age_seconds", "How old the streams' backlog reading is",
                                value=time.time() - self.at)


BACKLOG = Backlog()
REGISTRY.register(BACKLOG)


def exposition() -> tuple[bytes, str]:
    """The metrics in Prometheus' text format, and its content type (with its charset: a response must send it
    as it is, not add one)."""
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


class Server:
    """A worker's own metrics endpoint (prometheus-client's HTTP server, in a thread), and the task reading the
    backlog every ``REFRESH_EVERY_S``."""

    def __init__(self, redis: aioredis.Redis, host: str, port: int) -> None:
        self.redis, self.host, self.port = redis, host, port
        self._http = None
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        from prometheus_client import start_http_server

        self._http, _ = start_http_server(self.port, addr=self.host)
        self.port = self._http.server_port
        await BACKLOG.refresh(self.redis)
        self._task = asyncio.create_task(self._refresh())
        log.info("metrics_serving", url=f"http://{self.host}:{self.port}/metrics")

    async def _refresh(self) -> None:
        while True:
            await asyncio.sleep(REFRESH_EVERY_S)
            await BACKLOG.refresh(self.redis)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
        if self._http is not None:
            await asyncio.to_thread(self._http.shutdown)  # waits for its loop to notice (up to 0.5 s)
            self._http.server_close()
            self._http = None

