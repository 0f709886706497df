"""``souk bench migrate``: how long ``souk store migrate --to`` takes a store of finished games, into another Redis
and onto a local Redis Cluster (services/cli/migration.py)."""

from __future__ import annotations

import asyncio
import os
import random
import tempfile
import time
from pathlib import Path

import click


async def _played(url: str, games: int, seats: int, seed: int) -> dict[str, float]:
    """``games`` finished Yspahan games played through the engine and the projector into the store at ``url``
    (services.bench.storage.play), its consumers then dropped as stopped services leave them."""
    import redis.asyncio as aioredis

    from services.bench.storage import play
    from services.cli.stores import check
    from services.engine.service import Engine
    from services.projector.service import Projector
    from services.runtime.config import Settings
    from services.store import keys
    from services.store.events import RedisEventStore

    views_url = url.rsplit("/", 1)[0] + "/1"
    check(Settings(redis_url=url, views_redis_url=views_url))
    events, views = aioredis.Redis.from_url(url), aioredis.Redis.from_url(views_url)
    engine = Engine(events, RedisEventStore(events))
    projector = Projector(views, engine.store)
    try:
        await play(engine, projector, events, "yspahan", seats, games, random.Random(seed))
        stream = keys.events(0)
        for consumer in await events.xinfo_consumers(stream, keys.PROJECTOR_GROUP):
            await events.xgroup_delconsumer(stream, keys.PROJECTOR_GROUP, consumer["name"])
        return {"events": sum([await events.xlen(keys.game_stream(g.decode()))
                               for g in await events.zrange(keys.games(0), 0, -1)]),
                "used_memory": (await events.info("memory"))["used_memory"]}
    finally:
        await projector.aclose()
        await engine.store.aclose()
        await views.aclose()
        await events.aclose()


def _timed(source: str, target: str, partitions: int) -> dict[str, object]:
    from services.cli.migration import migrate_to
    from services.runtime.config import Settings

    load = os.getloadavg()[0]
    started = time.perf_counter()
    summary = migrate_to(Settings(redis_url=source, partitions=partitions), target)
    return {"partitions": partitions, "seconds": round(time.perf_counter() - started, 3),
            "load_before": round(load, 2), "load_after": round(os.getloadavg()[0], 2), "summary": str(summary)}


@click.command("migrate")
@click.option("--games", default=40, show_default=True, type=click.IntRange(1, 10_000),
              help="finished 4-seat Yspahan games in the store")
@click.option("--partitions", default=4, show_default=True, type=click.IntRange(1, 1024),
              help="the partitions of the copy into another Redis")
@click.option("--cluster-partitions", default=12, show_default=True, type=click.IntRange(0, 1024),
              help="the partitions of the copy onto a local cluster of six nodes (0: no cluster)")
@click.option("--seed", default=5, show_default=True, type=int, help="the bots' random seed")
def command(games: int, partitions: int, cluster_partitions: int, seed: int) -> None:
    """`souk store migrate --to` timed, in this process: a store of finished games on an embedded Redis (AOF,
    fsync always) copied into another embedded Redis, then onto a local Redis Cluster."""
    from services.embedded.cluster import LocalCluster
    from services.embedded.redis import RedisServer
    from services.runtime.logs import configure

    configure("warning", "console")  # the workers' per-command debug lines would bury the figures
    with tempfile.TemporaryDirectory(prefix="souk-bench-migrate-") as tmp:
        source, target = RedisServer(Path(tmp, "source")).start(), RedisServer(Path(tmp, "target")).start()
        try:
            store = asyncio.run(_played(source.url, games, 4, seed))
            click.echo(f"the store: {games} finished games, {store['events']:,} events, "
                       f"{store['used_memory']:,} bytes of used_memory")
            click.echo(_timed(source.url, target.url, partitions))
            if cluster_partitions:
                with LocalCluster() as cluster:
                    url = "redis+cluster://" + ",".join(f"{h}:{p}" for h, p in cluster.addresses())
                    click.echo(_timed(source.url, url, cluster_partitions))
        finally:
            source.stop()
            target.stop()
