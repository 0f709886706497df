"""A slot moving from one primary to another (issue #22, README "Growing from one machine to many", step 3), at
the level of the lean cluster connection (services/store/resp.py ``ClusterResp``) on a local Redis Cluster: the
slot half-migrated (``CLUSTER SETSLOT ... MIGRATING`` / ``IMPORTING``), a command for a key the old owner no longer
has is answered ``ASK`` and sent to the new owner after ``ASKING``."""

from __future__ import annotations

import hashlib

import pytest
from redis.crc import key_slot

from services.store.resp import ClusterResp

pytestmark = [pytest.mark.cluster, pytest.mark.anyio]

SCRIPT = "redis.call('SET', KEYS[1], ARGV[1]) return redis.call('GET', KEYS[1])"
SHA = hashlib.sha1(SCRIPT.encode()).hexdigest()


def node_id(cluster, node) -> str:
    (me,) = [m for m in cluster.members() if m.port == node.port]
    return me.node_id


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
