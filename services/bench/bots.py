"""How strong the bots are: ``souk bench bots`` (services/cli/bots.py) plays games of the pure domain (no Redis),
one seat of strategy ``a`` against ``b`` on every other seat, ``a``'s seat rotated game after game, and reports
``a``'s win rate with its 95% confidence interval (Wilson), against its fair share (1 / seats), and the share of
games that end within ``bound`` commands.

A game's chance is its own seeded ``Chance`` (as the engine's), the bots' from their own ``random.Random``
(``services.bots``): a bot knows no more of the deal or of the dice to come than its seat. A game won by several
seats (a tie) counts as a win for ``a`` when ``a`` is among the winners.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from typing import Any

from domain.chance import Chance
from domain.kernel import get_game
from services.bots import strategy

Z95 = 1.959964  # the normal quantile of a two-sided 95% interval


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95% by default); (0, 1) for no trial."""
    if trials <= 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exactly 0 and 1 at the ends (no rounding)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


def play(game_name: str, seats: int, strategies: Sequence[Any], seed: int, bound: int) -> dict[str, Any]:
    """One game, ``strategies[s]`` on seat ``s``, until it ends or ``bound`` commands were played: its winners
    (None: not over), commands played, and the seconds each seat spent choosing."""
    game = get_game(game_name)
    secret = seed.to_bytes(8, "big")
    options = game.options_type()
    state = game.initial_state(seats, options)
    for event in game.setup(seats, options, Chance(secret, 0)):
        state = game.evolve(state, event)
    rng = random.Random(seed)
    thinking = [0.0] * seats
    moves = [0] * seats
    commands = 0
    while game.result(state) is None and commands < bound:
        awaiting = game.flow(state).awaiting
        if not awaiting:
            raise RuntimeError(f"{game_name}: nobody is awaited in phase {game.flow(state).phase}")
        seat = awaiting[0]
        start = time.perf_counter()
        command = strategies[seat].choose(game, state, seat, rng)
        thinking[seat] += time.perf_counter() - start
        moves[seat] += 1
        commands += 1
        for event in game.decide(state, seat, command, Chance(secret, commands)):
            state = game.evolve(state, event)
    result = game.result(state)
    return {"winners": None if result is None else list(result.winners), "commands": commands,
            "thinking": thinking, "moves": moves}


def _one(args: tuple) -> dict[str, Any]:
    game_name, seats, names, settings, seed, bound, index = args
    seat_a = index % seats
    strategies = [strategy(names[0] if s == seat_a else names[1], **settings.get(
        names[0] if s == seat_a else names[1], {})) for s in range(seats)]
    out = play(game_name, seats, strategies, seed + index, bound)
    out["seat_a"] = seat_a
    out["index"], out["seed"] = index, seed + index
    return out


def bench(game_name: str, seats: int, games: int, names: Sequence[str], settings: dict[str, dict] | None = None,
          bound: int = 5000, seed: int = 0, processes: int = 1, progress: Any = None) -> dict[str, Any]:
    """``games`` games of ``names[0]`` (one seat, rotated) against ``names[1]`` (the others); the summary."""
    settings = settings or {}
    jobs = [(game_name, seats, tuple(names), settings, seed, bound, i) for i in range(games)]
    start = time.perf_counter()
    if processes > 1:
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(processes) as pool:
            played = []
            for out in pool.imap(_one, jobs):
                played.append(out)
                if progress is not None:
                    progress(out)
    else:
        played = []
        for job in jobs:
            played.append(_one(job))
            if progress is not None:
                progress(played[-1])
    ended = [g for g in played if g["winners"] is not None]
    wins = sum(g["seat_a"] in g["winners"] for g in ended)
    low, high = wilson(wins, games)
    ended_low, ended_high = wilson(len(ended), games)
    moves_a = sum(g["moves"][g["seat_a"]] for g in played)
    thinking_a = sum(g["thinking"][g["seat_a"]] for g in played)
    moves_b = sum(sum(g["moves"]) - g["moves"][g["seat_a"]] for g in played)
    thinking_b = sum(sum(g["thinking"]) - g["thinking"][g["seat_a"]] for g in played)
    fair = 1 / seats
    return {
        "game": game_name, "seats": seats, "games": games, "a": names[0], "b": names[1],
        "settings": settings, "bound": bound, "seed": seed,
        "wins_a": wins, "win_rate_a": wins / games, "win_rate_a_95": [low, high], "fair_share": fair,
        "times_fair_share": (wins / games) / fair,
        "ended": len(ended), "ended_share": len(ended) / games, "ended_share_95": [ended_low, ended_high],
        "mean_commands": sum(g["commands"] for g in played) / games,
        "seconds_per_move_a": thinking_a / moves_a if moves_a else 0.0,
        "seconds_per_move_b": thinking_b / moves_b if moves_b else 0.0,
        "seconds": time.perf_counter() - start, "processes": processes,
    }


def report(summary: dict[str, Any]) -> str:
    """The summary as a few lines for people."""
    s = summary
    low, high = s["win_rate_a_95"]
    elow, ehigh = s["ended_share_95"]
    return "\n".join([
        f"{s['game']}, {s['seats']} seats, {s['games']} games: {s['a']} on one seat (rotated) against {s['b']}"
        + (f" ({s['settings']})" if s["settings"] else ""),
        f"  {s['a']} wins {s['wins_a']}/{s['games']} = {s['win_rate_a']:.1%} (95% CI {low:.1%} to {high:.1%}); "
        f"fair share {s['fair_share']:.1%}, x{s['times_fair_share']:.2f}",
        f"  ended within {s['bound']} commands: {s['ended']}/{s['games']} = {s['ended_share']:.1%} "
        f"(95% CI {elow:.1%} to {ehigh:.1%}); {s['mean_commands']:.0f} commands a game on average",
        f"  seconds a move: {s['a']} {s['seconds_per_move_a']:.4f}, {s['b']} {s['seconds_per_move_b']:.4f}; "
        f"{s['seconds']:.1f} s in all, {s['processes']} process(es)",
    ])
