"""The local Redis Cluster the tests start (tests/cluster/conftest.py, services/embedded/cluster.py) is a real one:
redis-py's cluster client talks to it, a hash tag keeps a game's keys in one slot where one Lua script runs over
them (keys of two slots are refused), a killed primary's replica takes its slots with its keys, and nothing is
left behind when it stops."""

from __future__ import annotations

import os
import socket

import pytest
import redis
from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot

from services.embedded.cluster import ClusterError, LocalCluster, parse_nodes, redis_cli
from tests.cluster.support import keys_on

pytestmark = [pytest.mark.cluster, pytest.mark.anyio]

# One script over a game's keys, as the store's append will be: declared keys only, all in the game's slot.
APPEND = """
redis.call('XADD', KEYS[1], '*', 'event', ARGV[1])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
redis.call('SET', KEYS[3], ARGV[1])
return {redis.call('XLEN', KEYS[1]), redis.call('HGET', KEYS[2], ARGV[2]), redis.call('GET', KEYS[3])}
"""


def game_keys(game: str) -> list[str]:
    return [f"souk:game:{{{game}}}", f"souk:outcomes:{{{game}}}", f"souk:head:{{{game}}}"]


async def test_the_cluster_answers_through_redis_pys_cluster_client_with_its_keys_spread_over_three_primaries(
        redis_cluster):
    client = RedisCluster.from_url(redis_cluster.url)
    try:
        info = await client.cluster_info()
        assert info["cluster_state"] == "ok" and int(info["cluster_slots_assigned"]) == 16384
        assert len(client.get_primaries()) == 3
        for i in range(300):
            await client.set(f"spread:{i}", i)
        assert [int(v) for v in await client.mget_nonatomic([f"spread:{i}" for i in range(300)])] == list(range(300))
    finally:
        await client.aclose()
    primaries = redis_cluster.primaries()
    held = {node.port: keys_on(node, "spread:*") for node in primaries}
    assert len(held) == 3 and sum(held.values()) == 300 and min(held.values()) > 0, held
    replicas = {r.port for p in primaries for r in redis_cluster.replicas_of(p)}
    assert len(replicas) == 3 and not replicas & set(held)
    assert 6379 not in {n.port for n in redis_cluster.nodes} | {n.bus_port for n in redis_cluster.nodes}


async def test_a_games_keys_share_its_hash_tags_slot_and_one_script_runs_over_them(redis_cluster):
    client = RedisCluster.from_url(redis_cluster.url)
    append = client.register_script(APPEND)
    games = [f"g{i}" for i in range(12)]
    try:
        for game in games:
            keys = game_keys(game)
            slots = {await client.cluster_keyslot(key) for key in keys}  # the server's CLUSTER KEYSLOT
            assert slots == {key_slot(f"{{{game}}}".encode())}
            assert await append(keys=keys, args=["e1", "c1"]) == [1, b"e1", b"e1"]
            assert await append(keys=keys, args=["e2", "c2"]) == [2, b"e2", b"e2"]
    finally:
        await client.aclose()
    owners = {redis_cluster.primary_for(f"{{{game}}}").port for game in games}
    assert len(owners) > 1, "twelve games all on one primary: the tags did not spread them"
    for game in games:  # all three keys on the one primary that serves the tag's slot, read there without MOVED
        direct = redis_cluster.primary_for(f"{{{game}}}").client()
        try:
            assert direct.exists(*game_keys(game)) == 3 and direct.xlen(game_keys(game)[0]) == 2
        finally:
            direct.close()


def test_a_script_over_keys_of_two_slots_is_refused_by_the_server(redis_cluster):
    first = "souk:game:1"
    second = next(key for key in (f"souk:game:{i}" for i in range(2, 100))
                  if key_slot(key.encode()) != key_slot(first.encode()))
    direct = redis_cluster.primary_for(first).client()
    try:
        with pytest.raises(redis.ResponseError, match="don't hash to the same slot"):  # -CROSSSLOT
            direct.eval("return redis.call('MGET', KEYS[1], KEYS[2])", 2, first, second)
    finally:
        direct.close()


def test_only_a_primary_is_failed_over(redis_cluster):
    primary = redis_cluster.primaries()[0]
    (replica,) = redis_cluster.replicas_of(primary)
    with pytest.raises(ClusterError, match="not a primary"):
        redis_cluster.fail_over(replica)
    assert replica.running and primary.running


