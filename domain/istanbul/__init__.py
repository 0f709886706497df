"""Istanbul: Choose & Write (Rüdiger Dorn, Pegasus Spiele 2023): a roll-and-write-like card game for 1 to 5 players.

``GAME`` satisfies ``domain.kernel.Game``; it is not registered in ``domain.games`` until every rule is in (the
lead registers it). Data in ``data``, rules in ``rules``, views in ``views``. Rules decisions:
docs/rules-decisions.md (Istanbul: Choose & Write).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contracts.istanbul import (
    COMMANDS,
    EVENTS,
    VIEWS,
    Acted,
    BonusTaken,
    CaravanTurned,
    DeckShuffled,
    FirstPlayerChosen,
    FountainRevealed,
    GameOver,
    GoodsCardDrawn,
    GoodsDeckShuffled,
    GuildDrawn,
    GuildKept,
    GuildPlayed,
    LocationDealt,
    LocationPlayed,
    LocationRevealed,
    Options,
    RubyCardPlaced,
    SheetsPrepared,
)
from contracts.table import Flow, Result
from domain.chance import Chance
from domain.istanbul import data, rules, views

# Undo barriers (the kernel's optional ``is_barrier`` hook): chance (the setup, a deck shuffled, a card turned or
# drawn from a deck, the first player) and every reveal: a guild card or the hand's location card played, the
# answers of a turn resolved (``Acted``, ``BonusTaken``: each seat learns what the others chose), the guild card
# discarded from two, the end.
BARRIERS = (SheetsPrepared, DeckShuffled, GoodsDeckShuffled, RubyCardPlaced, CaravanTurned, LocationRevealed,
            FountainRevealed, LocationDealt, GuildDrawn, GoodsCardDrawn, FirstPlayerChosen, GuildPlayed, Acted,
            BonusTaken, GuildKept, GameOver)


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

    def is_barrier(self, event: Any) -> bool:
        """No undo goes back over this event. The others follow from a seat's own choice and show nobody anything
        it did not know: a face-up card played or taken, an answer still secret (``Answered``), a draw from the
        deck announced (``DeckDraw``: the card is a ``LocationDealt``), a fountain's choice, a ruby bonus, the
        solo discard, the caravan card returned, a turn started."""
        if isinstance(event, LocationPlayed):
            return event.source == "hand"
        return isinstance(event, BARRIERS)


GAME = Istanbul()

__all__ = ["GAME", "Istanbul"]
