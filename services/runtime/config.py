"""Settings, from environment variables (documented in the README)."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from services.store import keys
from services.store.clients import CLUSTER_SCHEMES, cluster_nodes


def _consumer_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


@dataclass(frozen=True)
class Settings:
    redis_url: str | None = None  # the event store (durable: AOF); None: `souk serve` embeds one
    views_redis_url: str | None = None  # the read models (disposable, rebuilt from events); None: same as redis_url
    data_dir: str = ".souk-data"  # the embedded Redis keeps its AOF here
    host: str = "127.0.0.1"
    port: int = 8000
    log_level: str = "info"
    log_format: str = "json"  # json / console
    access_log: bool = False  # the gateway logs one line per HTTP request (http_request: method, route, status...)
    batch: int = 500  # stream entries per handler call
    reply_timeout: float = 5.0  # seconds the gateway waits for the engine's answer
    reclaim_idle_ms: int = 30_000  # pending entries idle this long are reclaimed from a dead consumer
    engine_lease_ms: int = 5000  # an engine's lease on a partition lapses this long after its last renewal
    projector_lease_ms: int = 5000  # a projector's lease on a partition, as the engine's
    clock_lease_ms: int = 5000  # a clock worker's lease on a partition's deadline index, as the engine's
    events_maxlen: int = 1_000_000  # approximate cap of the global events stream (game streams are never trimmed)
    projector_partition: str = "0/1"  # 'i/N': this projector projects the games of partition i of N
    # The event store's partitions (``keys.partition``): recorded when a store is created (or migrated), read from it
    # by every service after; this setting does not change a store that has them.
    partitions: int = 1
    fsync: str = "always"  # the embedded event store's appendfsync: always (accepted = on disk) or everysec
    open_game_ttl_s: float = 86_400.0  # a game whose seats are not all taken this long after creation is cancelled
    refusal_ttl_s: int = 604_800  # a refused command's outcome is kept this long
    outcome_window: int = 100  # accepted outcomes kept per game in play (older: answered from the game stream; 0: all)
    upkeep_s: float = 5.0  # how often the engine trims acknowledged commands and drops stale consumers
    rate_per_client: float = 200.0  # HTTP requests a second from one client address (0: no limit) ...
    burst_per_client: int = 2000  # ... with bursts of this many
    rate_per_token: float = 50.0  # requests a second with one seat token (0: no limit) ...
    burst_per_token: int = 200  # ... with bursts of this many
    open_games_per_client: int = 20  # games one client address may have waiting for players at once (0: any)
    cors_origins: tuple[str, ...] = ()  # browser origins allowed to call the API ("*": any); none: no CORS headers
    trusted_proxies: tuple[str, ...] = ()  # addresses and networks whose X-Forwarded-For is believed; none: nobody's
    head_timeout_s: float = 5.0  # a connection that has not sent a whole request head this long is closed (0: never)
    connections_per_client: int = 100  # connections one client address may hold open to a gateway process (0: any)
    presence_window_s: float = 60.0  # a seat is connected this long after a request with its token (0: requests
    # do not count, only WebSockets)
    presence_lease_s: float = 30.0  # a gateway killed -9 leaves its seats' sockets "connected" at most this long
    store_memory_full: float = 0.9  # /health is a 503 once the event store uses this share of its maxmemory (0: off)
    idle_consumer_ms: int = 60_000  # /health warns of a consumer that has not read for this long
    stale_consumer_ms: int = 600_000  # a consumer idle this long with nothing pending belongs to a stopped process
    read_store_check_s: float = 1.0  # how often a projector checks that the read store was not lost
    metrics_port: int = 0  # souk engine / projector: serve /metrics on this port (SOUK_HOST); 0: not served
    snapshot_every: int = 100  # the projector snapshots each game's table every this many events (time travel)
    engine_snapshot_every: int = 100  # the engine snapshots each game in play every this many events (0: never)
    finished_ttl_s: int = 600  # a finished game's history read model (a cache) and snapshots expire this long after
    trim_events_s: float = 5.0  # how often a projector trims souk:events behind every projector group
    gateway_processes: int = 1  # souk gateway: processes serving the one port (each its own event loop)
    clock_poll_s: float = 0.05  # souk clock: how often it looks for due games in the deadline index
    clock_retry_s: float = 2.0  # ... and how long it leaves a game it sent commands for before looking again
    clock_batch: int = 100  # ... due games read at a time
    takeover_strategy: str = "greedy"  # the bot that plays a timed-out, absent or resigned seat (services.bots)
    takeover_budget: float = 1.0  # seconds a move of the takeover bot may think (mcts)
    startup_wait_s: float = 10.0  # a service (engine, projector, gateway) whose Redis does not answer at its start
    # tries again this long (a Redis restarting) before it gives up in one line
    # Webhooks (services/webhooks; README, Webhooks)
    webhooks_allow_private: bool = False  # URLs on private, loopback, link-local... addresses (a test, a LAN)
    webhooks_allow_http: bool = False  # http:// URLs (else https:// only)
    webhooks_timeout_s: float = 10.0  # a receiver that has not answered this long failed this attempt
    webhooks_retry_s: float = 5.0  # the first retry comes this long after a failure; each next one twice later ...
    webhooks_retry_max_s: float = 900.0  # ... but at most this long after the previous one
    webhooks_give_up_s: float = 86_400.0  # a notice undelivered this long after it was made goes to the dead letters
    webhooks_low_share: float = 0.2  # "clock low": this share of the time a seat had for its decision ...
    webhooks_low_s: float = 60.0  # ... or this many seconds before its deadline, whichever is less
    webhooks_poll_s: float = 0.5  # how often the webhook worker looks for deliveries due
    consumer: str = field(default_factory=_consumer_name)

    @property
    def views_url(self) -> str | None:
        return self.views_redis_url or self.redis_url

    @classmethod
    def from_env(cls, **overrides) -> Settings:
        """The settings from the environment, then ``overrides`` (None: not given). A value that does not parse
        raises SettingError naming its variable and the form expected."""
        env = os.environ
        values: dict = {}
        for name, (var, parse) in ENV.items():
            text = env.get(var, "")
            if text.strip() == "":  # unset or empty: the default
                continue
            try:
                values[name] = parse(text.strip())
            except ValueError as exc:
                raise SettingError(f"{var}={text!r}: {exc}") from None
        for name, value in overrides.items():
            if value is None:
                continue
            if isinstance(value, str) and name in ENV and name not in ("consumer",):
                try:
                    value = ENV[name][1](value)
                except ValueError as exc:
                    raise SettingError(f"{name.replace('_', '-')} {value!r}: {exc}") from None
            values[name] = value
        return cls(**values)


class SettingError(ValueError):
    """A setting's value does not parse: the message names the variable and the form expected."""


