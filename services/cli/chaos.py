"""``souk chaos`` (services/reliability/chaos.py runs it and checks it)."""

from __future__ import annotations

import argparse
import json
import sys

import click

from services.reliability.chaos import CLUSTER_FAULTS, FAULTS, ChaosConfigError, Config, run_chaos, summary


@click.command("chaos", context_settings={"show_default": True})
@click.option("--minutes", type=float, default=10.0, help="minutes of load and faults")
@click.option("--seconds", type=float, default=None, show_default="--minutes", help="seconds instead of minutes")
@click.option("--games", type=int, default=24, help="games in play at once")
@click.option("--engines", type=click.Choice(["1", "2"]), default="1", help="engines at the start")
@click.option("--seed", type=int, default=None, show_default="a new one, printed", help="the run's random seed")
@click.option("--faults", default=None, show_default="every fault of the store's kind",
              help=f"comma-separated, among {','.join(FAULTS)} (with --cluster: {','.join(CLUSTER_FAULTS)}); "
                   "'' for none")
@click.option("--cluster", "redis_cluster", is_flag=True,
              help="the event store on a local Redis Cluster (3 primaries, a replica each) and a cluster's faults")
@click.option("--partitions", type=int, default=6, help="the event store's partitions, with --cluster (at least 3)")
@click.option("--gap", type=float, nargs=2, default=(4.0, 12.0), metavar="MIN MAX",
              help="seconds between a fault's recovery and the next fault")
@click.option("--data-dir", default=None, show_default="a temporary directory, kept if the run fails",
              help="where the stores and logs go")
@click.option("--keep", is_flag=True, help="keep the temporary directory")
@click.option("--json", is_flag=True, help="print one JSON object")
def command(**options) -> None:
    """The real processes under load and faults, then the checks."""
    _main(argparse.Namespace(**{**options, "engines": int(options["engines"])}))


def _main(args: argparse.Namespace) -> None:
    from services.runtime.loop import run

    seconds = args.seconds if args.seconds is not None else args.minutes * 60
    faults = None if args.faults is None else tuple(f for f in args.faults.split(",") if f)
    command = "souk chaos " + " ".join(sys.argv[2:]) if len(sys.argv) > 2 else "souk chaos"
    try:
        config = Config(seconds=seconds, games=args.games, engines=args.engines, seed=args.seed, faults=faults,
                        fault_gap=tuple(args.gap), data_dir=args.data_dir, keep=args.keep, progress=True,
                        command=command, redis_cluster=args.redis_cluster, partitions=args.partitions)
    except ChaosConfigError as exc:
        sys.exit(f"souk chaos: {exc}")
    figures = run(run_chaos(config))
    if args.json:
        click.echo(json.dumps(figures))
    else:
        click.echo(summary(figures))
    sys.exit(0 if figures["ok"] else 1)
