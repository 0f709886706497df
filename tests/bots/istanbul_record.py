"""The commands ``mcts`` (``search`` all, an iteration cap, no clock) and ``greedy`` play in a few whole games of
Istanbul at 2 seats: the data of ``test_istanbul_same_choices`` (tests/bots/data/istanbul_choices.json), recorded
with the code before the kernel's speed-ups so that they are shown to change nothing of what the bots compute.
``python -m tests.bots.istanbul_record > tests/bots/data/istanbul_choices.json`` records it again."""

from __future__ import annotations

import json
import random

import msgspec

from domain.chance import Chance
from domain.kernel import get_game
from services.bots import strategy

SEEDS = (0, 1)
SETTINGS = {"budget": None, "iterations": 12, "rollout": 40, "search": "all"}


def play(seed: int) -> list:
    """Every command of the game of ``seed`` (mcts on seat ``seed % 2``, greedy on the other), as builtins."""
    game = get_game("istanbul")
    secret = seed.to_bytes(8, "big")
    options = game.options_type()
    state = game.initial_state(2, options)
    for event in game.setup(2, options, Chance(secret, 0)):
        state = game.evolve(state, event)
    rng = random.Random(seed)
    bots = [strategy("greedy"), strategy("greedy")]
    bots[seed % 2] = strategy("mcts", **SETTINGS)
    played, n = [], 0
    while game.result(state) is None:
        seat = game.flow(state).awaiting[0]
        command = bots[seat].choose(game, state, seat, rng)
        played.append([seat, type(command).__name__, msgspec.to_builtins(command)])
        n += 1
        for event in game.decide(state, seat, command, Chance(secret, n)):
            state = game.evolve(state, event)
    return played


if __name__ == "__main__":
    print(json.dumps({str(seed): play(seed) for seed in SEEDS}))
