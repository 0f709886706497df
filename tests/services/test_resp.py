"""The lean Redis connection (services/store/resp.py): pipelining, errors, scripts, reconnection, pub/sub, bytes."""

from __future__ import annotations

import asyncio
import hashlib

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoPermissionError, NoScriptError, ResponseError

from services.store.resp import Resp, Subscriber

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
async def deadline():
    """A call whose reply never comes would hang the test: cancel it after a few seconds instead (anyio runs a
    test's async fixtures and the test itself in one task)."""
    handle = asyncio.get_running_loop().call_later(5, asyncio.current_task().cancel)
    yield
    handle.cancel()


@pytest.fixture
async def resp(redis_url):
    lean = Resp(redis_url)
    yield lean
    await lean.aclose()


async def eventually(check, timeout: float = 2.0, every: float = 0.005):
    """Polls ``await check()`` until it is truthy (and returns it), failing after ``timeout`` seconds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        result = await check()
        if result:
            return result
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(every)


def count_writes(resp: Resp) -> list[bytes]:
    """Wraps the connected transport's write; the returned list grows by one chunk per write."""
    transport = resp._proto.transport
    writes: list[bytes] = []
    write = transport.write

    def counting(data):
        writes.append(bytes(data))
        return write(data)

    transport.write = counting
    return writes


async def test_concurrent_calls_get_their_own_replies_in_one_write(resp, redis):
    assert await resp.call("PING") == b"PONG"  # connected
    writes = count_writes(resp)
    n = 500
    sets = await asyncio.gather(*(resp.call("SET", f"k:{i}", f"v:{i}") for i in range(n)))
    assert sets == [b"OK"] * n
    assert len(writes) <= 2  # one turn of the event loop, one write (a little slack)
    before = len(writes)
    gets = await asyncio.gather(*(resp.call("GET", f"k:{i}") for i in range(n)))
    assert gets == [f"v:{i}".encode() for i in range(n)]
    assert len(writes) - before <= 2
    # and the server really holds what each caller wrote
    assert await redis.mget([f"k:{i}" for i in (0, 250, 499)]) == [b"v:0", b"v:250", b"v:499"]
    await redis.delete(*(f"k:{i}" for i in range(n)))


async def test_replies_of_different_shapes_reach_the_right_callers(resp, redis):
    await redis.rpush("list", "a", "b", "c")
    await redis.hset("hash", mapping={"f": "1"})
    got = await asyncio.gather(resp.call("LRANGE", "list", 0, -1), resp.call("INCR", "counter"),
                               resp.call("GET", "missing"), resp.call("HGET", "hash", "f"), resp.call("ECHO", "x"))
    assert got == [[b"a", b"b", b"c"], 1, None, b"1", b"x"]
    await redis.delete("list", "hash", "counter")


async def test_a_server_error_fails_only_its_own_call_and_the_connection_stays_usable(resp, redis):
    await resp.call("SET", "text", "not a number")
    results = await asyncio.gather(resp.call("SET", "a", "1"), resp.call("INCR", "text"), resp.call("GET", "a"),
                                   resp.call("NOSUCHCOMMAND"), resp.call("INCR", "n"), return_exceptions=True)
    assert results[0] == b"OK" and results[2] == b"1" and results[4] == 1
    assert type(results[1]) is ResponseError and "not an integer" in str(results[1])
    assert type(results[3]) is ResponseError and "unknown command" in str(results[3]).lower()
    with pytest.raises(ResponseError):
        await resp.call("INCR", "text")
    assert await resp.call("INCR", "n") == 2  # same connection, still in step
    await redis.delete("text", "a", "n")


async def test_evalsha_loads_a_script_the_server_does_not_have_and_runs_it_once(resp, redis):
    script = "return redis.call('INCRBY', ARGV[1], ARGV[2])"
    sha = hashlib.sha1(script.encode()).hexdigest()
    await redis.script_flush()
    with pytest.raises(NoScriptError):  # the path evalsha must take
        await resp.call("EVALSHA", sha, 0, "counter", 5)
    assert await redis.script_exists(sha) == [False]
    assert await resp.evalsha(sha, script, "counter", 5) == 5
    assert await redis.script_exists(sha) == [True]
    assert await redis.get("counter") == b"5"  # ran once: nothing ran on the NOSCRIPT attempt
    assert await resp.evalsha(sha, script, "counter", 2) == 7  # cached now
    await redis.delete("counter")


