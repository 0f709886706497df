"""``souk bench pipeline`` and ``souk bench domain`` (services/bench/pipeline.py measures)."""

from __future__ import annotations

import argparse
import json
import sys

import click

from services.bench.pipeline import DEFAULT_SEATS, Pipeline, bench_domain, bench_pipeline


def _options(f):
    """The options of ``souk bench pipeline`` and ``souk bench domain`` (those marked pipeline only count there)."""
    for decl, kwargs in reversed([
        ("--game", dict(default="samarkand", type=click.Choice(list(DEFAULT_SEATS)))),
        ("--seats", dict(type=int, default=None,
                         show_default=", ".join(f"{n} {game}" for game, n in DEFAULT_SEATS.items()))),
        ("--seconds", dict(type=float, default=20.0, help="how long to measure")),
        ("--games", dict(type=int, default=300, help="concurrent games (pipeline)")),
        ("--rate", dict(type=float, default=0.0, help="offered commands/s (0: as fast as it goes)")),
        ("--senders", dict(type=int, default=256, help="concurrent sender tasks (pipeline)")),
        ("--engines", dict(type=int, default=1, help="engine processes sharing the partitions, each owning some "
                                                    "(pipeline)")),
        ("--projectors", dict(type=int, default=1, help="projector processes, owning the partitions as the engines do (pipeline)")),
        ("--fsync", dict(default="always", type=click.Choice(["always", "everysec"]),
                         help="the embedded event store's appendfsync (pipeline; the default is what `souk serve` "
                              "runs)")),
        ("--cluster", dict(is_flag=True, help="the event store on a local Redis Cluster of six redis-servers, three "
                                              "primaries with a replica each, AOF per --fsync (pipeline; REDIS_URL "
                                              "unset; SOUK_PARTITIONS spreads the games)")),
        ("--seed", dict(type=int, default=1)),
        ("--json", dict(is_flag=True, help="print one JSON object")),
        ("--progress/--no-progress", dict(default=None, show_default="on a terminal",
                                          help="a progress bar of the measuring run on stderr")),
    ]):
        f = click.option(decl, show_default=kwargs.pop("show_default", True), **kwargs)(f)
    return f


@click.command("pipeline", context_settings={"show_default": True})
@_options
def pipeline_command(**options) -> None:
    """Games driven through the engine and projector processes (REDIS_URL and SOUK_VIEWS_REDIS_URL if set, else
    two temporary redis-servers), without the gateway."""
    _main(argparse.Namespace(kind="pipeline", **options))


@click.command("domain", context_settings={"show_default": True})
@_options
def domain_command(**options) -> None:
    """Random playouts of the pure domain (no Redis): games and commands per second."""
    _main(argparse.Namespace(kind="domain", **options))


def _main(args: argparse.Namespace) -> None:
    if args.engines < 1 or args.projectors < 1 or args.games < 1 or args.senders < 1:
        sys.exit("souk bench: --engines, --projectors, --games and --senders must be at least 1")
    seats = args.seats or DEFAULT_SEATS[args.game]
    from domain.kernel import get_game

    game = get_game(args.game)
    if not game.min_seats <= seats <= game.max_seats:  # the games would be refused, and nothing measured
        sys.exit(f"souk bench: {args.game} is played by {game.min_seats} to {game.max_seats} seats, not {seats}")
    if args.kind == "domain":
        result = bench_domain(args.game, seats, args.seconds, args.seed)
    else:
        from services.cli.stores import check
        from services.runtime.config import Settings
        from services.runtime.loop import run

        def checked(events_url: str, views_url: str) -> None:
            check(Settings.from_env(redis_url=events_url, views_redis_url=views_url))

        result = run(bench_pipeline(Pipeline(game=args.game, seconds=args.seconds, games=args.games, rate=args.rate,
                                             senders=args.senders, engines=args.engines, projectors=args.projectors, fsync=args.fsync,
                                             seed=args.seed, progress=args.progress, cluster=args.cluster), seats,
                                    checked))
    if args.json:
        click.echo(json.dumps(result))
    else:
        for k, v in result.items():
            click.echo(f"{k:>22}: {v}")
