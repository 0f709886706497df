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
from domain.kernel import ModularGame
from domain.yspahan import evaluation, rules, views

# Undo barriers (docs/rules-decisions.md, Undo): chance (the deck shuffled, the dice rolled), a card drawn (its
# drawer learns it), a card shown to everyone (played, or discarded for one more die).
_BARRIERS = frozenset((DeckShuffled, DiceRolled, CardDrawn, CardPlayed))


def is_barrier(event: Any) -> bool:
    """No undo goes back over this event (``domain.kernel.is_barrier``). Every other Yspahan event follows from
    the commands and what everyone sees: taking goods, placing cubes, the supervisor, shipping, building, the
    end of a turn, a day or a week, scoring."""
    return type(event) in _BARRIERS or (type(event) is DiceSelected and event.discard is not None)


class Yspahan(ModularGame):
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
    is_barrier = staticmethod(is_barrier)

    def scores(self, state: Any) -> tuple[int, ...]:
        """The kernel's optional ``scores`` hook: each player's points now (public, on the scoring track)."""
        return tuple(p.score for p in state.players)

    def evaluate(self, state: Any, seat: int) -> float:
        """The kernel's optional ``evaluate`` hook (``evaluation.evaluate``): how good ``state`` looks to ``seat``."""
        return evaluation.evaluate(state, seat)

    def determinize(self, state: Any, seat: int, rng: Any) -> Any:
        """The kernel's optional ``determinize`` hook (``evaluation.determinize``): what ``seat`` has not seen, drawn
        again."""
        return evaluation.determinize(state, seat, rng)

    def from_view(self, view: Any, seat: int, seats: int, options: Any, rng: Any) -> Any:
        """The kernel's optional ``from_view`` hook (``evaluation.from_view``): a state consistent with ``seat``'s
        view, what it does not show drawn with ``rng`` (a remote bot holds nothing else)."""
        return evaluation.from_view(view, seat, seats, options, rng)


GAME = Yspahan()

__all__ = ["GAME", "Yspahan"]
