"""A stream reader blocked on a stream whose slot moves to another primary (issue #22, README "Growing from one
machine to many", step 3). MIGRATE deletes the stream on the old owner, and Redis 7 ends the XREADGROUP blocked on
it with ``UNBLOCKED the stream key no longer exists``; the reader must read again at once, where the stream now is
(``ClusterResp`` follows the ASK, then the MOVED), in the same read loop: FastStream's loop re-raises a
``ResponseError`` other than NOGROUP, and only its task supervisor (an ERROR with a traceback, a restart without
backoff; nothing at all with ``FASTSTREAM_SUPERVISOR_DISABLED=1``) would start the loop again.

Both kinds of Souk's readers: the engine's and the projector's (``acknowledges``: the batch handed over straight
from the read) and the webhook worker's (FastStream processes and acknowledges each batch)."""

from __future__ import annotations

import asyncio

import pytest
from redis.crc import key_slot

from services.store import clients
from services.store.resp import ClusterResp
from services.store.streams import batch_subscription, ensure_group
from tests.cluster.support import migrate_slot

pytestmark = [pytest.mark.cluster, pytest.mark.anyio]


def cluster_url(cluster) -> str:
    return "redis+cluster://" + ",".join(f"{h}:{p}" for h, p in cluster.addresses())


async def blocked_reader_on(node, timeout_s: float = 3.0) -> None:
    """Waits until a client of ``node`` is blocked in an XREADGROUP (the reader's read of 100 ms, issued again and
    again: a MIGRATE now meets it blocked)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while loop.time() < deadline:
        listed = node.ask("CLIENT", "LIST")
        lines = listed.splitlines() if isinstance(listed, str) else [str(c) for c in listed]
        if any("cmd=xreadgroup" in line and "flags=b" in line for line in lines):
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"no XREADGROUP blocked on {node}")


@pytest.mark.parametrize("acknowledges", [True, False], ids=["engine-projector", "webhooks"])
async def test_a_reader_blocked_on_a_stream_whose_slot_moves_reads_on_in_the_same_loop_at_the_new_owner(
        fresh_redis_cluster, monkeypatch, acknowledges):
    monkeypatch.setenv("FASTSTREAM_SUPERVISOR_DISABLED", "1")  # a read loop that ended stays ended
    cluster = fresh_redis_cluster
    url = cluster_url(cluster)
    stream = "souk:{moving-reader}:stream"
    slot = key_slot(stream.encode())
    redis = clients.async_client(url)
    leans: list[ClusterResp] = []
    got: list[bytes] = []

    async def handle(batch) -> None:
        got.extend(fields[b"n"] for _, fields in batch)
        if acknowledges:
            await redis.xack(stream, "g", *[entry for entry, _ in batch])

    def lean() -> ClusterResp:
        leans.append(ClusterResp(cluster.addresses()))
        return leans[-1]

    await ensure_group(redis, stream, "g")
    broker = clients.broker(url, apply_types=False)
    batch_subscription(broker, stream, "g", "c", handle, with_ids=True, acknowledges=acknowledges, lean=lean)
    await broker.start()
    try:
        (reader,) = [s for s in broker.subscribers if s.stream_sub.consumer == "c"]
        loops = list(reader.tasks)
        await redis.xadd(stream, {"n": "before"})
        for _ in range(100):
            if got:
                break
            await asyncio.sleep(0.02)
        assert got == [b"before"]

        source = cluster.primary_for(stream)
        target = next(p for p in cluster.primaries() if p.port != source.port)
        await blocked_reader_on(source)
        assert await asyncio.to_thread(migrate_slot, cluster, slot, source, target, 10, 0) == 1
        assert cluster.primary_for(stream).port == target.port

        for n in ("after-1", "after-2"):
            await redis.xadd(stream, {"n": n})
        for _ in range(150):
            if len(got) == 3:
                break
            await asyncio.sleep(0.02)
        assert got == [b"before", b"after-1", b"after-2"]
        assert reader.tasks == loops and not any(t.done() for t in loops), "the read loop ended"
        assert (await redis.xpending(stream, "g"))["pending"] == 0
    finally:
        await broker.stop()
        for each in leans:
            await each.aclose()
        await redis.aclose()
