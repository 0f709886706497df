"""The hot paths' two ways onto a Redis Cluster, measured on one ``LocalCluster``: the lean connection routed by slot
(``services.store.resp.ClusterResp``) against redis-py's ``RedisCluster`` (non-transactional pipelines), interleaved,
3 rounds of 400 batches of 50 HSET then 50 HGET over 50 slots; prints the client's CPU per command and the rate.
``python -m services.bench.cluster_clients`` (README, Redis Cluster: why the lean connection learns the slots)."""

from __future__ import annotations

import asyncio
import resource
import time

from redis.asyncio.cluster import RedisCluster

from services.embedded.cluster import LocalCluster
from services.store.resp import ClusterResp

BATCHES, WIDTH = 400, 50


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _lean(lean: ClusterResp, batches: int) -> None:
    for b in range(batches):
        await lean.calls(*[("HSET", f"h:{{{i}}}", "f", b) for i in range(WIDTH)])
        await lean.calls(*[("HGET", f"h:{{{i}}}", "f") for i in range(WIDTH)])


async def _redis_py(client: RedisCluster, batches: int) -> None:
    for b in range(batches):
        pipe = client.pipeline(transaction=False)
        for i in range(WIDTH):
            pipe.hset(f"h:{{{i}}}", "f", b)
        await pipe.execute()
        pipe = client.pipeline(transaction=False)
        for i in range(WIDTH):
            pipe.hget(f"h:{{{i}}}", "f")
        await pipe.execute()


async def main() -> None:
    with LocalCluster() as cluster:
        lean, client = ClusterResp(cluster.addresses()), RedisCluster.from_url(cluster.url)
        try:
            await _lean(lean, 50)
            await _redis_py(client, 50)
            for r in range(3):
                for name, run, c in (("lean", _lean, lean), ("redis-py", _redis_py, client)):
                    started, cpu = time.perf_counter(), _cpu()
                    await run(c, BATCHES)  # type: ignore[operator]
                    commands = BATCHES * WIDTH * 2
                    print(f"round {r} {name}: {(_cpu() - cpu) / commands * 1e6:.1f} µs CPU a command (client), "
                          f"{commands / (time.perf_counter() - started):.0f} commands/s", flush=True)
        finally:
            await lean.aclose()
            await client.aclose()


if __name__ == "__main__":
    asyncio.run(main())
