"""``souk bench bots``: the bots' strength and how often they end a game (services/bench/bots.py; README, Bots)."""

from __future__ import annotations

import json
import os

import click

from services.cli.main import OperatorError


def _strategies(text: str) -> tuple[str, str]:
    from services.bots import STRATEGIES

    names = [n.strip() for n in text.split(",")]
    if len(names) != 2 or not all(names):
        raise click.BadParameter(f"bad_strategies: two strategies, a,b (a on one seat, b on the others), not {text!r}")
    unknown = [n for n in names if n not in STRATEGIES]
    if unknown:
        raise click.BadParameter(f"unknown_strategy: {', '.join(unknown)} (the strategies are "
                                 f"{', '.join(STRATEGIES)})")
    return names[0], names[1]


@click.command("bots", context_settings={"show_default": True})
@click.option("--game", "game_name", required=True, help="the game (karawane, samarkand, istanbul, yspahan)")
@click.option("--seats", type=int, default=None, help="seats a game [default: the game's smallest count, 2 at least]")
@click.option("--games", type=click.IntRange(1), default=100, help="games to play")
@click.option("--strategies", "names", default="greedy,random",
              help="a,b: strategy a on one seat (rotated), b on every other seat")
@click.option("--budget", type=click.FloatRange(min=0, min_open=True), default=1.0,
              help="mcts: seconds a move, at most")
@click.option("--iterations", type=click.IntRange(1), default=100_000, help="mcts: iterations a move, at most")
@click.option("--rollout", type=click.IntRange(0), default=0,
              help="mcts: commands played by the greedy policy after the tree before the seat's value is taken")
@click.option("--exploration", type=click.FloatRange(min=0), default=0.7, help="mcts: UCB1's exploration constant")
@click.option("--epsilon", type=click.FloatRange(0, 1), default=0.1,
              help="mcts: how often the policy of the other seats (and rollouts) plays at random")
@click.option("--sample", type=click.IntRange(1), default=8,
              help="mcts: the policy rates at most SAMPLE legal commands, drawn at random")
@click.option("--width", type=click.IntRange(1), default=6,
              help="mcts: the root searches the greedy rating's best WIDTH commands")
@click.option("--policy", type=click.Choice(["greedy", "random", "seeker"]), default="greedy",
              help="mcts: the other seats' and the rollouts' policy (seeker: the game's own bot hook)")
@click.option("--expand", type=click.Choice(["random", "greedy"]), default="random",
              help="mcts: which untried command of the seat a node below the root adds first (greedy: the best "
                   "rated of --sample)")
@click.option("--search", type=click.Choice(["own", "all"]), default="own",
              help="mcts: whose decisions the tree keeps: the seat's own, valued by the game's outlook (own), or "
                   "every seat's, won or lost at the cut by evaluate, random commands after the tree (all)")
@click.option("--samples", type=click.IntRange(1), default=3, help="greedy: determinizations each command is rated on")
@click.option("--bound", type=click.IntRange(1), default=5000, help="commands after which a game counts as not ended")
@click.option("--seed", type=int, default=0, help="the first game's seed (game i: seed + i)")
@click.option("--processes", type=click.IntRange(1, 2), default=1,
              help="processes playing games at once (at most 2: the machine is shared)")
@click.option("--json", "as_json", is_flag=True, help="print the summary as one JSON object")
@click.option("--log", "log_path", type=click.Path(dir_okay=False), default=None,
              help="append one JSON line a game to this file as it ends (a long run's games survive its stop)")
def bench_command(game_name: str, seats: int | None, games: int, names: str, budget: float, iterations: int,
                  rollout: int, exploration: float, epsilon: float, sample: int, width: int, policy: str, expand: str,
                  search: str, samples: int,
                  bound: int,
                  seed: int, processes: int, as_json: bool, log_path: str | None) -> None:
    """Win rates of strategy a against b with 95% confidence intervals (Wilson), and the share of games that end
    within --bound commands, on the pure domain (no Redis)."""
    from domain.kernel import get_game
    from services.bench.bots import bench, report

    game = get_game(game_name)
    if game is None:
        raise click.BadParameter(f"unknown_game: {game_name!r}", param_hint="--game")
    a, b = _strategies(names)
    if seats is None:
        seats = max(game.min_seats, 2)
    if not game.min_seats <= seats <= game.max_seats:
        raise click.BadParameter(f"bad_seat_count: {game.title} is played by {game.min_seats} to {game.max_seats} "
                                 f"seats, not {seats}", param_hint="--seats")
    if processes > (os.cpu_count() or 1):
        raise OperatorError(f"--processes {processes}: this machine has {os.cpu_count()} cores")
    settings = {"mcts": {"budget": budget, "iterations": iterations, "rollout": rollout, "width": width,
                         "exploration": exploration, "epsilon": epsilon, "sample": sample, "policy": policy,
                         "expand": expand, "search": search},
                "greedy": {"samples": samples}}
    settings = {k: v for k, v in settings.items() if k in (a, b)}

    def progress(out: dict) -> None:
        if log_path is not None:
            seat = out["seat_a"]
            line = {"game": out["index"], "seed": out["seed"], "seat_a": seat, "winners": out["winners"],
                    "won_a": out["winners"] is not None and seat in out["winners"], "commands": out["commands"],
                    "seconds_per_move_a": out["thinking"][seat] / max(1, out["moves"][seat])}
            with open(log_path, "a", encoding="utf-8") as log:
                log.write(json.dumps(line) + "\n")
        if not as_json:
            click.echo(".", nl=False, err=True)

    summary = bench(game.name, seats, games, (a, b), settings, bound=bound, seed=seed, processes=processes,
                    progress=progress)
    if not as_json:
        click.echo("", err=True)
    click.echo(json.dumps(summary) if as_json else report(summary))


