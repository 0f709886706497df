"""What the cluster tests share."""

from __future__ import annotations

import time


def keys_on(node, pattern: str) -> int:
    """How many keys matching ``pattern`` one node of a ``LocalCluster`` holds (SCAN on that node alone)."""
    client = node.client()
    try:
        return sum(1 for _ in client.scan_iter(match=pattern, count=1000))
    finally:
        client.close()


def node_id(cluster, node) -> str:
    """The cluster's id of ``node`` (a ``LocalCluster``'s ``Node``), as ``CLUSTER SETSLOT`` names it."""
    (me,) = [m for m in cluster.members() if m.port == node.port]
    return me.node_id


def migrate_slot(cluster, slot: int, source, target, keys_at_once: int = 3, pause_s: float = 0.02) -> int:
    """Moves ``slot`` from ``source`` to ``target`` as ``redis-cli --cluster reshard`` does: IMPORTING and
    MIGRATING, its keys MIGRATEd a few at a time with a pause between (so that commands meet the half-migrated
    slot), then SETSLOT NODE on every primary. Returns how many keys moved."""
    source_id, target_id = node_id(cluster, source), node_id(cluster, target)
    target.ask("CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
    source.ask("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
    moved = 0
    while True:
        names = source.ask("CLUSTER", "GETKEYSINSLOT", slot, keys_at_once)
        if not names:
            break
        source.ask("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", *names)
        moved += len(names)
        time.sleep(pause_s)
    for node in (target, source, *[p for p in cluster.primaries() if p.port not in (source.port, target.port)]):
        node.ask("CLUSTER", "SETSLOT", slot, "NODE", target_id)
    return moved
