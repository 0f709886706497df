"""1001 Karawane (Roman Mathar, Argentum Verlag 2007): caravans in a desert of face-down hexes, 2 to 5 players.

``GAME`` satisfies ``domain.kernel.Game``. Registered in ``domain.games``. Data in
``data``, rules in ``rules``, views in ``views``. Rules decisions: docs/rules-decisions.md (1001 Karawane).
"""

from __future__ import annotations

from typing import Any

from contracts.karawane import (
    COMMANDS,
    EVENTS,
    VIEWS,
    ArtifactTaken,
    CaravanSupplied,
    DesertLaid,
    DriversHired,
    FirstPlayerChosen,
    GameOver,
    GoodsTraded,
    HexLooked,
    HexRevealed,
    Options,
    ThiefTurned,
    WaterBought,
)
from domain.karawane import bot, data, evaluation, rules, views
from domain.kernel import Evaluated, ModularGame

# Undo barriers (the kernel's optional ``is_barrier`` hook): chance (the desert laid, the first player, a thief card
# turned) and everything that shows a seat what it did not know: a hex looked at (its seat) or revealed (all), a
# place used (its clue), cards shown from a hand (goods and gold traded, gold paid, a water skin or camel drivers
# shown or paid), the end.
BARRIERS = (DesertLaid, FirstPlayerChosen, ThiefTurned, HexLooked, HexRevealed, GoodsTraded, ArtifactTaken,
            WaterBought, DriversHired, CaravanSupplied, GameOver)


class Karawane(ModularGame, Evaluated):
    name = "karawane"
    title = "1001 Karawane"
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
        it did not know: equipment taken (secret), a step onto a hex already seen or in the known sector, a genie's
        swap (unseen hexes), a move ended, a caravan lost or come home, an artifact bought, a turn ended or started
        (the turn after the last one of a round brings a ThiefTurned: a barrier)."""
        return isinstance(event, BARRIERS)

    def scores(self, state: Any) -> tuple[int, ...]:
        """The kernel's optional ``scores`` hook: each player's gold laid out at home now (``rules.scores``)."""
        return rules.scores(state)

    def bot(self, state: Any, seat: int, legal: Any, rng: Any) -> Any:
        """The kernel's optional ``bot`` hook: a command that moves the game toward its end (``bot.choose``)."""
        return bot.choose(rng, state, seat, legal)


GAME = Karawane()

__all__ = ["GAME", "Karawane"]