@click.command("bot", context_settings={"show_default": True})
@click.argument("game_id")
@click.option("--seat", "seat", type=click.IntRange(0), default=None, help="the seat to play (with --token)")
@click.option("--token", default=None, envvar="SOUK_BOT_TOKEN", show_envvar=True,
              help="the seat's token, from its join")
@click.option("--fill", is_flag=True, help="join every free seat (as 'bot 1', 'bot 2'...) and play them all")
@click.option("--strategy", "name", default="greedy", help="random, greedy, mcts or seeker (1001 Karawane's own)")
@click.option("--budget", type=click.FloatRange(min=0, min_open=True), default=1.0,
              help="mcts: seconds a move, at most")
@click.option("--samples", type=click.IntRange(1), default=3, help="greedy: determinizations each command is rated on")
@click.option("--server", default="http://127.0.0.1:8000", metavar="URL", help="the gateway")
@click.option("--poll", is_flag=True, help="poll the seat's view instead of following its WebSocket")
@click.option("--seed", type=int, default=None, show_default="a new one",
              help="the bot's random draws, and with --fill its seats' entropy (a game created with a seed is then "
                   "the same game at every run)")
@click.option("--quiet", is_flag=True, help="print only the end of the game, not each move")
def bot_command(game_id: str, seat: int | None, token: str | None, fill: bool, name: str, budget: float,
                samples: int, server: str, poll: bool, seed: int | None, quiet: bool) -> None:
    """Plays a seat of GAME_ID on a Souk server, as a separate client: it follows the seat's views (WebSocket, or
    --poll), and when the seat is awaited a strategy chooses among its legal commands in a state built from the
    seat's view alone, and sends the command (expected version and command id: resending is safe). With --fill it
    joins every free seat and plays them all. Prints each move, and the result when the game is over."""
    import asyncio
    import random

    import msgspec

    from services.bots import STRATEGIES, strategy
    from services.client.remote_bot import fill as fill_seats
    from services.client.remote_bot import play, seat_of
    from services.bots.strategies import StrategyError
    from services.client.sdk import SoukClient, SoukError

    if name not in STRATEGIES:
        raise click.BadParameter(f"unknown_strategy: {name!r} (the strategies are {', '.join(STRATEGIES)})",
                                 param_hint="--strategy")
    if fill and seat is not None:
        raise click.UsageError("bad_arguments: either --seat N --token T (one seat taken before), or --fill")
    if not fill and (seat is None or not token):
        raise click.UsageError("bad_arguments: --seat N with its --token T (or SOUK_BOT_TOKEN), or --fill")
    settings = {"mcts": {"budget": budget}, "greedy": {"samples": samples}}.get(name, {})
    rng = random.Random(seed)

    def moved(view, command) -> None:
        if not quiet:
            click.echo(f"v{view.version} seat {view.seat}: {json.dumps(msgspec.to_builtins(command))}")

    async def run() -> list:
        async with SoukClient(server) as client:
            if fill:
                return await fill_seats(client, game_id, lambda: strategy(name, **settings), rng=rng, poll=poll,
                                        on_move=moved, seeded=seed is not None)
            handle = await seat_of(client, game_id, seat, token)
            return [await play(handle, strategy(name, **settings), rng=rng, poll=poll, on_move=moved)]

    try:
        views = asyncio.run(run())
    except (SoukError, StrategyError) as exc:
        raise OperatorError(f"bot: {exc}") from None
    last = max(views, key=lambda v: v.version)
    result = last.result
    click.echo(json.dumps({"game_id": game_id, "status": last.status, "version": last.version,
                           "seats": sorted(v.seat for v in views),
                           "winners": list(result.winners) if result else None,
                           "scores": list(result.scores) if result else None}))