# --- each variable, parsed: a ValueError's message says the form expected ------------------------------------

def redis_url(text: str) -> str:
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if scheme in CLUSTER_SCHEMES:  # a Redis Cluster (services.store.clients): its nodes, no database
        cluster_nodes(text)  # bad_cluster_url
        return text
    if scheme not in ("redis", "rediss", "unix"):
        raise ValueError("expected a Redis URL, redis://HOST:PORT/DB (or rediss://, unix://; "
                         "redis+cluster://HOST:PORT for a Redis Cluster)")
    if scheme != "unix" and not text.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1]:
        raise ValueError("expected a Redis URL with a host, redis://HOST:PORT/DB")
    return text


def port(text: str) -> int:
    value = whole(text)
    if not 1 <= value <= 65535:
        raise ValueError("expected a port number, 1 to 65535")
    return value


def port_or_zero(text: str) -> int:
    value = whole(text)
    if not 0 <= value <= 65535:
        raise ValueError("expected a port number, 1 to 65535 (0: not served)")
    return value


def whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError("expected a whole number") from None


def positive(text: str) -> int:
    value = whole(text)
    if value < 1:
        raise ValueError("expected a whole number of at least 1")
    return value


def not_negative(text: str) -> int:
    value = whole(text)
    if value < 0:
        raise ValueError("expected a whole number, 0 or more")
    return value


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError("expected a number of seconds") from None
    if not value >= 0 or value == float("inf"):
        raise ValueError("expected a number of seconds, 0 or more")
    return value


