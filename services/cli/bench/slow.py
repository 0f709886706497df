"""``souk bench slow`` (services/bench/slow.py measures)."""

from __future__ import annotations

import asyncio
import contextlib
import json

import click

from services.bench import BenchError
from services.bench.slow import measure, serve


@click.command("slow", context_settings={"show_default": True})
@click.option("--url", default=None, help="a gateway already running (else a `souk serve` of its own)")
@click.option("--sockets", type=click.IntRange(1), default=2000, help="connections from this one address")
@click.option("--every", type=click.FloatRange(0.1), default=5.0, help="seconds between two header lines")
@click.option("--seconds", type=click.FloatRange(1), default=41.0, help="how long")
@click.option("--pause", type=click.FloatRange(0), default=5.0, help="seconds before a closed connection reopens")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
def command(url: str | None, sockets: int, every: float, seconds: float, pause: float, as_json: bool) -> None:
    """Slow clients from one address: how many connections trickling request heads the gateway holds at once."""
    try:
        with contextlib.nullcontext((url, None)) if url else serve() as (target, pid):
            figures = asyncio.run(measure(target, sockets, every, seconds, pause, pid))
    except BenchError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(figures))
        return
    click.echo(f"{sockets} connections from one address, a header line every {every:g} s, {seconds:g} s: "
               f"held at once at most {figures['most_held']}, {figures['mean_held']} on average, "
               f"{figures['held_at_end']} at the end; longest held {figures['longest_held_s']} s; the gateway's "
               f"process had at most {figures['gateway_sockets_most']} more files open "
               f"({figures['gateway_sockets_mean']} on average); "
               f"answers {figures['answers']}")
