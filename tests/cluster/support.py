"""What the cluster tests share."""

from __future__ import annotations


def keys_on(node, pattern: str) -> int:
    """How many keys matching ``pattern`` one node of a ``LocalCluster`` holds (SCAN on that node alone)."""
    client = node.client()
    try:
        return sum(1 for _ in client.scan_iter(match=pattern, count=1000))
    finally:
        client.close()
