"""The cluster-aware clients (services/store/clients.py, services/store/resp.py's ClusterResp and Subscriber) on a
local Redis Cluster: a ``redis+cluster://`` URL makes redis-py's and FastStream's cluster clients; the lean
connection sends each command to the primary of its key's slot, follows MOVED and ASK, and carries on through a
failover; a subscriber on any node hears what is published on every other."""

from __future__ import annotations

import asyncio
import hashlib

import pytest
from faststream.redis import RedisBroker, RedisClusterBroker
from msgspec.structs import replace
from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot

from services.runtime.config import Settings, SettingError
from services.store import clients, keys
from services.store.resp import REPLICAS_RECOUNT_S, ClusterResp, Resp, Subscriber, routing_key
from tests.cluster.support import keys_on

pytestmark = [pytest.mark.cluster, pytest.mark.anyio]


def cluster_url(cluster) -> str:
    return "redis+cluster://" + ",".join(f"{h}:{p}" for h, p in cluster.addresses()[:2])


@pytest.mark.parametrize("url, why", [
    ("redis+cluster://", "names at least one node"),
    ("redis+cluster://127.0.0.1:7000/2", "one database"),
    ("redis+cluster://127.0.0.1:70000", "not HOST:PORT"),
])
def test_a_bad_cluster_url_is_refused_with_its_code(monkeypatch, url, why):
    monkeypatch.setenv("REDIS_URL", url)
    with pytest.raises(SettingError, match=f"REDIS_URL.*bad_cluster_url: .*{why}"):
        Settings.from_env()


def test_a_cluster_url_names_its_nodes_and_credentials():
    nodes, options = clients.cluster_nodes("redis+cluster://ana:s%40cret@10.0.0.1:7000,10.0.0.2:7001")
    assert nodes == [("10.0.0.1", 7000), ("10.0.0.2", 7001)]
    assert options == {"username": "ana", "password": "s@cret"}
    assert clients.node_url("redis+cluster://ana:x@10.0.0.1:7000,10.0.0.2:7001") == "redis://ana:x@10.0.0.1:7000"
    assert clients.node_url("redis://h:1/2") == "redis://h:1/2"


def test_the_routing_key_of_scripts_and_stream_reads():
    assert routing_key(("EVALSHA", "abc", 2, "souk:{p1}:a", "souk:{p1}:b", "x")) == "souk:{p1}:a"
    assert routing_key(("EVALSHA", "abc", 0, "x")) is None
    assert routing_key(("XREADGROUP", "GROUP", "g", "c", "COUNT", 5, "BLOCK", 100, "STREAMS", "s:{p2}", ">")) \
        == "s:{p2}"
    assert routing_key(("HGET", "h", "f")) == "h" and routing_key(("PING",)) is None


def test_the_routing_key_of_commands_with_a_sub_command_is_the_key_after_it():
    """XGROUP, XINFO, OBJECT and MEMORY name a sub-command first: routed by it, ``XGROUP CREATE s:{p3} ...`` went to
    the slot of the word ``CREATE`` (a MOVED each time, or a group created on no stream)."""
    assert routing_key(("XGROUP", "CREATE", "s:{p3}", "g", "$", "MKSTREAM")) == "s:{p3}"
    assert routing_key(("XINFO", "GROUPS", "s:{p3}")) == "s:{p3}"
    assert routing_key(("xinfo", "stream", "s:{p3}", "FULL")) == "s:{p3}"
    assert routing_key(("OBJECT", "ENCODING", "k:{p1}")) == "k:{p1}"
    assert routing_key(("MEMORY", "USAGE", "k:{p1}")) == "k:{p1}"
    assert routing_key(("XINFO", "HELP")) is None


