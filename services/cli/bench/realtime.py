"""``souk bench realtime`` (services/bench/realtime.py measures)."""

from __future__ import annotations

import asyncio
import contextlib
import json

import click

from services.bench import BenchError
from services.bench.realtime import measure, serve


@click.command("realtime", context_settings={"show_default": True})
@click.option("--url", default=None, help="a server already running with its clock worker (else a `souk serve` of its own)")
@click.option("--values", type=click.IntRange(1), default=200, help="values of the countdown to measure (100 a game)")
@click.option("--interval-ms", type=click.IntRange(200, 60_000), default=200, help="how long each value shows")
@click.option("--games", type=click.IntRange(1), default=1, help="games played at once")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
def command(url: str | None, values: int, interval_ms: int, games: int, as_json: bool) -> None:
    """Samarkand in real time: from a value's due instant to its event, and from the event to each seat's push."""
    try:
        with contextlib.nullcontext(url) if url else serve() as target:
            figures = asyncio.run(measure(target, values, interval_ms, games))
    except BenchError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(figures))
        return
    f = figures
    click.echo(f"{f['values']} values of {interval_ms} ms ({games} game(s) at once, {f['seconds']} s): "
               f"due -> event p50 {f['tick_p50_ms']} ms, p99 {f['tick_p99_ms']} ms, max {f['tick_max_ms']} ms "
               f"({f['ticks_late_by_an_interval']} later than one interval); "
               f"event -> seat's push ({f['pushes']}) p50 {f['push_p50_ms']} ms, p99 {f['push_p99_ms']} ms, "
               f"max {f['push_max_ms']} ms; load average {f['load_start'][0]} at the start, {f['load_end'][0]} at "
               f"the end ({f['cpus']} CPUs)")