async def test_a_killed_primarys_replica_takes_its_slots_and_its_keys_stay_readable(fresh_redis_cluster):
    cluster = fresh_redis_cluster
    victim = cluster.primary_for("{doomed}")
    (replica,) = cluster.replicas_of(victim)
    client = RedisCluster.from_url(cluster.url)
    try:
        for i in range(100):
            await client.set(f"{{doomed}}:{i}", i)
            await client.set(f"other:{i}", i)
        direct = victim.client()
        try:
            assert direct.wait(1, 5000) == 1  # the replica has every write before the primary dies
        finally:
            direct.close()
        pid = victim.pid
        promoted = cluster.fail_over(victim)
        assert promoted.port == replica.port and not victim.running
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
        assert cluster.primary_for("{doomed}").port == promoted.port
        # The client made before the failover finds the new primary by itself (MOVED, or its refreshed map).
        values = await client.mget_nonatomic([f"{{doomed}}:{i}" for i in range(100)])
        assert [int(v) for v in values] == list(range(100))
        assert [int(v) for v in await client.mget_nonatomic([f"other:{i}" for i in range(100)])] == list(range(100))
        await client.set("{doomed}:after", "yes")
    finally:
        await client.aclose()
    cluster.restart(victim)  # it comes back as the replica of the one that took over
    me = next(m for m in cluster.members() if m.port == victim.port)
    them = next(m for m in cluster.members() if m.port == promoted.port)
    assert not me.is_primary and me.primary_id == them.node_id


def test_a_stopped_cluster_leaves_no_process_no_port_and_no_folder():
    cluster = LocalCluster().start()
    pids, folder = list(cluster.pids()), cluster.data_dir
    ports = [n.port for n in cluster.nodes] + [n.bus_port for n in cluster.nodes]
    assert len(pids) == 6 and folder.is_dir()
    cluster.stop()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    for port in ports:
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    assert not folder.exists()


def test_cluster_nodes_lines_are_read_with_hostnames_and_slots_on_the_move():
    text = (
        "07c3 127.0.0.1:30004@40004,node-4 slave e7d1 0 1426238317239 4 connected\n"
        "e7d1 127.0.0.1:30001@40001 myself,master - 0 0 1 connected 0-5460 5461 [5462->-292f]\n"
        "292f 127.0.0.1:30002@40002 master,fail - 1426238316232 1426238316232 2 disconnected\n"
    )
    replica, primary, failed = parse_nodes(text)
    assert (replica.port, replica.primary_id, replica.is_primary) == (30004, "e7d1", False)
    assert primary.slots == ((0, 5460), (5461, 5461)) and primary.serves(5461) and not primary.serves(5462)
    assert failed.failed and not failed.connected and failed.slots == ()


def test_the_redis_cli_beside_the_server_is_preferred_and_none_at_all_is_said(tmp_path, monkeypatch):
    server = tmp_path / "bin" / "redis-server"
    server.parent.mkdir()
    server.write_text("")
    monkeypatch.setattr("shutil.which", lambda name: "/usr/bin/redis-cli" if name == "redis-cli" else None)
    assert redis_cli(str(server)) == "/usr/bin/redis-cli"
    (tmp_path / "bin" / "redis-cli").write_text("")
    assert redis_cli(str(server)) == str(tmp_path / "bin" / "redis-cli")
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(ClusterError, match="no redis-cli beside .* nor on PATH"):
        redis_cli(str(tmp_path / "elsewhere" / "redis-server"))


async def test_the_event_stores_append_script_runs_on_the_cluster_over_each_partitions_keys(redis_cluster):
    """The store's own append script with its own keys (``keys``, four partitions): each partition's batch is one
    call the cluster routes by its slot and runs, every key declared and local (a key of another slot, declared or
    touched, would be refused)."""
    import redis.asyncio as aioredis

    from services.store import keys
    from services.store.events import _APPEND, Acks, Append, RedisEventStore

    keys.use(4)
    client = RedisCluster.from_url(redis_cluster.url)
    store = RedisEventStore(aioredis.Redis.from_url(redis_cluster.url))  # only to make its calls: never connects
    games = {keys.partition(g): g for g in (f"g{n}" for n in range(100))}
    try:
        for partition, game_id in sorted(games.items()):
            await client.xgroup_create(keys.commands(partition), keys.ENGINE_GROUP, id="0", mkstream=True)
            entry = (await client.xadd(keys.commands(partition), {"c": b"x"})).decode()
            await client.xreadgroup(keys.ENGINE_GROUP, "c", {keys.commands(partition): ">"})
            refusal = Append(game_id, "tally", 0, (), "0:c1", b'{"status":"rejected"}')
            call = store._script(partition, [refusal], [entry], Acks(keys.ENGINE_GROUP, [entry]))
            _, _, count, *rest = call
            [[status, version]] = await client.eval(_APPEND, count, *rest)
            assert (status, version) == (b"ok", b"0")
            assert await client.hget(keys.outcomes(game_id), "0:c1") == b'{"status":"rejected"}'
            assert (await client.xpending(keys.commands(partition), keys.ENGINE_GROUP))["pending"] == 0
        slots = {key_slot(keys.commands(p).encode()) for p in games}
        assert len(slots) == 4 and len({redis_cluster.primary_for(keys.tag(p)).port for p in games}) > 1
    finally:
        await client.aclose()
        await store.redis.aclose()