async def test_a_call_in_flight_when_the_connection_is_killed_fails_with_a_connection_error(resp, redis):
    my_id = await resp.call("CLIENT", "ID")
    blocked = asyncio.ensure_future(resp.call("BLPOP", "never", 5))
    await eventually(lambda: _blocked_clients(redis))
    assert await redis.client_kill_filter(_id=my_id) == 1
    with pytest.raises(RedisConnectionError):
        await asyncio.wait_for(blocked, 2)


async def _blocked_clients(redis) -> int:
    return (await redis.info("clients"))["blocked_clients"]


async def test_a_call_after_the_connection_was_lost_reconnects_and_succeeds(resp, redis):
    await resp.call("SET", "kept", "yes")
    first_id = await resp.call("CLIENT", "ID")
    assert await redis.client_kill_filter(_id=first_id) == 1

    async def noticed() -> bool:
        return resp._proto is None

    await eventually(noticed)
    assert await asyncio.wait_for(resp.call("GET", "kept"), 2) == b"yes"
    assert await resp.call("CLIENT", "ID") != first_id  # a new connection
    await redis.delete("kept")


async def test_resp_like_talks_to_the_same_server_and_db_as_the_redis_py_client(redis_url, resp):
    other_db = aioredis.Redis.from_url(redis_url.rsplit("/", 1)[0] + "/3")
    lean = Resp.like(other_db)
    try:
        await other_db.set("where", "db3")
        assert await lean.call("GET", "where") == b"db3"
        await lean.call("SET", "written", "by lean")
        assert await other_db.get("written") == b"by lean"
        assert await resp.call("GET", "where") is None  # not db 0
        # and it selects db 3 again after reconnecting
        assert await other_db.client_kill_filter(_id=await lean.call("CLIENT", "ID")) == 1

        async def noticed() -> bool:
            return lean._proto is None

        await eventually(noticed)
        assert await asyncio.wait_for(lean.call("GET", "where"), 2) == b"db3"
    finally:
        await other_db.delete("where", "written")
        await lean.aclose()
        await other_db.aclose()


async def test_the_subscriber_gets_channel_and_pattern_messages_as_bytes(redis_url, redis):
    received: asyncio.Queue[tuple[bytes, bytes]] = asyncio.Queue()
    sub = Subscriber(redis_url, lambda channel, data: received.put_nowait((channel, data)))
    await sub.start(channels=("news", "sport"), patterns=("game:*",))
    try:
        async def subscribed() -> bool:
            numsub = dict(await redis.pubsub_numsub("news", "sport"))
            return numsub[b"news"] == 1 and numsub[b"sport"] == 1 and await redis.pubsub_numpat() == 1

        await eventually(subscribed)
        await redis.publish("news", b"hello")
        await redis.publish("other", b"nobody listens")
        await redis.publish("game:42", b"move\r\n\x00")
        await redis.publish("sport", b"goal")
        got = [await asyncio.wait_for(received.get(), 2) for _ in range(3)]
        assert got == [(b"news", b"hello"), (b"game:42", b"move\r\n\x00"), (b"sport", b"goal")]
        assert received.empty()
        assert not sub.lost.done()
    finally:
        await sub.aclose()
    lost = await asyncio.wait_for(sub.lost, 2)
    assert isinstance(lost, RedisConnectionError)


async def test_the_subscriber_starts_once_redis_confirmed_and_a_refused_subscription_raises(redis_url, redis):
    """What the gateway's listeners rely on: after ``start`` nothing published is missed; a subscription Redis
    refuses (ACL) raises NoPermissionError and ends the connection; ``ping`` gets an answer (``heard`` moves)."""
    sub = Subscriber(redis_url, lambda channel, data: None)
    await sub.start(channels=("confirmed",), patterns=("confirmed:*",))
    try:
        numsub = dict(await redis.pubsub_numsub("confirmed"))  # no waiting: subscribed when start returned
        assert numsub[b"confirmed"] == 1
        before = sub.heard
        await asyncio.sleep(0.01)
        sub.ping()
        await eventually(lambda: asyncio.sleep(0, sub.heard > before))
    finally:
        await sub.aclose()

    await redis.execute_command("ACL", "SETUSER", "default", "resetchannels")
    try:
        refused = Subscriber(redis_url, lambda channel, data: None)
        with pytest.raises(NoPermissionError):
            await asyncio.wait_for(refused.start(channels=("forbidden",)), 2)
        assert isinstance(await asyncio.wait_for(refused.lost, 2), NoPermissionError)
    finally:
        await redis.execute_command("ACL", "SETUSER", "default", "allchannels")


