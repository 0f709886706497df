"""A slot moving from one primary to another (issue #22, README "Growing from one machine to many", step 3), at
the level of the lean cluster connection (services/store/resp.py ``ClusterResp``) on a local Redis Cluster: the
slot half-migrated (``CLUSTER SETSLOT ... MIGRATING`` / ``IMPORTING``), a command for a key the old owner no longer
has is answered ``ASK`` and sent to the new owner after ``ASKING``."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

import pytest
from redis.crc import key_slot

from services.store.resp import ClusterResp
from tests.cluster.support import migrate_slot, node_id

pytestmark = [pytest.mark.cluster, pytest.mark.anyio]

SCRIPT = "redis.call('SET', KEYS[1], ARGV[1]) return redis.call('GET', KEYS[1])"
SHA = hashlib.sha1(SCRIPT.encode()).hexdigest()


async def test_a_script_asked_of_a_node_without_it_is_loaded_on_that_node(fresh_redis_cluster):
    """The importing node has never loaded the script (a node just added has an empty script cache): the EVALSHA
    sent there after ASK answers NOSCRIPT, and the script must be loaded on that node, not on the slot's owner
    (which has it), else every try answers NOSCRIPT again."""
    cluster = fresh_redis_cluster
    key = "moving:{ask-noscript}"
    slot = key_slot(key.encode())
    source = cluster.primary_for(key)
    target = next(p for p in cluster.primaries() if p.port != source.port)
    lean = ClusterResp(cluster.addresses())
    try:
        assert await lean.call("SCRIPT", "LOAD", SCRIPT) == SHA.encode()  # on every primary, remembered
        target.ask("SCRIPT", "FLUSH")
        target.ask("CLUSTER", "SETSLOT", slot, "IMPORTING", node_id(cluster, source))
        source.ask("CLUSTER", "SETSLOT", slot, "MIGRATING", node_id(cluster, target))

        # The key is not on the source: ASK. ``call`` itself loads a script it knows where NOSCRIPT is answered
        # (the engine's batches go through ``calls``, which is ``call`` per command).
        assert await lean.call("EVALSHA", SHA, 1, key, "2") == b"2"

        for node in (target, source):
            node.ask("CLUSTER", "SETSLOT", slot, "NODE", node_id(cluster, target))
        assert target.ask("GET", key) == "2"
    finally:
        await lean.aclose()


COUNT = "for _, k in ipairs(KEYS) do redis.call('INCR', k) end return #KEYS"


async def scripted_load_while(lean: ClusterResp, sha: str, names: list[str], move) -> tuple[int, Any]:
    """Four tasks sending batches of four two-key scripts (``COUNT`` over ``names``, 40 keys of one slot) through
    ``calls`` while ``move()`` runs in a thread; returns how many scripts were answered, and what ``move`` returned."""
    answered = 0
    stop = asyncio.Event()

    async def load(worker: int) -> None:
        nonlocal answered
        i = worker
        while not stop.is_set():
            batch = [("EVALSHA", sha, 2, names[(i + j) % 40], names[(i + j + 1) % 40]) for j in range(4)]
            assert await lean.calls(*batch) == [2] * 4
            answered += 4
            i += 7

    workers = [asyncio.create_task(load(w)) for w in range(4)]
    try:
        await asyncio.sleep(0.1)
        moved = await asyncio.to_thread(move)
        await asyncio.sleep(0.1)
    finally:
        stop.set()
        await asyncio.gather(*workers)
    return answered, moved


async def test_scripts_and_batches_on_a_slot_being_migrated_are_each_applied_once(fresh_redis_cluster):
    """Scripts over two keys of one slot (``calls``: several at once) while the slot's keys move a few at a time:
    each is answered (ASK, TRYAGAIN when its keys are split between the nodes, MOVED once the slot moved) and
    applied exactly once — the counters on the new owner add up to what was answered."""
    cluster = fresh_redis_cluster
    tag = "{reshard-load}"
    names = [f"count:{tag}:{i}" for i in range(40)]
    slot = key_slot(names[0].encode())
    source = cluster.primary_for(names[0])
    target = next(p for p in cluster.primaries() if p.port != source.port)
    lean = ClusterResp(cluster.addresses())
    sha = (await lean.call("SCRIPT", "LOAD", COUNT)).decode()
    await lean.calls(*[("SET", n, 0) for n in names])
    try:
        answered, moved = await scripted_load_while(lean, sha, names,
                                                    lambda: migrate_slot(cluster, slot, source, target))
        assert moved == 40
        total = sum(int(target.ask("GET", n)) for n in names)
        assert total == 2 * answered and answered > 0
        assert source.ask("CLUSTER", "COUNTKEYSINSLOT", slot) == 0
    finally:
        await lean.aclose()


async def test_a_slot_moved_to_a_node_just_added_is_served_with_its_scripts(fresh_redis_cluster):
    """A primary added (``LocalCluster.add_primary``: empty, no script loaded) and one slot moved to it under load:
    the scripts sent there after ASK, then MOVED, are loaded there and each applied once."""
    cluster = fresh_redis_cluster
    names = [f"count:{{to-new}}:{i}" for i in range(40)]
    slot = key_slot(names[0].encode())
    lean = ClusterResp(cluster.addresses())
    sha = (await lean.call("SCRIPT", "LOAD", COUNT)).decode()
    await lean.calls(*[("SET", n, 0) for n in names])
    source = cluster.primary_for(names[0])
    target = await asyncio.to_thread(cluster.add_primary)
    assert target.ask("SCRIPT", "EXISTS", sha) == [False]
    try:
        answered, _ = await scripted_load_while(lean, sha, names,
                                                lambda: migrate_slot(cluster, slot, source, target))
        assert sum(int(target.ask("GET", n)) for n in names) == 2 * answered and answered > 0
        assert cluster.primary_for(names[0]).port == target.port
    finally:
        await lean.aclose()
