"""The ``souk`` command.

  souk serve                    engine + projector + gateway in one process (embedded Redis if REDIS_URL is unset)
  souk engine | projector       one worker role (REDIS_URL required; projector --partition i/N to scale out)
  souk gateway                  HTTP + WebSocket only (REDIS_URL required)
  souk schema [--out FILE]      JSON Schema of the wire format
  souk verify GAME [--server]   check a game's record: its chain, and once over its commitments and seed
  souk projections rebuild      drop the read models and project every game again from its first event
  souk bench pipeline|domain    benchmarks (see the README)
"""

from __future__ import annotations

import argparse
import asyncio
import sys

import structlog

from services.runtime import logs
from services.runtime.config import Settings

log = structlog.get_logger("souk")


def _require_redis(settings: Settings) -> Settings:
    if not settings.redis_url:
        sys.exit("souk: set REDIS_URL (only `souk serve` starts an embedded Redis)")
    return settings


def _serve(args: argparse.Namespace) -> None:
    import uvicorn

    from services.gateway import create_app
    from services.gateway.inputs import UVICORN_OPTIONS
    from services.embedded.redis import RedisServer
    from services.runtime.workers import Workers

    settings = Settings.from_env(host=args.host, port=args.port)
    servers: list[RedisServer] = []
    if not settings.redis_url:
        servers = embedded_redis(settings.data_dir, settings.fsync)
        settings = Settings.from_env(host=args.host, port=args.port, redis_url=servers[0].url,
                                     views_redis_url=servers[1].url)
    try:
        app = create_app(settings, Workers(settings))
        log.info("serving", url=f"http://{settings.host}:{settings.port}", docs=f"http://{settings.host}:{settings.port}/schema")
        uvicorn.run(app, host=settings.host, port=settings.port, log_level="warning", log_config=None,
                    **UVICORN_OPTIONS)
    finally:
        for server in servers:
            server.stop()


def embedded_redis(data_dir: str, fsync: str = "always") -> list:
    """Two real redis-servers: the event store (AOF, in DATA_DIR/events, fsynced before each answer unless
    ``fsync`` is everysec) and the read store (no persistence: the projector rebuilds it when it starts empty)."""
    from pathlib import Path

    from services.embedded.redis import RedisServer

    events = RedisServer(Path(data_dir) / "events", appendonly=True, fsync=fsync).start()
    views = RedisServer(Path(data_dir) / "views", appendonly=False).start()
    log.info("embedded_redis_started", events=events.url, views=views.url, data_dir=data_dir)
    return [events, views]


def _gateway(args: argparse.Namespace) -> None:
    import uvicorn

    from services.gateway import create_app
    from services.gateway.inputs import UVICORN_OPTIONS

    settings = _require_redis(Settings.from_env(host=args.host, port=args.port))
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level="warning", log_config=None,
                **UVICORN_OPTIONS)