async def test_binary_keys_and_values_round_trip_unchanged(resp, redis):
    value = b"a\r\nb\x00c\r\n$3\r\n*1\r\n" + bytes(range(256))
    key = b"bin\x00\r\nkey"
    assert await resp.call("SET", key, value) == b"OK"
    assert await resp.call("GET", key) == value
    assert await redis.get(key) == value  # stored as sent, not re-encoded
    big = bytes(range(256)) * 4096  # 1 MiB: a reply that arrives in many chunks
    await resp.call("SET", "big", big)
    assert await resp.call("GET", "big") == big
    await redis.delete(key, "big")


async def test_a_connection_whose_select_fails_is_never_used(redis, redis_url):
    """A hello that fails (here SELECT of a db the server lacks) closes the connection: every call fails alike,
    none is sent on an unselected connection (db 0)."""
    lean = Resp(redis_url.rsplit("/", 1)[0] + "/99")
    try:
        for _ in range(2):
            with pytest.raises(ResponseError, match="DB index"):
                await lean.call("SET", "resp:test:db99", "x")
        assert await redis.get("resp:test:db99") is None
    finally:
        await lean.aclose()


async def test_concurrent_first_calls_wait_for_auth_and_select(redis, redis_url):
    """With a password and a db, callers that come while AUTH is answered wait for SELECT too."""
    user, password = "resp-test-user", "resp-test-pw"
    await redis.execute_command("ACL", "SETUSER", user, "on", f">{password}", "~*", "+@all")
    host_port = redis_url.split("://", 1)[1].split("/", 1)[0]
    lean = Resp(f"redis://{user}:{password}@{host_port}/3")
    other = aioredis.Redis.from_url(redis_url.rsplit("/", 1)[0] + "/3")
    try:
        first = asyncio.ensure_future(lean.call("SET", "resp:test:auth:0", 0))
        while lean._proto is None and getattr(lean, "_handshaking", None) is None:  # connected, hello under way
            await asyncio.sleep(0)
        await asyncio.gather(first, *(lean.call("SET", f"resp:test:auth:{i}", i) for i in range(1, 20)))
        assert await other.mget([f"resp:test:auth:{i}" for i in range(20)]) == [str(i).encode() for i in range(20)]
        assert await redis.exists(*[f"resp:test:auth:{i}" for i in range(20)]) == 0  # nothing in db 0
    finally:
        await other.delete(*[f"resp:test:auth:{i}" for i in range(20)])
        await other.aclose()
        await lean.aclose()
        await redis.execute_command("ACL", "DELUSER", user)


async def test_calls_waiting_when_closed_fail_and_a_new_connection_gets_only_its_own_replies(resp):
    await resp.call("PING")
    blocked = asyncio.ensure_future(resp.call("BLPOP", "resp:test:never", 0))
    await asyncio.sleep(0.05)
    await resp.aclose()
    with pytest.raises(RedisConnectionError):
        await blocked
    assert await asyncio.gather(*(resp.call("ECHO", str(i)) for i in range(5))) == [str(i).encode() for i in range(5)]


async def test_a_big_command_is_written_at_once_not_at_the_end_of_the_loops_turn(resp, redis_url):
    import time

    import redis as sync_redis

    from services.store.resp import SEND_AT_ONCE

    await resp.call("PING")  # connected
    big = b"x" * SEND_AT_ONCE
    pending = asyncio.ensure_future(resp.call("SET", "now", big))
    await asyncio.sleep(0)  # the call runs up to its reply; the loop does not turn again below
    observer = sync_redis.Redis.from_url(redis_url)
    try:
        deadline = time.monotonic() + 2
        while observer.get("now") is None and time.monotonic() < deadline:  # blocking: the loop does not turn
            time.sleep(0.005)
        assert observer.get("now") == big
    finally:
        observer.close()
    assert await pending == b"OK"


async def test_calls_sends_several_commands_at_once_and_raises_the_first_error_once_all_answered(resp, redis):
    await redis.set("s", "text")
    await redis.hset("h", mapping={"a": "1"})
    assert await resp.calls(("GET", "s"), ("HGETALL", "h"), ("HGET", "h", "none")) == [b"text", [b"a", b"1"], None]
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        await resp.calls(("HGET", "s", "a"), ("INCR", "n"))
    assert await redis.get("n") == b"1"  # sent with it, and answered: the connection is in step
    assert await resp.calls(("GET", "n")) == [b"1"]
