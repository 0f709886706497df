"""Istanbul: Choose & Write (Rüdiger Dorn, Pegasus Spiele 2023): a roll-and-write-like card game for 1 to 5 players.

``GAME`` satisfies ``domain.kernel.Game``; ``domain.games`` registers it. Data in ``data``, rules in ``rules``,
views in ``views``. Rules decisions: docs/rules-decisions.md (Istanbul: Choose & Write).
"""

from __future__ import annotations

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
from domain.istanbul import data, evaluation, rules, views
from domain.kernel import Evaluated, ModularGame

# Undo barriers (the kernel's optional ``is_barrier`` hook): chance (the setup, a deck shuffled, a card turned or
# drawn from a deck, the first player) and every reveal: a guild card or the hand's location card played, the
# answers of a turn resolved (``Acted``, ``BonusTaken``: each seat learns what the others chose), the guild card
# discarded from two, the end.
BARRIERS = (SheetsPrepared, DeckShuffled, GoodsDeckShuffled, RubyCardPlaced, CaravanTurned, LocationRevealed,
            FountainRevealed, LocationDealt, GuildDrawn, GoodsCardDrawn, FirstPlayerChosen, GuildPlayed, Acted,
            BonusTaken, GuildKept, GameOver)


class Istanbul(ModularGame, Evaluated):
    name = "istanbul"
    title = "Istanbul: Choose & Write"
    min_seats = data.MIN_SEATS
    max_seats = data.MAX_SEATS
    options_type = Options
    command_types = COMMANDS
    event_types = EVENTS
    view_types = VIEWS
    rules_module = rules
    views_module = views
    evaluation_module = evaluation
    rules_revision = rules.RULES  # the newest revision of its rules (``Options.rules``)

    def is_barrier(self, event: Any) -> bool:
        """No undo goes back over this event. The others follow from a seat's own choice and show nobody anything
        it did not know: a face-up card played or taken, an answer still secret (``Answered``), a draw from the
        deck announced (``DeckDraw``: the card is a ``LocationDealt``), a fountain's choice, a ruby bonus, the
        solo discard, the caravan card returned, a turn started."""
        if isinstance(event, LocationPlayed):
            return event.source == "hand"
        return isinstance(event, BARRIERS)

    def scores(self, state: Any) -> tuple[int, ...]:
        """The kernel's optional ``scores`` hook: each player's rubies now (``rules.scores``)."""
        return rules.scores(state)


GAME = Istanbul()

__all__ = ["GAME", "Istanbul"]