async def test_the_factory_makes_cluster_clients_from_a_cluster_url_and_plain_ones_otherwise(redis_cluster):
    url = cluster_url(redis_cluster)
    client = clients.async_client(url)
    try:
        assert isinstance(client, RedisCluster)
        await client.set("factory:{a}", 1)
        assert await client.get("factory:{a}") == b"1"
    finally:
        await client.aclose()
    sync = clients.sync_client(url, decode_responses=True)
    try:
        assert sync.get("factory:{a}") == "1"
    finally:
        sync.close()
    assert isinstance(clients.broker(url), RedisClusterBroker)
    assert not isinstance(clients.broker("redis://127.0.0.1:1"), RedisClusterBroker)
    assert isinstance(clients.broker("redis://127.0.0.1:1"), RedisBroker)
    assert isinstance(clients.lean(url), ClusterResp) and type(clients.lean("redis://127.0.0.1:1")) is Resp


async def test_the_lean_connection_sends_each_command_to_its_slots_primary(redis_cluster):
    lean = clients.lean(cluster_url(redis_cluster))
    try:
        replies = await lean.calls(*[("SET", f"lean:{i}", i) for i in range(200)])
        assert replies == [b"OK"] * 200
        assert await lean.calls(*[("GET", f"lean:{i}") for i in range(200)]) == [str(i).encode() for i in range(200)]
        # a script's keys in one slot, run on that slot's primary
        script = "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('GET', KEYS[2])"
        sha = (await lean.call("SCRIPT", "LOAD", script)).decode()
        await lean.call("SET", "lean:{g}:b", "before")
        assert await lean.call("EVALSHA", sha, 2, "lean:{g}:a", "lean:{g}:b", "x") == b"before"
        # evalsha(sha, script, keys, *args): loaded where missing, on the keys' slot's primary
        other = "return redis.call('GET', KEYS[1])"
        assert await lean.evalsha(hashlib.sha1(other.encode()).hexdigest(), other, ["lean:{g}:a"]) == b"x"
    finally:
        await lean.aclose()
    held = [keys_on(node, "lean:*") for node in redis_cluster.primaries()]
    assert sum(held) == 202 and min(held) > 0, held


async def test_a_stale_slot_map_is_corrected_by_moved(redis_cluster):
    lean = ClusterResp(redis_cluster.addresses()[:1])
    try:
        await lean.call("PING")
        assert lean.relearnt == 1
        wrong = lean._owners[0]
        lean._owners = [wrong] * len(lean._owners)  # every slot believed on one primary: two thirds answer MOVED
        replies = await lean.calls(*[("SET", f"moved:{i}", i) for i in range(60)])
        assert replies == [b"OK"] * 60
        assert lean.relearnt >= 2 and len(set(lean._owners)) == 3
    finally:
        await lean.aclose()


async def test_a_subscriber_on_one_node_hears_what_is_published_through_another(redis_cluster):
    client = clients.async_client(cluster_url(redis_cluster))
    heard: list[tuple[bytes, bytes]] = []
    subscriber = Subscriber.like(client, lambda channel, data: heard.append((channel, data)))
    lean = clients.lean(cluster_url(redis_cluster))
    try:
        await subscriber.start(channels=("souk:replies:gw1",), patterns=("souk:pushes:*",))
        channels = ["souk:replies:gw1", "souk:pushes:g1:3:0"]
        assert len({key_slot(c.encode()) for c in channels}) == 2
        await lean.call("PUBLISH", channels[0], "a")
        await lean.call("PUBLISH", channels[1], "b")
        for _ in range(100):
            if len(heard) == 2:
                break
            await asyncio.sleep(0.02)
        assert sorted(heard) == [(b"souk:pushes:g1:3:0", b"b"), (b"souk:replies:gw1", b"a")]
    finally:
        await subscriber.aclose()
        await lean.aclose()
        await client.aclose()


async def test_the_lean_connection_carries_on_through_a_failover_with_its_scripts(fresh_redis_cluster):
    cluster = fresh_redis_cluster
    lean = ClusterResp(cluster.addresses(), failover_wait_s=20)
    script = "return redis.call('INCR', KEYS[1])"
    key = "failover:{x}"
    try:
        sha = (await lean.call("SCRIPT", "LOAD", script)).decode()
        assert await lean.call("EVALSHA", sha, 1, key) == 1
        # on the replica before the kill (replication is asynchronous: a clean-clone CI killed the primary first and
        # the promoted replica rightly answered 1 again), as the next test does
        assert await lean.replicated(key, 5000) == (1, 1)
        cluster.fail_over(cluster.primary_for(key))
        # the promoted replica has the key, not the script cache: loaded again, sent again
        assert await lean.call("EVALSHA", sha, 1, key) == 2
    finally:
        await lean.aclose()


