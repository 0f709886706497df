"""Checks every game's ``determinize`` and ``evaluate`` hooks pass (tests/domain/<game>/test_evaluation.py)."""

from __future__ import annotations

import random
from typing import Any

import msgspec

# a choice another seat made and nobody saw yet is taken back by determinize (that seat chooses again in the
# simulation): whether it has chosen, and who is awaited, are the only public facts that change
TAKEN_BACK = {"awaiting", "has_chosen", "has_answered", "answered", "phase"}


def seen(game: Any, state: Any, seat: int) -> Any:
    """The seat's view as plain data, the taken-back flags of the other seats left out."""
    view = msgspec.to_builtins(game.view(state, seat))
    view = {k: v for k, v in view.items() if k not in TAKEN_BACK}
    if isinstance(view.get("players"), (list, tuple)):
        view["players"] = [{k: v for k, v in p.items() if k not in TAKEN_BACK} if p.get("seat") != seat else p
                           for p in view["players"]]
    return view


def check_determinize(name: str, seats: int, hidden: Any) -> None:
    """Over seeded positions: the seat sees the same in every determinization as in the true state; what
    ``hidden(state, seat)`` returns (what it does not see) differs between draws at least once; the true state's
    hidden part is not what every draw gives (the hook does not hand back the true state)."""
    from tests.bots.support import advanced

    varied = 0
    for k in range(6):
        game, state = advanced(name, seats, seed=200 + k, commands=4 + 17 * k)
        if game.result(state) is not None:
            continue
        for seat in range(seats):
            worlds = [game.determinize(state, seat, random.Random(j)) for j in range(4)]
            for world in worlds:
                assert seen(game, world, seat) == seen(game, state, seat)
                assert game.legal_commands(world, seat) == game.legal_commands(state, seat) or \
                    seat not in game.flow(state).awaiting
            varied += len({repr(hidden(w, seat)) for w in worlds}) > 1
    assert varied, "no determinization drew anything again"
