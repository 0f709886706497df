"""Yspahan (Sébastien Pauchon, Ystari 2006) for 2 to 4 players, as a pure decider.

``GAME`` satisfies ``domain.kernel.Game``; ``domain.games`` registers it. Data tables live in ``data``
(derived indices in ``board``), rules in ``rules`` (with ``shops``, ``supervisor``, ``scoring``), views in
``views``.
"""

from __future__ import annotations

from typing import Any

from contracts.yspahan import (
    COMMANDS,
    EVENTS,
    VIEWS,
    CardDrawn,
    CardPlayed,
    DeckShuffled,
    DiceRolled,
    DiceSelected,
    Options,
)
from domain.kernel import Evaluated, ModularGame
from domain.yspahan import evaluation, rules, views

# Undo barriers (docs/rules-decisions.md, Undo): chance (the deck shuffled, the dice rolled), a card drawn (its
# drawer learns it), a card shown to everyone (played, or discarded for one more die).
_BARRIERS = frozenset((DeckShuffled, DiceRolled, CardDrawn, CardPlayed))


def is_barrier(event: Any) -> bool:
    """No undo goes back over this event (``domain.kernel.is_barrier``). Every other Yspahan event follows from
    the commands and what everyone sees: taking goods, placing cubes, the supervisor, shipping, building, the
    end of a turn, a day or a week, scoring."""
    return type(event) in _BARRIERS or (type(event) is DiceSelected and event.discard is not None)


class Yspahan(ModularGame, Evaluated):
    name = "yspahan"
    title = "Yspahan"
    min_seats = 2
    max_seats = 4
    options_type = Options
    command_types = COMMANDS
    event_types = EVENTS
    view_types = VIEWS
    rules_module = rules
    views_module = views
    evaluation_module = evaluation
    is_barrier = staticmethod(is_barrier)

    def scores(self, state: Any) -> tuple[int, ...]:
        """The kernel's optional ``scores`` hook: each player's points now (public, on the scoring track)."""
        return tuple(p.score for p in state.players)


GAME = Yspahan()

__all__ = ["GAME", "Yspahan"]
