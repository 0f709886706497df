"""When a Redis store refuses: one reading of its refusals, for the gateway's answers (a 503 ``store_unavailable``,
never a 500), ``GET /health`` and its gauge in ``/metrics``, and ``souk chaos``.

Two ways in. ``refusal(exc)`` reads an error a command got: redis-py's classes (``BusyLoadingError``,
``OutOfMemoryError``, ``ReadOnlyError``, ...: redis-py strips the error's first word) and the lean connection's
(``services.store.resp``: a ``ResponseError`` whose text starts with that word, ``LOADING``, ``OOM``, ``BUSY``...).
``writable(redis)`` asks a server whether it would take a write now (``INFO``: loading, the memory used against
``maxmemory``, the replication role), before any write is refused.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from redis.exceptions import (BusyLoadingError, ClusterDownError, OutOfMemoryError, ReadOnlyError,
                              RedisClusterException, RedisError, ResponseError)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

# The conditions, each a stable name (in /health's body, the gauge's label, the logs)
LOADING, OUT_OF_MEMORY, READ_ONLY, BUSY, NOT_PERSISTING, NO_PRIMARY, UNREACHABLE, TIMEOUT, NEARLY_FULL = (
    "loading", "out_of_memory", "read_only", "busy", "not_persisting", "no_primary", "unreachable", "timeout",
    "nearly_full")
CONDITIONS = (LOADING, OUT_OF_MEMORY, READ_ONLY, BUSY, NOT_PERSISTING, NO_PRIMARY, UNREACHABLE, TIMEOUT, NEARLY_FULL)

_SAYS = {
    LOADING: "is loading its data (after a restart)",
    OUT_OF_MEMORY: "is out of memory (maxmemory reached under noeviction): it takes no write",
    READ_ONLY: "is a read-only replica: it takes no write",
    BUSY: "is busy running a script",
    NOT_PERSISTING: "cannot write its data to disk (MISCONF): it takes no write",
    NO_PRIMARY: "is a replica that lost its primary",
    UNREACHABLE: "does not answer",
    TIMEOUT: "did not answer in time",
}
_RETRY_AFTER_S = {LOADING: 1, OUT_OF_MEMORY: 5, READ_ONLY: 5, BUSY: 1, NOT_PERSISTING: 5, NO_PRIMARY: 5,
                  UNREACHABLE: 1, TIMEOUT: 1}
# The first word of an error reply (as the lean connection keeps it)
_FIRST_WORD = {"LOADING": LOADING, "OOM": OUT_OF_MEMORY, "READONLY": READ_ONLY, "BUSY": BUSY, "MISCONF": NOT_PERSISTING,
               "MASTERDOWN": NO_PRIMARY, "NOREPLICAS": NO_PRIMARY, "CLUSTERDOWN": NO_PRIMARY}
# uvloop's error on writing to a connection its peer has closed (redis-py lets it through: a killed Redis Cluster
# node's connections, seen by souk chaos --cluster), where asyncio's own loop raises ConnectionError
_CLOSED_TRANSPORT = "the handler is closed"


@dataclass(frozen=True)
class Refusal:
    """A store's condition (one of ``CONDITIONS``), the sentence that says it, and how long a client should wait
    (``retry_after_s``, the answer's ``Retry-After``)."""

    condition: str
    detail: str = ""

    @property
    def message(self) -> str:
        said = _SAYS.get(self.condition, "refuses")
        return f"a Redis store {said}; retry shortly (a command may be resent with the same command_id)" + (
            f" [{self.detail}]" if self.detail else "")

    @property
    def retry_after_s(self) -> int:
        return _RETRY_AFTER_S.get(self.condition, 1)


def refusal(exc: BaseException) -> Refusal | None:
    """The store condition an error means, or None (the error is not a store's refusal: a bug of ours)."""
    if isinstance(exc, BaseExceptionGroup):  # a task group's: a refusal when every error in it is one
        found = [refusal(e) for e in exc.exceptions]
        return found[0] if found and all(found) else None
    condition = _condition(exc)
    return Refusal(condition, str(exc)[:200]) if condition else None


def _condition(exc: BaseException) -> str | None:
    if isinstance(exc, BusyLoadingError):  # a ConnectionError to redis-py: before it
        return LOADING
    if isinstance(exc, OutOfMemoryError):
        return OUT_OF_MEMORY
    if isinstance(exc, ClusterDownError):  # a slot's primary failed, its replica not promoted yet
        return NO_PRIMARY
    if isinstance(exc, ReadOnlyError):
        return READ_ONLY
    if isinstance(exc, ResponseError):
        return _FIRST_WORD.get(str(exc).split(" ", 1)[0])
    if isinstance(exc, RedisTimeoutError):
        return TIMEOUT
    if isinstance(exc, (RedisConnectionError, ConnectionError)):
        return UNREACHABLE
    if isinstance(exc, RedisClusterException):  # redis-py's cluster client reached no node, or none serves a slot
        return UNREACHABLE
    if isinstance(exc, RuntimeError) and str(exc).endswith(_CLOSED_TRANSPORT):
        return UNREACHABLE
    return None


@dataclass(frozen=True)
class Capacity:
    """Whether a store takes writes now: ``condition`` None when it does; ``memory_used`` is the share of
    ``maxmemory`` in use (0 without a maxmemory)."""

    condition: str | None
    detail: str
    memory_used: float = 0.0
    evicts: str = ""  # the maxmemory-policy, when it may delete keys to make room ("": it may not)

    @property
    def ok(self) -> bool:
        return self.condition is None

    @property
    def takes_writes(self) -> bool:
        """Every condition but ``nearly_full`` refuses writes (or any command)."""
        return self.condition in (None, NEARLY_FULL)

    @property
    def says(self) -> str:
        """A sentence for people: the condition and what was read."""
        if self.condition is None:
            return f"the event store takes writes ({self.detail})"
        said = _SAYS.get(self.condition, "is nearly full: its writes will be refused soon")
        return f"the event store's Redis {said} ({self.detail})"


async def writable(redis: Any, nearly_full: float, timeout: float = 2.0) -> Capacity:
    """Asks the server (one ``INFO``, which Redis answers while loading) whether a write would be taken now:
    loading, a replica, ``maxmemory`` reached under ``noeviction`` (out of memory), or in use past ``nearly_full``
    of it (a fraction, 0.9 say; 0: not checked) are each a condition. A server that cannot say (busy, away) is
    the condition its error means."""
    try:  # the default sections: memory, persistence, replication among them
        info = await asyncio.wait_for(redis.info(), timeout)
    except TimeoutError:
        return Capacity(TIMEOUT, f"INFO took more than {timeout} s")
    except RedisError as exc:
        found = refusal(exc)
        return Capacity(found.condition if found else UNREACHABLE, str(exc)[:200])
    return capacity(info, nearly_full)


def capacity(info: dict[str, Any], nearly_full: float) -> Capacity:
    """``writable``'s reading of an ``INFO`` answer."""
    maxmemory = int(info.get("maxmemory", 0) or 0)
    # What Redis counts against maxmemory: the replication and AOF buffers are left out (evict.c)
    used = int(info.get("used_memory", 0) or 0) - int(info.get("mem_not_counted_for_evict", 0) or 0)
    share = used / maxmemory if maxmemory else 0.0
    policy = str(info.get("maxmemory_policy", "noeviction"))
    if int(info.get("loading", 0) or 0):
        return Capacity(LOADING, f"loading, {info.get('loading_loaded_perc', '?')}% done", share)
    if info.get("role") == "slave":
        return Capacity(READ_ONLY, f"a replica of {info.get('master_host')}:{info.get('master_port')}", share)
    if int(info.get("aof_enabled", 0) or 0) and info.get("aof_last_write_status") == "err":
        return Capacity(NOT_PERSISTING, "its last write to the AOF failed", share)
    memory = f"{used} of maxmemory {maxmemory} bytes in use ({share:.0%}, {policy})"
    evicts = policy if maxmemory and policy != "noeviction" else ""  # it would delete keys, a game's stream too
    if maxmemory and used >= maxmemory and policy == "noeviction":
        return Capacity(OUT_OF_MEMORY, memory, share)
    if maxmemory and nearly_full and share >= nearly_full:
        return Capacity(NEARLY_FULL, memory, share, evicts)
    return Capacity(None, memory if maxmemory else "no maxmemory", share, evicts)
