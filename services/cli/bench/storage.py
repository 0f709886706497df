"""``souk bench storage`` (services/bench/storage.py measures)."""

from __future__ import annotations

import asyncio
import json

import click

from services.bench.storage import DEFAULT_SEATS, bench_storage


def parse_titles(values: tuple[str, ...]) -> dict[str, int]:
    if not values:
        return dict(DEFAULT_SEATS)
    out = {}
    for value in values:
        name, _, seats = value.partition(":")
        from domain.kernel import get_game

        game = get_game(name)
        if game is None:
            raise click.BadParameter(f"no game {name!r}", param_hint="--title")
        try:
            out[name] = int(seats) if seats else DEFAULT_SEATS.get(name, game.max_seats)
        except ValueError:
            raise click.BadParameter(f"{value!r}: TITLE or TITLE:SEATS", param_hint="--title") from None
        if not game.min_seats <= out[name] <= game.max_seats:
            raise click.BadParameter(f"{name} seats {game.min_seats} to {game.max_seats}", param_hint="--title")
    return out


@click.command("storage")
@click.option("--games", default=20, show_default=True, type=click.IntRange(1, 10_000),
              help="finished games of each title")
@click.option("--title", "titles", multiple=True, metavar="GAME[:SEATS]",
              help="a title to play, with its seats (repeatable) [default: samarkand:5 yspahan:4]")
@click.option("--seed", default=1, show_default=True, type=int, help="the bots' random seed")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
def command(games: int, titles: tuple[str, ...], seed: int, as_json: bool) -> None:
    """Bytes of Redis per finished game of each title, per kind of key (MEMORY USAGE), on fresh embedded Redis."""
    from services.runtime.logs import configure

    configure("warning", "console")  # the workers' per-command debug lines would bury the figures
    result = asyncio.run(bench_storage(games, parse_titles(titles), seed))
    if as_json:
        click.echo(json.dumps(result))
        return
    for title, figures in result.items():
        if not isinstance(figures, dict) or "by_kind" not in figures:
            continue
        click.echo(f"{title}: {figures['bytes_per_game']:,} bytes per finished game of {figures['events_per_game']} "
                   f"events ({figures['steady_bytes_per_game']:,} once its caches expired; "
                   f"{figures['games']} games)")
        for kind, size in figures["by_kind"].items():
            click.echo(f"  {kind:<48} {size:>10,}")
    click.echo(f"used_memory per game: {result['used_memory_per_game']}")
    click.echo(f"command: {result['command']}")