def run(coro):
    """asyncio.run on uvloop where it is installed (it cuts the event loop's share of each command)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


def _worker(role: str, args: argparse.Namespace) -> None:
    from services.projector.service import Partition
    from services.runtime.workers import Workers

    settings = _require_redis(Settings.from_env(projector_partition=getattr(args, "partition", None)))
    try:
        Partition.parse(settings.projector_partition)
    except ValueError as exc:
        sys.exit(f"souk: {exc}")
    log.info("worker_starting", role=role, consumer=settings.consumer,
             **({"partition": settings.projector_partition} if role == "projector" else {}))
    run(Workers(settings, roles=(role,)).app().run())


def _verify(args: argparse.Namespace) -> None:
    from services.history.audit import verify_game

    what, problems = verify_game(args.server, args.game_id)
    for problem in problems:
        print(problem)
    if problems:
        sys.exit(f"souk verify: the {what} of {args.game_id} does not hold ({len(problems)} problems)")
    print(f"the {what} of {args.game_id} holds: " + ("chain, commitments and seed checked" if what == "audit"
          else "chain checked (secrets are committed to; they open once the game is over)"))


def _schema(args: argparse.Namespace) -> None:
    from services.gateway.schema import write

    text = write(args.out)
    if not args.out:
        print(text)


def _rebuild(args: argparse.Namespace) -> None:
    import redis.asyncio as aioredis

    from services.projector.service import Projector
    from services.store.events import RedisEventStore

    settings = _require_redis(Settings.from_env())

    async def rebuild() -> int:
        events = aioredis.Redis.from_url(settings.redis_url)
        views = aioredis.Redis.from_url(settings.views_url)
        try:
            active = await _active_projectors(events)
            if active and not args.force:
                sys.exit(f"souk: projectors {', '.join(active)} read events in the last minute; stop them first "
                         "(or pass --force)")
            projector = Projector(views, RedisEventStore(events))
            try:
                return await projector.rebuild()
            finally:
                await projector.aclose()
                await projector.store.aclose()
        finally:
            await events.aclose()
            await views.aclose()

    print(f"rebuilt the read models of {run(rebuild())} games")


async def _active_projectors(redis) -> list[str]:
    from services.store import keys
    from services.store.streams import consumer_groups, idle_ms

    active = []
    for group in await consumer_groups(redis, keys.EVENTS):  # `projector`, or `projector:i/N` for a partition
        if group == keys.PROJECTOR_GROUP or group.startswith(f"{keys.PROJECTOR_GROUP}:"):
            active += [c["name"].decode() if isinstance(c["name"], bytes) else c["name"]
                       for c in await redis.xinfo_consumers(keys.EVENTS, group) if idle_ms(c) < 60_000]
    return active


def _bench(args: argparse.Namespace) -> None:
    from services.bench import pipeline as bench

    bench.main(args)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="souk", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for name, fn in (("serve", _serve), ("gateway", _gateway)):
        sp = sub.add_parser(name)
        sp.add_argument("--host", default=None)
        sp.add_argument("--port", type=int, default=None)
        sp.set_defaults(fn=fn)
    sub.add_parser("engine").set_defaults(fn=lambda a: _worker("engine", a))
    sp = sub.add_parser("projector")
    sp.add_argument("--partition", default=None,
                    help="i/N: project the games of partition i of N; run every partition (default: "
                         "SOUK_PROJECTOR_PARTITION, else 0/1: every game)")
    sp.set_defaults(fn=lambda a: _worker("projector", a))
    sp = sub.add_parser("verify", help="check a game's record on a server (chain, commitments, seed)")
    sp.add_argument("game_id")
    sp.add_argument("--server", default="http://127.0.0.1:8000")
    sp.set_defaults(fn=_verify)
    sp = sub.add_parser("schema")
    sp.add_argument("--out", default=None, help="file to write (default: print)")
    sp.set_defaults(fn=_schema)
    from services.client import typescript  # souk types [--out FILE]: the wire format as TypeScript, for frontends

    typescript.add_arguments(sub.add_parser("types", help="the wire format as TypeScript types (clients/typescript)"))
    sp = sub.add_parser("projections")
    sp.add_argument("action", choices=["rebuild"])
    sp.add_argument("--force", action="store_true", help="rebuild even though projectors seem to be running")
    sp.set_defaults(fn=_rebuild)
    from services.bench.pipeline import add_arguments

    add_arguments(sub.add_parser("bench"))
    sub.choices["bench"].set_defaults(fn=_bench)
    from services.reliability import chaos  # souk chaos --minutes N: the processes under load and faults, checked

    chaos.add_arguments(sub.add_parser("chaos", help="the real processes under load and faults, then the checks"))
    sub.choices["chaos"].set_defaults(fn=chaos.main)
    return p


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    settings = Settings.from_env()
    logs.configure(settings.log_level, settings.log_format)
    args.fn(args)


if __name__ == "__main__":
    main()
