"""``souk bench cold`` (services/bench/cold.py measures)."""

from __future__ import annotations

import asyncio
import json

import click

from services.bench.cold import SEATS, TITLE, bench_cold


@click.command("cold")
@click.option("--at", "at", multiple=True, type=click.IntRange(10, 1_000_000), metavar="EVENTS",
              help="a game length at which to time the cold load (repeatable) [default: 100 1000 10000]")
@click.option("--every", default=100, show_default=True, type=click.IntRange(1, 1_000_000),
              help="the engine's snapshot interval (SOUK_ENGINE_SNAPSHOT_EVERY), in events")
@click.option("--samples", default=50, show_default=True, type=click.IntRange(5, 100_000),
              help="cold loads timed at each length, from the snapshot and again from the start")
@click.option("--seed", default=1, show_default=True, type=int, help="the players' random seed")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
def command(at: tuple[int, ...], every: int, samples: int, seed: int, as_json: bool) -> None:
    """Time the engine's cold load of a game (not in its cache) at 100, 1,000 and 10,000 events: from its
    snapshot, and folded from its first event, on a fresh embedded Redis."""
    from services.runtime.logs import configure

    configure("warning", "console")
    result = asyncio.run(bench_cold(at or (100, 1_000, 10_000), every, samples, seed))
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(f"cold load of a {TITLE} game ({SEATS} seats) by an engine that does not hold it, {samples} samples "
               f"each (snapshot every {every} events)")
    for f in result["lengths"]:
        for mode, label in (("from_snapshot", f"from the snapshot at {f['snapshot_version']}"),
                            ("from_the_start", "from the first event")):
            m = f[mode]
            click.echo(f"  {f['events']:>6} events  {label:<30} p50 {m['p50_ms']:>8.3f} ms   p99 {m['p99_ms']:>8.3f} ms"
                       f"   (CPU p50 {m['cpu_p50_ms']:.3f} ms)")
    for f in result["lengths"]:
        click.echo(f"  {f['events']:>6} events: snapshot {f['snapshot_bytes']:,} bytes; {f['outcomes']} outcomes kept, "
                   f"{f['outcomes_bytes']:,} bytes with their order")
    click.echo(f"command: {result['command']}")