def positive_seconds(text: str) -> float:
    value = seconds(text)
    if value == 0:
        raise ValueError("expected a number of seconds, more than 0")
    return value


def strategy_name(text: str) -> str:
    """A bot strategy's name (``services.bots.STRATEGIES``)."""
    from services.bots import STRATEGIES

    if text.lower() not in STRATEGIES:
        raise ValueError(f"expected a strategy: {', '.join(STRATEGIES)}")
    return text.lower()


def rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError("expected a number (0: no limit)") from None
    if not value >= 0 or value == float("inf"):
        raise ValueError("expected a number, 0 or more (0: no limit)")
    return value


def lease(text: str) -> float:
    value = seconds(text)
    if value < 0.3:
        raise ValueError("expected a number of seconds, 0.3 or more")
    return value


def fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError("expected a fraction, 0 to 1 (0.9: 90%; 0: not checked)") from None
    if not 0 <= value <= 1:
        raise ValueError("expected a fraction, 0 to 1 (0.9: 90%; 0: not checked)")
    return value


def one_of(*choices: str):
    def parse(text: str) -> str:
        if text.lower() not in choices:
            raise ValueError(f"expected {', '.join(choices[:-1])} or {choices[-1]}")
        return text.lower()
    return parse


def partition(text: str) -> str:
    index, _, count = text.partition("/")
    if not (index.isdigit() and count.isdigit() and 0 <= int(index) < int(count)):
        raise ValueError("expected i/N, a partition i of N with 0 <= i < N (0/1: every game)")
    return text


def switch(text: str) -> bool:
    value = text.lower()
    if value in ("1", "true", "on", "yes"):
        return True
    if value in ("0", "false", "off", "no"):
        return False
    raise ValueError("expected on or off (1/0, true/false, yes/no)")


def origins(text: str) -> tuple[str, ...]:
    return tuple(o.strip() for o in text.split(",") if o.strip())


def networks(text: str) -> tuple[str, ...]:
    """Comma-separated IP addresses and networks (``127.0.0.1``, ``172.16.0.0/12``, ``::1``)."""
    import ipaddress

    items = []
    for item in (item.strip() for item in text.split(",") if item.strip()):
        try:
            if "/" in item:  # with host bits set (10.0.0.1/24): the network they belong to (10.0.0.0/24)
                item = str(ipaddress.ip_network(item, strict=False))
            else:
                ipaddress.ip_address(item)
        except ValueError:
            raise ValueError(f"{item!r} is not an IP address or network: expected addresses and networks separated "
                             f"by commas, 127.0.0.1,172.16.0.0/12") from None
        items.append(item)
    return tuple(items)


def partitions(text: str) -> int:
    """The event store's number of partitions (``keys.checked``: an integer from 1 to 1024, code bad_partitions)."""
    return keys.checked(text)


def text(value: str) -> str:
    return value


LOG_LEVELS = ("debug", "info", "warning", "error", "critical")