async def test_a_command_sent_while_its_primary_is_down_is_answered_once_the_replica_took_over(fresh_redis_cluster):
    cluster = fresh_redis_cluster
    lean = ClusterResp(cluster.addresses(), failover_wait_s=25)
    key = "down:{y}"
    try:
        await lean.call("SET", key, "kept")
        primary = cluster.primary_for(key)
        # The write on the replica first (replication is asynchronous: the last clean-clone CI killed the primary
        # before its replica had it, and the promoted replica rightly answered None)
        with primary.client() as direct:
            assert direct.execute_command("WAIT", 1, 5000) == 1
        primary.kill()  # no waiting: the command goes out while the slot has no live primary
        assert await lean.call("GET", key) == b"kept"
        assert await lean.call("INCR", "down:{y}:n") == 1
    finally:
        await lean.aclose()


async def test_an_append_on_a_cluster_is_answered_only_once_a_replica_has_it(fresh_redis_cluster):
    """The answer to an append is published once the primary's replica has the write (WAIT): a failover right after
    an answer then cannot lose the events it answered for. A replica stopped (SIGSTOP) holds the answer back."""
    import os
    import signal

    from contracts.envelope import GENESIS_HASH
    from services.store.events import OK, RedisEventStore
    from tests.services.test_store_contract import append

    cluster = fresh_redis_cluster
    url = cluster_url(cluster)
    client = clients.async_client(url)
    store = RedisEventStore(client)
    heard: list[bytes] = []
    subscriber = clients.subscriber(url, lambda channel, data: heard.append(data))
    game_id = "w1"
    [replica] = cluster.replicas_of(cluster.primary_for(keys.game_stream(game_id)))
    try:
        await subscriber.start(channels=("souk:replies:test",))
        first = append(game_id, 0, 1, GENESIS_HASH, "k1", b"first")
        [ok] = await store.append([replace(first, notify="souk:replies:test")])
        assert ok.status == OK
        for _ in range(100):
            if heard:
                break
            await asyncio.sleep(0.02)
        assert heard == [b"first"]
        os.kill(replica.pid, signal.SIGSTOP)
        try:
            second = append(game_id, 1, 1, first.head, "k2", b"second")
            fields = {f: getattr(second, f) for f in second.__slots__}
            task = asyncio.create_task(store.append([type(second)(**{**fields, "notify": "souk:replies:test"})]))
            await asyncio.sleep(0.6)
            assert heard == [b"first"] and not task.done()  # written on the primary, not yet answered
        finally:
            os.kill(replica.pid, signal.SIGCONT)
        [result] = await task
        assert result.status == OK
        for _ in range(100):
            if len(heard) == 2:
                break
            await asyncio.sleep(0.02)
        assert heard == [b"first", b"second"]
        reader = replica.client()
        reader.execute_command("READONLY")  # a replica answers reads of its slots on this connection
        assert reader.xlen(keys.game_stream(game_id)) == 2  # the replica has what was answered
        reader.close()
    finally:
        await subscriber.aclose()
        await store.aclose()
        await client.aclose()


