"""Settings, from environment variables (documented in the README)."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field


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
    batch: int = 500  # stream entries per handler call
    reply_timeout: float = 5.0  # seconds the gateway waits for the engine's answer
    reclaim_idle_ms: int = 30_000  # pending entries idle this long are reclaimed from a dead consumer
    events_maxlen: int = 1_000_000  # approximate cap of the global events stream (game streams are never trimmed)
    projector_partition: str = "0/1"  # 'i/N': this projector projects the games of partition i of N
    fsync: str = "always"  # the embedded event store's appendfsync: always (accepted = on disk) or everysec
    open_game_ttl_s: float = 86_400.0  # a game whose seats are not all taken this long after creation is cancelled
    refusal_ttl_s: int = 604_800  # a refused command's outcome is kept this long (an accepted one for ever)
    upkeep_s: float = 5.0  # how often the engine trims acknowledged commands and drops stale consumers
    rate_per_client: float = 200.0  # HTTP requests a second from one client address (0: no limit) ...
    burst_per_client: int = 2000  # ... with bursts of this many
    rate_per_token: float = 50.0  # requests a second with one seat token (0: no limit) ...
    burst_per_token: int = 200  # ... with bursts of this many
    open_games_per_client: int = 20  # games one client address may have waiting for players at once (0: any)
    cors_origins: tuple[str, ...] = ()  # browser origins allowed to call the API ("*": any); none: no CORS headers
    idle_consumer_ms: int = 60_000  # /health warns of a consumer that has not read for this long
    stale_consumer_ms: int = 600_000  # a consumer idle this long with nothing pending belongs to a stopped process
    read_store_check_s: float = 1.0  # how often a projector checks that the read store was not lost
    metrics_port: int = 0  # souk engine / projector: serve /metrics on this port (SOUK_HOST); 0: not served
    consumer: str = field(default_factory=_consumer_name)

    @property
    def views_url(self) -> str | None:
        return self.views_redis_url or self.redis_url

    @classmethod
    def from_env(cls, **overrides) -> Settings:
        env = os.environ
        values = dict(
            redis_url=env.get("REDIS_URL") or None,
            views_redis_url=env.get("SOUK_VIEWS_REDIS_URL") or None,
            data_dir=env.get("SOUK_DATA_DIR", cls.data_dir),
            host=env.get("SOUK_HOST", cls.host),
            port=int(env.get("SOUK_PORT", cls.port)),
            log_level=env.get("SOUK_LOG_LEVEL", cls.log_level),
            log_format=env.get("SOUK_LOG_FORMAT", cls.log_format),
            batch=int(env.get("SOUK_BATCH", cls.batch)),
            reply_timeout=float(env.get("SOUK_REPLY_TIMEOUT", cls.reply_timeout)),
            reclaim_idle_ms=int(env.get("SOUK_RECLAIM_IDLE_MS", cls.reclaim_idle_ms)),
            events_maxlen=int(env.get("SOUK_EVENTS_MAXLEN", cls.events_maxlen)),
            projector_partition=env.get("SOUK_PROJECTOR_PARTITION", cls.projector_partition),
            fsync=env.get("SOUK_FSYNC", cls.fsync),
            open_game_ttl_s=float(env.get("SOUK_OPEN_GAME_TTL_S", cls.open_game_ttl_s)),
            refusal_ttl_s=int(env.get("SOUK_REFUSAL_TTL_S", cls.refusal_ttl_s)),
            upkeep_s=float(env.get("SOUK_UPKEEP_S", cls.upkeep_s)),
            rate_per_client=float(env.get("SOUK_RATE_PER_CLIENT", cls.rate_per_client)),
            burst_per_client=int(env.get("SOUK_BURST_PER_CLIENT", cls.burst_per_client)),
            rate_per_token=float(env.get("SOUK_RATE_PER_TOKEN", cls.rate_per_token)),
            burst_per_token=int(env.get("SOUK_BURST_PER_TOKEN", cls.burst_per_token)),
            open_games_per_client=int(env.get("SOUK_OPEN_GAMES_PER_CLIENT", cls.open_games_per_client)),
            cors_origins=tuple(o.strip() for o in env.get("SOUK_CORS_ORIGINS", "").split(",") if o.strip()),
            idle_consumer_ms=int(env.get("SOUK_IDLE_CONSUMER_MS", cls.idle_consumer_ms)),
            stale_consumer_ms=int(env.get("SOUK_STALE_CONSUMER_MS", cls.stale_consumer_ms)),
            read_store_check_s=float(env.get("SOUK_READ_STORE_CHECK_S", cls.read_store_check_s)),
            metrics_port=int(env.get("SOUK_METRICS_PORT") or cls.metrics_port),
        )
        if env.get("SOUK_CONSUMER"):
            values["consumer"] = env["SOUK_CONSUMER"]
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)
