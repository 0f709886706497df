"""``souk bench http`` (services/bench/http.py measures)."""

from __future__ import annotations

import json
from typing import Any

import click

from services.bench import BenchError
from services.bench.http import GAMES, run_bench


@click.command("http", context_settings={"show_default": True})
@click.option("--mode", type=click.Choice(["play", "fanout"]), default="play", envvar="SOUK_BENCH_MODE", show_envvar=True,
              help="play: many games, every seat a client; fanout: one game followed by --sockets WebSockets")
@click.option("--target", type=click.Choice(["serve", "split"]), default="serve",
              help="serve: one `souk serve`; split: `souk engine`, `souk projector`, `souk gateway` processes")
@click.option("--gateways", type=click.IntRange(1), default=1,
              help="split: the gateway's processes (`souk gateway --processes N`)")
@click.option("--url", default=None, envvar="SOUK_BENCH_URL", show_envvar=True,
              help="a server already running (its limits per client off) instead of starting one; its CPU is not "
                   "measured")
@click.option("--game", type=click.Choice(GAMES), default="samarkand")
@click.option("--seats", type=click.IntRange(1, 8), default=None,
              help="seats per game (default: 4 samarkand, 3 yspahan, 3 istanbul)")
@click.option("--games", type=click.IntRange(1), default=64, help="games played at once (play)")
@click.option("--sockets", type=click.IntRange(1), default=1000, help="WebSockets following the game (fanout)")
@click.option("--seconds", type=click.FloatRange(0.5), default=20.0, help="measured time")
@click.option("--warmup", type=click.FloatRange(0), default=3.0, help="seconds played before measuring")
@click.option("--rate", type=click.FloatRange(0), default=0.0, help="offered commands/s, evenly paced (0: closed loop)")
@click.option("--drivers", type=click.IntRange(1), default=1, help="load-generator processes")
@click.option("--at-once", is_flag=True, default=False,
              help="play: every seat the game awaits sends at the same moment (each on its own newest view, with its "
                   "version as expected_version); stale_per_command counts what that costs")
@click.option("--send", type=click.Choice(["http", "ws"]), default="http",
              help="play: how the seats send their commands: POSTs (http), or souk.Command frames on the WebSocket "
                   "each seat follows its view on (ws), answered on it")
@click.option("--fsync", type=click.Choice(["always", "everysec"]), default="always",
              help="the event store's appendfsync (what `souk serve` runs by default)")
@click.option("--seed", type=int, default=1)
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
def command(as_json: bool, **options: Any) -> None:
    """Load through the front door: commands over HTTP, views followed over WebSockets, against `souk serve` or
    the separate processes. Prints commands/s, p50/p99 from a command's request to the seat's pushed view (fanout:
    to every socket's push), and CPU per process (cores busy, µs per command)."""
    if options["gateways"] > 1 and (options["target"] != "split" or options["url"]):
        raise click.UsageError("--gateways is for --target split (`souk serve` is one process)")
    try:
        figures = run_bench(options)
    except BenchError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(figures))
    else:
        for k, v in figures.items():
            click.echo(f"{k:>22}: {v}")



if __name__ == "__main__":  # `python -m services.cli.bench.http`: the command alone
    command()
