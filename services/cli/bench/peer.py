"""``souk bench peer`` (services/bench/peer.py measures)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import click

from services.bench import BenchError
from services.bench.peer import DEFAULT_CACHE, format_table, run_peer_bench


def _matches(ctx, param, value: str) -> tuple[int, ...]:
    try:
        counts = tuple(int(x) for x in value.split(",") if x.strip())
    except ValueError:
        raise click.BadParameter(f"a comma-separated list of counts, not {value!r}") from None
    if not counts or min(counts) < 1:
        raise click.BadParameter(f"a comma-separated list of counts of 1 or more, not {value!r}")
    return counts


def beside_the_peer(seconds: float) -> Callable[[Callable], Callable]:
    """The options of a bench run beside boardgame.io (``souk bench peer``, ``souk bench floor``): the N matches,
    each run's measured ``seconds`` and warm-up, the interleaved rounds, where boardgame.io is installed."""
    options = (
        click.option("--matches", default="1,16,64", callback=_matches, metavar="N[,N...]",
                     help="concurrent 4-seat matches (games), each N run on both sides"),
        click.option("--seconds", type=click.FloatRange(0.5), default=seconds, help="measured time of each run"),
        click.option("--warmup", type=click.FloatRange(0), default=2.0, help="seconds played before measuring"),
        click.option("--rounds", type=click.IntRange(1), default=2,
                     help="times each N runs on each side, interleaved"),
        click.option("--cache", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_CACHE,
                     help="where boardgame.io is installed (npm ci the first time)"),
    )

    def apply(command: Callable) -> Callable:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


@click.command("peer", context_settings={"show_default": True})
@beside_the_peer(seconds=10.0)
@click.option("--target", type=click.Choice(["serve", "split"]), default="split",
              help="Souk as `souk serve` (one process) or `souk engine`, `souk projector`, `souk gateway`")
@click.option("--peer-moves", type=click.IntRange(4), default=400,
              help="moves a boardgame.io match lasts (a random 4-seat Samarkand game is about 400 commands)")
@click.option("--souk-send", type=click.Choice(["ws", "http"]), default="ws",
              help="how Souk's seats send their commands: on the WebSocket their view is pushed on (as the peer's "
                   "clients send their moves on their socket.io connection), or POSTed")
@click.option("--seed", type=int, default=1)
@click.option("--json", "as_json", is_flag=True, help="print one JSON object (every run's figures too)")
def command(matches: tuple[int, ...], seconds: float, warmup: float, rounds: int, cache: Path, target: str,
            peer_moves: int, seed: int, souk_send: str, as_json: bool) -> None:
    """Souk against boardgame.io 0.50.2 on this machine, interleaved: boardgame.io's own server and socket.io
    clients (a minimal 4-seat game) and `souk bench http --send ws` (4-seat Samarkand, fsync always: commands sent on
    the seats' WebSockets) with the same N matches,
    every seat its own client. Prints per N: moves/s and commands/s, their ratio, latency p50/p99 (move sent to the
    mover's new state) and the server processes' CPU per move."""
    try:
        result = run_peer_bench(matches, seconds, warmup, rounds, cache, target, peer_moves, seed,
                                progress=None if as_json else lambda text: click.echo(text, err=True),
                                send=souk_send)
    except BenchError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(result) if as_json else format_table(result))


if __name__ == "__main__":  # `python -m services.cli.bench.peer`: the command alone
    command()
