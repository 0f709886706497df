"""``souk bench history`` (services/bench/history.py measures)."""

from __future__ import annotations

import asyncio
import json

import click

from services.bench.history import bench_history
from services.cli.bench.storage import parse_titles


@click.command("history")
@click.option("--title", "titles", multiple=True, metavar="GAME[:SEATS]",
              help="a title to play, with its seats (repeatable) [default: samarkand:5 yspahan:4]")
@click.option("--every", default=100, show_default=True, type=click.IntRange(1, 100_000),
              help="the projector's snapshot interval (SOUK_SNAPSHOT_EVERY), in events")
@click.option("--samples", default=300, show_default=True, type=click.IntRange(10, 1_000_000),
              help="views timed per game, with snapshots and again with none")
@click.option("--seed", default=1, show_default=True, type=int, help="the bots' and the versions' random seed")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
def command(titles: tuple[str, ...], every: int, samples: int, seed: int, as_json: bool) -> None:
    """Time reading a finished game's past (the view at a random version, with snapshots and with none) and
    verifying its record (souk verify, events/s) on fresh embedded Redis."""
    from services.runtime.logs import configure

    configure("warning", "console")
    result = asyncio.run(bench_history(parse_titles(titles), every, samples, seed))
    if as_json:
        click.echo(json.dumps(result))
        return
    for title, figures in result["view_at"].items():
        click.echo(f"{title}: view at a random version of a finished game of {figures['events']} events "
                   f"({figures['snapshot_count']} snapshots, one every {every}), {samples} samples")
        for mode, label in (("snapshots", "with snapshots"), ("none", "without snapshots")):
            f = figures[mode]
            click.echo(f"  {label:<18} p50 {f['p50_ms']:>8.3f} ms   p99 {f['p99_ms']:>8.3f} ms   "
                       f"(CPU of this process p50 {f['cpu_p50_ms']:.3f} ms)")
    for title, f in result["verify"].items():
        click.echo(f"{title}: souk verify of its record ({f['events']} events, {f['commands']} commands, "
                   f"{f['record_bytes']:,} bytes): {f['events_per_s_p50']:,} events/s (p50 of {f['runs']} runs; "
                   f"best {f['events_per_s_best']:,}; CPU {f['cpu_s_p50']} s)")
    click.echo(f"command: {result['command']}")