# Settings field -> (environment variable, parser). The CLI's options name the same variables.
ENV: dict[str, tuple[str, Callable[[str], Any]]] = {
    "redis_url": ("REDIS_URL", redis_url),
    "views_redis_url": ("SOUK_VIEWS_REDIS_URL", redis_url),
    "data_dir": ("SOUK_DATA_DIR", text),
    "host": ("SOUK_HOST", text),
    "port": ("SOUK_PORT", port),
    "log_level": ("SOUK_LOG_LEVEL", one_of(*LOG_LEVELS)),
    "log_format": ("SOUK_LOG_FORMAT", one_of("json", "console")),
    "access_log": ("SOUK_ACCESS_LOG", switch),
    "batch": ("SOUK_BATCH", positive),
    "reply_timeout": ("SOUK_REPLY_TIMEOUT", seconds),
    "reclaim_idle_ms": ("SOUK_RECLAIM_IDLE_MS", not_negative),
    "engine_lease_ms": ("SOUK_ENGINE_LEASE_MS", positive),
    "projector_lease_ms": ("SOUK_PROJECTOR_LEASE_MS", positive),
    "clock_lease_ms": ("SOUK_CLOCK_LEASE_MS", positive),
    "events_maxlen": ("SOUK_EVENTS_MAXLEN", positive),
    "projector_partition": ("SOUK_PROJECTOR_PARTITION", partition),
    "partitions": ("SOUK_PARTITIONS", partitions),
    "fsync": ("SOUK_FSYNC", one_of("always", "everysec")),
    "open_game_ttl_s": ("SOUK_OPEN_GAME_TTL_S", seconds),
    "refusal_ttl_s": ("SOUK_REFUSAL_TTL_S", not_negative),
    "outcome_window": ("SOUK_OUTCOME_WINDOW", not_negative),
    "upkeep_s": ("SOUK_UPKEEP_S", seconds),
    "rate_per_client": ("SOUK_RATE_PER_CLIENT", rate),
    "burst_per_client": ("SOUK_BURST_PER_CLIENT", not_negative),
    "rate_per_token": ("SOUK_RATE_PER_TOKEN", rate),
    "burst_per_token": ("SOUK_BURST_PER_TOKEN", not_negative),
    "open_games_per_client": ("SOUK_OPEN_GAMES_PER_CLIENT", not_negative),
    "cors_origins": ("SOUK_CORS_ORIGINS", origins),
    "trusted_proxies": ("SOUK_TRUSTED_PROXIES", networks),
    "head_timeout_s": ("SOUK_HEAD_TIMEOUT_S", seconds),
    "connections_per_client": ("SOUK_CONNECTIONS_PER_CLIENT", not_negative),
    "presence_window_s": ("SOUK_PRESENCE_WINDOW_S", seconds),
    "presence_lease_s": ("SOUK_PRESENCE_LEASE_S", lease),
    "idle_consumer_ms": ("SOUK_IDLE_CONSUMER_MS", not_negative),
    "store_memory_full": ("SOUK_STORE_MEMORY_FULL", fraction),
    "stale_consumer_ms": ("SOUK_STALE_CONSUMER_MS", not_negative),
    "read_store_check_s": ("SOUK_READ_STORE_CHECK_S", seconds),
    "metrics_port": ("SOUK_METRICS_PORT", port_or_zero),
    "snapshot_every": ("SOUK_SNAPSHOT_EVERY", positive),
    "engine_snapshot_every": ("SOUK_ENGINE_SNAPSHOT_EVERY", not_negative),
    "startup_wait_s": ("SOUK_STARTUP_WAIT_S", seconds),
    "clock_poll_s": ("SOUK_CLOCK_POLL_S", positive_seconds),
    "clock_retry_s": ("SOUK_CLOCK_RETRY_S", positive_seconds),
    "clock_batch": ("SOUK_CLOCK_BATCH", positive),
    "takeover_strategy": ("SOUK_TAKEOVER_STRATEGY", strategy_name),
    "takeover_budget": ("SOUK_TAKEOVER_BUDGET", positive_seconds),
    "gateway_processes": ("SOUK_GATEWAY_PROCESSES", positive),
    "finished_ttl_s": ("SOUK_FINISHED_TTL_S", positive),
    "trim_events_s": ("SOUK_TRIM_EVENTS_S", seconds),
    "webhooks_allow_private": ("SOUK_WEBHOOKS_ALLOW_PRIVATE", switch),
    "webhooks_allow_http": ("SOUK_WEBHOOKS_ALLOW_HTTP", switch),
    "webhooks_timeout_s": ("SOUK_WEBHOOKS_TIMEOUT_S", seconds),
    "webhooks_retry_s": ("SOUK_WEBHOOKS_RETRY_S", seconds),
    "webhooks_retry_max_s": ("SOUK_WEBHOOKS_RETRY_MAX_S", seconds),
    "webhooks_give_up_s": ("SOUK_WEBHOOKS_GIVE_UP_S", seconds),
    "webhooks_low_share": ("SOUK_WEBHOOKS_LOW_SHARE", fraction),
    "webhooks_low_s": ("SOUK_WEBHOOKS_LOW_S", seconds),
    "webhooks_poll_s": ("SOUK_WEBHOOKS_POLL_S", seconds),
    "consumer": ("SOUK_CONSUMER", text),
}
