"""Le marché de Samarkand (Bruno Fricout, Krok Nik Douil 2010): a Dutch-auction card game for 3 to 5 players.

``GAME`` satisfies ``domain.kernel.Game``; ``domain.games`` registers it. Data in ``data``, rules in ``rules``,
views in ``views``. Rules decisions: docs/rules-decisions.md (Samarkand).
"""

from __future__ import annotations

from typing import Any

from contracts.samarkand import (
    COMMANDS,
    EVENTS,
    VIEWS,
    BankCardTurned,
    BankDeckShuffled,
    CamelBought,
    CamelDeckShuffled,
    CamelDisputed,
    CamelTurned,
    CardsRevealed,
    GoodsBought,
    GoodsDisputed,
    MarketSetUp,
    Options,
    ScoringStarted,
    StopFined,
    ValueClosed,
)
from domain.kernel import Evaluated, ModularGame
from domain.samarkand import data, evaluation, rules, views

# Undo barriers (docs/rules-decisions.md, Undo): chance (the deal, the piles shuffled, a camel or a bank card turned
# from its pile), and every reveal: the chosen cards, the stops of a value with what they settled (purchases,
# fines, disputes: the hidden-goods variant shows each its own), the screens lifted at scoring.
BARRIERS = frozenset((MarketSetUp, CamelDeckShuffled, BankDeckShuffled, CamelTurned, BankCardTurned, CardsRevealed,
                      ValueClosed, GoodsBought, CamelBought, StopFined, GoodsDisputed, CamelDisputed, ScoringStarted))


class Samarkand(ModularGame, Evaluated):
    name = "samarkand"
    title = "Le marché de Samarkand"
    min_seats = data.MIN_SEATS
    max_seats = data.MAX_SEATS
    options_type = Options
    command_types = COMMANDS
    event_types = EVENTS
    view_types = VIEWS
    rules_module = rules
    views_module = views
    evaluation_module = evaluation

    def is_barrier(self, event: Any) -> bool:
        """No undo goes back over this event. The others follow from a seat's own choice and show nobody anything
        new: a card put face down (CardChosen), an answer whose stop stays hidden until the value closes
        (Answered), a round started or ended, a goods card left behind or a least-bought type chosen at scoring,
        the final scores (GameScored; the table's GameEnded after it reveals the seed: a barrier)."""
        return type(event) in BARRIERS

    def scores(self, state: Any) -> tuple[int, ...]:
        """The kernel's optional ``scores`` hook: each player's points if the game were scored now
        (``rules.scores``)."""
        return rules.scores(state)

    def timer(self, state: Any) -> tuple[str, float] | None:
        """The table's game-timer hook (``rules.timer``): in the real-time countdown, the value shown (its key) and
        how long it shows (seconds); None when the rules time nothing."""
        return rules.timer(state)

    def tick(self, state: Any, key: str, chance: Any) -> list[Any]:
        """The table's game-timer hook (``rules.tick``): the value ``key`` ran out; its stops settle together."""
        return rules.tick(state, key, chance)


GAME = Samarkand()

__all__ = ["GAME", "Samarkand"]
