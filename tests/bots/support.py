"""Games played on the bare kernel by strategies (no table, no Redis): a seeded game's state after some commands."""

from __future__ import annotations

import random
from typing import Any

from domain.chance import Chance
from domain.kernel import get_game


def started(name: str, seats: int, seed: int) -> tuple[Any, Any]:
    game = get_game(name)
    options = game.options_type()
    state = game.initial_state(seats, options)
    for event in game.setup(seats, options, Chance(seed.to_bytes(8, "big"), 0)):
        state = game.evolve(state, event)
    return game, state


def advanced(name: str, seats: int, seed: int, commands: int, pick: Any = None) -> tuple[Any, Any]:
    """A game ``commands`` commands in, each of an awaited seat (``pick(game, state, seat, rng)``: default the
    game's own bot, random for a game without one)."""
    from domain.kernel import bot_command

    game, state = started(name, seats, seed)
    rng = random.Random(seed)
    for n in range(commands):
        if game.result(state) is not None:
            break
        seat = rng.choice(game.flow(state).awaiting)
        command = (pick or (lambda g, s, i, r: bot_command(g, s, i, r)))(game, state, seat, rng)
        for event in game.decide(state, seat, command, Chance(seed.to_bytes(8, "big"), n + 1)):
            state = game.evolve(state, event)
    return game, state
