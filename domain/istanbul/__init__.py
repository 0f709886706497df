"""Istanbul: Choose & Write (Rüdiger Dorn, Pegasus Spiele 2023): a roll-and-write-like card game for 1 to 5 players.

``GAME`` satisfies ``domain.kernel.Game``; it is not registered in ``domain.games`` until every rule is in (the
lead registers it). Data in ``data``, rules in ``rules``, views in ``views``. Rules decisions:
docs/rules-decisions.md (Istanbul: Choose & Write).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contracts.istanbul import COMMANDS, EVENTS, VIEWS, Options
from contracts.table import Flow, Result
from domain.chance import Chance
from domain.istanbul import data, rules, views


class Istanbul:
    name = "istanbul"
    title = "Istanbul: Choose & Write"
    min_seats = data.MIN_SEATS
    max_seats = data.MAX_SEATS
    options_type = Options
    command_types = COMMANDS
    event_types = EVENTS
    view_types = VIEWS

    def setup(self, seats: int, options: Options, chance: Chance) -> Sequence[Any]:
        return rules.setup(seats, options, chance)

    def initial_state(self, seats: int, options: Options) -> rules.State:
        return rules.initial_state(seats, options)

    def evolve(self, state: rules.State, event: Any) -> rules.State:
        return rules.evolve(state, event)

    def decide(self, state: rules.State, seat: int, command: Any, chance: Chance) -> Sequence[Any]:
        return rules.decide(state, seat, command, chance)

    def flow(self, state: rules.State) -> Flow:
        return rules.flow(state)

    def legal_commands(self, state: rules.State, seat: int) -> Sequence[Any]:
        return rules.legal_commands(state, seat)

    def view(self, state: rules.State, seat: int | None) -> Any:
        return views.view(state, seat)

    def views(self, state: rules.State) -> dict[int | None, Any]:
        return views.views(state)

    def redact(self, event: Any, seat: int | None) -> Any:
        return views.redact(event, seat)

    def result(self, state: rules.State) -> Result | None:
        return rules.result(state)


GAME = Istanbul()

__all__ = ["GAME", "Istanbul"]