async def test_a_killed_primary_back_as_a_replica_is_waited_for_again(fresh_redis_cluster):
    """Through a failover the lean connection learns the map while the killed primary is down: the promoted node
    has no replica, so an append's answer waits for none. The killed node, restarted, comes back as its replica; the
    answers must wait for it again, or the next failover of those slots loses what was answered (`souk chaos
    --cluster` kills primaries in turn; the map alone was learnt again only at a MOVED or a failover)."""
    cluster = fresh_redis_cluster
    lean = ClusterResp(cluster.addresses(), failover_wait_s=20)
    key = "again:{z}"
    try:
        await lean.call("SET", key, "1")
        assert await lean.replicated(key, 1000) == (1, 1)
        primary = cluster.primary_for(key)
        cluster.fail_over(primary)
        await lean.call("SET", key, "2")  # the map learnt again: the promoted node alone
        assert await lean.replicated(key, 100) == (0, 0)
        cluster.restart(primary)  # back, as the promoted node's replica, in sync
        await asyncio.sleep(REPLICAS_RECOUNT_S)
        await lean.call("SET", key, "3")
        assert await lean.replicated(key, 1000) == (1, 1)
    finally:
        await lean.aclose()


async def test_redis_py_s_cluster_client_follows_an_ask_with_several_connections_to_the_new_owner(
        fresh_redis_cluster):
    """A key already MIGRATEd while its slot is half-moved is answered ``ASK`` by the old owner: the command must go
    to the new owner right after ``ASKING``, on the same connection. redis-py's asyncio cluster client sends ASKING
    and the command as two pooled commands, and its pool hands out the connection used longest ago: with several
    idle connections to the new owner the command went out on another one, was answered MOVED back to the old owner,
    and after 16 redirections failed ``TTL exhausted`` (the clock worker, the webhook worker and the gateway's
    redis-py calls, during a reshard). ``clients.async_client`` reuses the connection just released."""
    from tests.cluster.support import migrate_slot, node_id

    cluster = fresh_redis_cluster
    key = "asked:{pool}"
    slot = key_slot(key.encode())
    source = cluster.primary_for(key)
    target = next(p for p in cluster.primaries() if p.port != source.port)
    other = next(f"busy:{{{n}}}" for n in range(1000) if cluster.primary_for(f"busy:{{{n}}}").port == target.port)
    client = clients.async_client(cluster_url(cluster))
    try:
        await client.set(key, "v")
        await asyncio.gather(*(client.get(other) for _ in range(8)))  # several idle connections to the target
        target.ask("CLUSTER", "SETSLOT", slot, "IMPORTING", node_id(cluster, source))
        source.ask("CLUSTER", "SETSLOT", slot, "MIGRATING", node_id(cluster, target))
        source.ask("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", key)
        assert [await client.get(key) for _ in range(3)] == [b"v"] * 3
        assert await client.hset("asked:{pool}:h", "f", "1") == 1  # a key that is nowhere yet: made on the target
        assert migrate_slot(cluster, slot, source, target) == 0
        assert await client.get(key) == b"v" and await client.hget("asked:{pool}:h", "f") == b"1"
    finally:
        await client.aclose()


async def test_redis_py_s_cluster_client_follows_an_ask_to_a_primary_just_added(fresh_redis_cluster):
    """A slot being migrated to a primary just added (``redis-cli --cluster add-node``, then reshard): the old owner
    answers ``ASK`` naming a node the client has never met. redis-py's asyncio cluster client looked the node up in
    its cache, found none and failed ``AttributeError: 'NoneType' object has no attribute ...`` — not a Redis
    error, so the clock worker's loop (which carries on after Redis errors) ended for good."""
    from tests.cluster.support import node_id

    cluster = fresh_redis_cluster
    key = "asked:{new-node}"
    slot = key_slot(key.encode())
    client = clients.async_client(cluster_url(cluster))
    try:
        await client.set(key, "v")
        source = cluster.primary_for(key)
        target = await asyncio.to_thread(cluster.add_primary)
        target.ask("CLUSTER", "SETSLOT", slot, "IMPORTING", node_id(cluster, source))
        source.ask("CLUSTER", "SETSLOT", slot, "MIGRATING", node_id(cluster, target))
        source.ask("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", key)
        assert await client.get(key) == b"v"
        assert await client.hset("asked:{new-node}:h", "f", "1") == 1
        assert target.ask("CLUSTER", "COUNTKEYSINSLOT", slot) == 2  # both on the new primary
    finally:
        await client.aclose()
