"""One reading of a store's refusals (services/store/refusals.py): redis-py's error classes and the lean
connection's error texts name the same condition, and an INFO answer says whether a write would be taken."""

from __future__ import annotations

from redis.exceptions import (BusyLoadingError, ClusterDownError, OutOfMemoryError, ReadOnlyError,
                              RedisClusterException, ResponseError, SlotNotCoveredError)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from services.store import refusals
from services.store.refusals import capacity, refusal


def test_redis_py_classes_and_the_lean_connections_texts_name_the_same_condition():
    pairs = [
        (BusyLoadingError("Redis is loading the dataset in memory"), "LOADING Redis is loading the dataset in memory",
         refusals.LOADING),
        (OutOfMemoryError("command not allowed when used memory > 'maxmemory'."),
         "OOM command not allowed when used memory > 'maxmemory'.", refusals.OUT_OF_MEMORY),
        (ReadOnlyError("You can't write against a read only replica."),
         "READONLY You can't write against a read only replica.", refusals.READ_ONLY),
        (ResponseError("BUSY Redis is busy running a script."), "BUSY Redis is busy running a script.",
         refusals.BUSY),
        (ResponseError("MISCONF Errors writing to the AOF file"), "MISCONF Errors writing to the AOF file",
         refusals.NOT_PERSISTING),
    ]
    for redis_py, text, condition in pairs:
        assert refusal(redis_py).condition == condition
        assert refusal(ResponseError(text)).condition == condition
    assert refusal(RedisConnectionError("connection to Redis lost")).condition == refusals.UNREACHABLE
    assert refusal(RedisTimeoutError("Timeout reading")).condition == refusals.TIMEOUT
    assert refusal(ExceptionGroup("both", [OutOfMemoryError("x"), RedisConnectionError("y")])).condition == \
        refusals.OUT_OF_MEMORY


def test_an_error_that_is_no_refusal_of_the_store_is_not_taken_for_one():
    for exc in (ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value"),
                ResponseError("ERR unknown command"), ValueError("bad"), KeyError("x"),
                ExceptionGroup("mixed", [OutOfMemoryError("x"), ValueError("bug")])):
        assert refusal(exc) is None, exc


def test_a_refusal_says_its_condition_and_asks_for_a_wait():
    found = refusal(ResponseError("OOM command not allowed when used memory > 'maxmemory'."))
    assert "out of memory" in found.message and found.retry_after_s >= 1


def test_info_says_whether_a_write_would_be_taken():
    base = {"used_memory": 900, "mem_not_counted_for_evict": 0, "maxmemory": 0, "maxmemory_policy": "noeviction",
            "loading": 0, "role": "master"}
    assert capacity(base, 0.9).ok
    assert capacity({**base, "maxmemory": 1000}, 0.9).condition == refusals.NEARLY_FULL
    assert capacity({**base, "maxmemory": 1000}, 0.95).ok
    assert capacity({**base, "maxmemory": 1000}, 0).ok  # the threshold off
    assert capacity({**base, "maxmemory": 900}, 0.9).condition == refusals.OUT_OF_MEMORY
    # an eviction policy makes room (evicting events: the operator's choice) instead of refusing
    assert capacity({**base, "maxmemory": 900, "maxmemory_policy": "allkeys-lru"}, 0.9).condition == \
        refusals.NEARLY_FULL
    assert capacity({**base, "loading": 1}, 0.9).condition == refusals.LOADING
    assert capacity({**base, "role": "slave", "master_host": "h", "master_port": 1}, 0.9).condition == \
        refusals.READ_ONLY
    assert not capacity({**base, "role": "slave"}, 0.9).takes_writes
    assert capacity({**base, "maxmemory": 1000}, 0.9).takes_writes  # nearly full still takes them


def test_a_cluster_failing_over_is_a_refusal_not_a_bug():
    """What `souk chaos --cluster` saw while a primary was killed and its replica took over: a restarted engine's
    RedisCluster client raised RedisClusterException on creating its groups (the engine exited 1), and the
    gateway's, writing on a connection the killed node had closed, got uvloop's RuntimeError (answered 500
    internal_error). Both are the store away: waited out at start-up, 503 store_unavailable to a client."""
    away = [
        RedisClusterException("Redis Cluster cannot be connected. Please provide at least one reachable node: "
                              "Error 111 connecting to 127.0.0.1:54011. Connection refused."),
        SlotNotCoveredError("Command # 1 (GET x) of pipeline caused error: Slot 5 is not covered by the cluster."),
        RuntimeError("unable to perform operation on <TCPTransport closed=True reading=False 0x556977099620>; "
                     "the handler is closed"),
    ]
    for exc in away:
        assert refusal(exc).condition == refusals.UNREACHABLE, exc
    assert refusal(ClusterDownError("The cluster is down")).condition == refusals.NO_PRIMARY
    assert refusal(ResponseError("CLUSTERDOWN The cluster is down")).condition == refusals.NO_PRIMARY
    assert refusal(RuntimeError("dictionary changed size during iteration")) is None
