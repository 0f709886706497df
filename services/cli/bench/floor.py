"""``souk bench floor`` (services/bench/floor.py measures)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from services.bench import BenchError
from services.bench.floor import SIDES, format_table, run_floor_bench
from services.cli.bench.peer import beside_the_peer


def _sides(ctx, param, value: str) -> tuple[str, ...]:
    sides = tuple(x.strip() for x in value.split(",") if x.strip())
    unknown = [x for x in sides if x not in SIDES]
    if not sides or unknown:
        raise click.BadParameter(f"a comma-separated list of {', '.join(SIDES)}, not {value!r}")
    return sides


@click.command("floor", context_settings={"show_default": True})
@beside_the_peer(seconds=8.0)
@click.option("--peer-moves", type=click.IntRange(4), default=400, help="moves a boardgame.io match lasts")
@click.option("--sides", default=",".join(SIDES), callback=_sides, metavar="SIDE[,SIDE...]",
              help="what runs beside the peer: echo, fused, fused+store")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object (every run's figures too)")
def command(matches: tuple[int, ...], seconds: float, warmup: float, rounds: int, cache: Path, peer_moves: int,
            sides: tuple[str, ...], as_json: bool) -> None:
    """The least a move that waits for its fsync can cost on this machine, against boardgame.io 0.50.2, interleaved.
    echo: a bare WebSocket server that appends each move to a Redis stream (appendfsync always) and writes the new
    state to the match's 4 sockets, nothing more. fused: Souk's engine and views in that server, no hop between
    them (4-seat Samarkand); fused+store: and the read store written. Same N matches, clients of the same shape;
    then what Samarkand's rules and views cost a command in process."""
    try:
        result = run_floor_bench(matches, seconds, warmup, rounds, cache, peer_moves,
                                 progress=None if as_json else lambda text: click.echo(text, err=True), sides=sides)
    except BenchError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(result) if as_json else format_table(result))


if __name__ == "__main__":
    command()
