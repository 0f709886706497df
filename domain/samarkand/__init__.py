"""Le marché de Samarkand (Bruno Fricout, Krok Nik Douil 2010): a Dutch-auction card game for 3 to 5 players.

``GAME`` satisfies ``domain.kernel.Game``; ``domain.games`` registers it. Data in ``data``, rules in ``rules``,
views in ``views``. Rules decisions: docs/rules-decisions.md (Samarkand).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contracts.samarkand import COMMANDS, EVENTS, VIEWS, Options
from contracts.table import Flow, Result
from domain.chance import Chance
from domain.samarkand import data, rules, views


class Samarkand:
    name = "samarkand"
    title = "Le marché de Samarkand"
    min_seats = data.MIN_SEATS
    max_seats = data.MAX_SEATS
    options_type = Options
    command_types = COMMANDS
    event_types = EVENTS
    view_types = VIEWS

    def check_options(self, seats: int, options: Options) -> None:
        rules.check_options(seats, options)

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


GAME = Samarkand()

__all__ = ["GAME", "Samarkand"]
