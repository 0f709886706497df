"""``souk bench pushes`` (services/bench/pushes.py measures)."""

from __future__ import annotations

import json

import click

from services.bench.pushes import bench_pushes
from services.cli.bench.storage import parse_titles


@click.command("pushes")
@click.option("--title", "titles", multiple=True, metavar="GAME[:SEATS]",
              help="a title to play, with its seats (repeatable) [default: every game]")
@click.option("--games", default=3, show_default=True, type=click.IntRange(1, 1000), help="games per title")
@click.option("--seed", default=1, show_default=True, type=int, help="the games' and the bots' random seed")
@click.option("--max-commands", default=5000, show_default=True, type=click.IntRange(1, 1_000_000),
              help="commands at most per game")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
def command(titles: tuple[str, ...], games: int, seed: int, max_commands: int, as_json: bool) -> None:
    """Bytes per WebSocket push for each game, whole views and JSON Patch frames (?patch=1), and the gateway's CPU
    per patch; no server, no Redis (the views as the projector stores them)."""
    from services.bench.pipeline import DEFAULT_SEATS

    result = bench_pushes(parse_titles(titles) if titles else dict(DEFAULT_SEATS), games, seed, max_commands)
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(f"{'game':<10} {'seats':>5} {'pushes':>7} {'whole mean':>10} {'p50':>6} {'max':>7} "
               f"{'patch mean':>10} {'p50':>6} {'max':>7} {'ratio':>6} {'patch CPU p50':>13} {'p99':>8}")
    for name, f in result["titles"].items():
        click.echo(f"{name:<10} {f['seats']:>5} {f['pushes']:>7} {f['whole_mean']:>10,} {f['whole_p50']:>6,} "
                   f"{f['whole_max']:>7,} {f['patch_mean']:>10,} {f['patch_p50']:>6,} {f['patch_max']:>7,} "
                   f"{f['ratio']:>6.2f} {f['step_p50_us']:>10} µs {f['step_p99_us']:>5} µs")
    click.echo(f"command: {result['command']} (games ended: "
               + ", ".join(f"{n} {f['ended']}/{f['games']}" for n, f in result["titles"].items()) + ")")
