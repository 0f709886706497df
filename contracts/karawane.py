"""1001 Karawane: options, commands, events and views.

Identifiers are the data ids of ``domain.karawane.data``: cells ``0``..``63`` (``q + 8 * r`` over the board's axial
coordinates; the home city is cell 7); hex kinds ``desert city oasis caravanserai tower mausoleum ruins``;
artifacts ``carpet amulet lamp``; sectors ``red blue green``.

The command set keeps ``legal_commands`` short (never more than about a hundred): a move is made hex by hex
(``Step``, then ``StopMoving`` or the third step), a genie's swap in two picks (``PlayGenie`` names the first hex,
``SwapWith`` the second), the equipment in one ``Equip`` (at most 84 ways to take up to 6 cards of 3 kinds), and
the desert's law in one ``Supply`` (how the caravan is watered and guarded).

Tags are explicit and stable (``"karawane.<Name>"``). Events are stored forever: a new field gets a default.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from contracts.base import Command, Event, View

WaterBy = Literal["oasis", "skin"]
GuardBy = Literal["clear", "show", "driver", "caravanserai"]


class Options(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """1001 Karawane has no options yet (the board and the cards are data: ``domain.karawane.data``).

    ``rules``: the revision of the rules the game is played under (``domain.kernel.rules_revision``). A new game gets
    its title's newest (the engine writes it into the CreateGame it stores, ``domain.table.newest_rules``); a game
    keeps its revision for good, so that its record re-runs as it was played. 1: the rules as the game landed,
    which every game stored before revisions plays (its options do not name one: 1 is left out of the encoding).
    Revision 2 (2026-11-26, a second reading of the text): a token after the move comes before the adventures; a
    lost caravan's next turn loses its move only; a caravan passing through home comes home then."""

    rules: int = 1


# --- commands -------------------------------------------------------------------------------------------

class Equip(Command, tag="karawane.Equip"):
    """At the start of a turn at home: take equipment cards from the face-up piles (the hand never over 6)."""

    camel_drivers: int = 0
    water_skins: int = 0
    goods: int = 0


class PlayGenie(Command, tag="karawane.PlayGenie"):
    """Play a token on its genie side (before or after the move) and pick the first face-down desert hex to swap."""

    hex: int


class SwapWith(Command, tag="karawane.SwapWith"):
    """The genie's second face-down desert hex: the two swap places (caravans on them travel along)."""

    hex: int


class PlayMap(Command, tag="karawane.PlayMap"):
    """Play a token on its map side: the face-down desert hex is turned face up for good."""

    hex: int


class Step(Command, tag="karawane.Step"):
    """Move the caravan to a neighbouring hex (up to three a turn); a face-down desert hex entered is looked at."""

    to: int


class StopMoving(Command, tag="karawane.StopMoving"):
    """End the move (after 0, 1 or 2 steps; the third step ends it by itself)."""


class Trade(Command, tag="karawane.Trade"):
    """At a desert city crossed this turn: ``goods`` goods cards for as many 1-gold cards (shown to all)."""

    goods: int


class TakeArtifact(Command, tag="karawane.TakeArtifact"):
    """At a magic place crossed this turn: its artifact (one of each kind per seat)."""

    artifact: str


class BuyWater(Command, tag="karawane.BuyWater"):
    """At an oasis crossed this turn: one 1-gold card for ``count`` water skins."""

    count: int


class HireDrivers(Command, tag="karawane.HireDrivers"):
    """At a caravanserai crossed this turn: one 1-gold card for ``count`` camel drivers."""

    count: int


class Supply(Command, tag="karawane.Supply"):
    """The desert's law, which ends the desert phase: ``water`` from a crossed oasis or a water skin paid;
    ``thieves`` ``clear`` (the card shows 0), ``show`` (more camel drivers than thieves shown), ``driver`` (one
    paid) or ``caravanserai`` (one crossed). None: the caravan is not in order and is lost with its hand."""

    water: WaterBy | None = None
    thieves: GuardBy | None = None


class BuyArtifact(Command, tag="karawane.BuyArtifact"):
    """At home: an artifact for 5 gold laid out."""

    artifact: str


class EndTurn(Command, tag="karawane.EndTurn"):
    """End the turn (outside the desert phase, which ``Supply`` ends)."""


COMMANDS = (Equip, PlayGenie, SwapWith, PlayMap, Step, StopMoving, Trade, TakeArtifact, BuyWater, HireDrivers,
            Supply, BuyArtifact, EndTurn)


# --- events ---------------------------------------------------------------------------------------------

class DesertLaid(Event, tag="karawane.DesertLaid"):
    """A sector's 16 hexes shuffled face down onto its cells (``data.SECTOR_CELLS``, in cell order). ``kinds`` is
    nobody's to see (``redact`` gives None)."""

    sector: str
    kinds: tuple[str, ...] | None


class FirstPlayerChosen(Event, tag="karawane.FirstPlayerChosen"):
    seat: int


class ThiefTurned(Event, tag="karawane.ThiefTurned"):
    """The first player turns the thief deck's top card for round ``round``; ``reshuffled``: every card had been
    turned, the deck was shuffled first."""

    round: int
    thieves: int
    reshuffled: bool = False


class TurnStarted(Event, tag="karawane.TurnStarted"):
    seat: int
    round: int


class CaravanReplaced(Event, tag="karawane.CaravanReplaced"):
    """The turn after its loss a caravan is placed at home; it cannot move this turn (the turn is lost)."""

    seat: int


class Equipped(Event, tag="karawane.Equipped"):
    """Cards taken into hand; others see only ``cards`` (the counts are None for them)."""

    seat: int
    cards: int
    camel_drivers: int | None
    water_skins: int | None
    goods: int | None


class GenieSummoned(Event, tag="karawane.GenieSummoned"):
    """A token played on its genie side; ``hex`` is the first of the two hexes to swap."""

    seat: int
    hex: int


class HexesSwapped(Event, tag="karawane.HexesSwapped"):
    """The genie swapped the hexes at ``a`` and ``b`` (unseen); ``carried``: seats whose caravans travelled along."""

    seat: int
    a: int
    b: int
    carried: tuple[int, ...] = ()


class HexRevealed(Event, tag="karawane.HexRevealed"):
    """A map token: the hex at ``hex`` is face up for good, ``kind`` public."""

    seat: int
    hex: int
    kind: str


class CaravanStepped(Event, tag="karawane.CaravanStepped"):
    seat: int
    to: int


class HexLooked(Event, tag="karawane.HexLooked"):
    """The active seat secretly looked at the face-down hex it entered: only it sees ``kind``."""

    seat: int
    hex: int
    kind: str | None


class MoveEnded(Event, tag="karawane.MoveEnded"):
    """``desert``: the move left the known sector or started outside it, so the desert phase follows."""

    seat: int
    desert: bool


class GoodsTraded(Event, tag="karawane.GoodsTraded"):
    """Goods for 1-gold cards, shown to all; ``clue``: cells (at the time) of the crossed hexes, one of which is a
    desert city (a face-down one when ``face_down``: more than 2 goods traded this turn)."""

    seat: int
    goods: int
    clue: tuple[int, ...]
    face_down: bool = False


class ArtifactTaken(Event, tag="karawane.ArtifactTaken"):
    seat: int
    artifact: str
    clue: tuple[int, ...]


class WaterBought(Event, tag="karawane.WaterBought"):
    seat: int
    count: int
    clue: tuple[int, ...]


class DriversHired(Event, tag="karawane.DriversHired"):
    seat: int
    count: int
    clue: tuple[int, ...]


class CaravanSupplied(Event, tag="karawane.CaravanSupplied"):
    """The caravan is in order: ``water`` (``oasis``/``skin``), ``thieves`` (``clear``/``show``/``driver``/
    ``caravanserai``); ``shown``: camel drivers shown; ``oasis_clue``/``caravanserai_clue``: the cells among which
    the place used lies (empty when not used)."""

    seat: int
    water: str
    thieves: str
    shown: int = 0
    oasis_clue: tuple[int, ...] = ()
    caravanserai_clue: tuple[int, ...] = ()


class CaravanLost(Event, tag="karawane.CaravanLost"):
    """Not in order (``cause``: ``water`` or ``thieves``): the caravan leaves the board and its whole hand goes back
    to the supply; ``cards``: how many."""

    seat: int
    cause: str
    cards: int


class CameHome(Event, tag="karawane.CameHome"):
    """The caravan came home: ``gold`` (1-gold cards) and ``artifacts`` from the hand are laid out for good;
    ``returned`` equipment cards go back to the piles."""

    seat: int
    gold: int
    artifacts: tuple[str, ...]
    returned: int


class ArtifactBought(Event, tag="karawane.ArtifactBought"):
    """Paid from the gold laid out: ``ones`` 1-gold and ``threes`` 3-gold cards; ``change`` 1-gold cards back."""

    seat: int
    artifact: str
    ones: int
    threes: int
    change: int = 0


class GoldExchanged(Event, tag="karawane.GoldExchanged"):
    """The 1-gold cards ran out: ``threes`` 3-gold cards replace 3 times as many of the seat's laid-out 1-gold."""

    seat: int
    threes: int


class TurnEnded(Event, tag="karawane.TurnEnded"):
    seat: int


class SeatScore(msgspec.Struct, frozen=True):
    gold: int
    artifacts: tuple[str, ...]


class GameOver(Event, tag="karawane.GameOver"):
    """The round in which a seat laid out (or bought) its third artifact ended. Among the seats with all three, most
    gold laid out wins (ties share)."""

    scores: tuple[SeatScore, ...]
    winners: tuple[int, ...]


EVENTS = (DesertLaid, FirstPlayerChosen, ThiefTurned, TurnStarted, CaravanReplaced, Equipped, GenieSummoned,
          HexesSwapped, HexRevealed, CaravanStepped, HexLooked, MoveEnded, GoodsTraded, ArtifactTaken, WaterBought,
          DriversHired, CaravanSupplied, CaravanLost, CameHome, ArtifactBought, GoldExchanged, TurnEnded, GameOver)


# --- views ----------------------------------------------------------------------------------------------

class HexView(View, tag="karawane.HexView"):
    """A desert cell as the reader knows it: ``sector`` the cell's area, ``back`` the colour of the hex lying there
    now (public: a genie's swap is seen by all), ``face_up`` (a map token), ``kind`` when the reader looked at this
    hex or it is face up (else None)."""

    cell: int
    q: int
    r: int
    sector: str
    back: str
    face_up: bool
    kind: str | None


class ClueView(View, tag="karawane.ClueView"):
    """Public: when ``seat`` used a place in ``round``, one of the hexes now at ``cells`` (the ones it crossed that
    turn) is of ``kind`` (``city`` ... ``ruins``); ``face_down``: one of the face-down ones."""

    seat: int
    round: int
    kind: str
    cells: tuple[int, ...]
    face_down: bool = False


class PlayerView(View, tag="karawane.PlayerView"):
    """Public facts of a seat: its caravan's cell (None: lost, placed at home at its next turn), the cards in hand
    (count), the gold and artifacts in hand (taken in view of all), what is laid out at home, its tokens."""

    seat: int
    cell: int | None
    lost: bool
    hand: int
    gold_in_hand: int
    artifacts_in_hand: tuple[str, ...]
    gold_ones: int
    gold_threes: int
    gold: int
    artifacts: tuple[str, ...]
    tokens: int


class HandView(View, tag="karawane.HandView"):
    """The reader's own hand."""

    camel_drivers: int
    water_skins: int
    goods: int
    gold: int
    artifacts: tuple[str, ...]


class SupplyView(View, tag="karawane.SupplyView"):
    """The supply: the equipment piles as one count (per pile it would tell the hands' contents), the gold and the
    artifacts; the thief cards not turned yet."""

    equipment: int
    gold_ones: int
    gold_threes: int
    artifacts: dict[str, int]
    thief_cards: int


class TurnView(View, tag="karawane.TurnView"):
    """The active seat's turn: ``path`` the cells entered, ``token`` whether its token is played, ``genie`` the
    first hex a genie picked, ``traded`` goods traded this turn, ``desert`` whether the desert phase is owed."""

    seat: int
    start: int | None
    path: tuple[int, ...]
    moved: bool
    token: bool
    genie: int | None
    traded: int
    desert: bool


class KarawaneView(View, tag="karawane.KarawaneView"):
    seat: int | None
    phase: str
    round: int
    first: int | None
    active: int | None
    thieves: int | None
    home: int
    known: tuple[int, ...]
    hexes: tuple[HexView, ...]
    clues: tuple[ClueView, ...]
    players: tuple[PlayerView, ...]
    supply: SupplyView
    turn: TurnView | None
    awaiting: tuple[int, ...]
    you: HandView | None
    ending: bool = False  # a seat has all three artifacts laid out: the game ends with this round
    scores: tuple[SeatScore, ...] | None = None
    winners: tuple[int, ...] | None = None


VIEWS = (HexView, ClueView, PlayerView, HandView, SupplyView, TurnView, KarawaneView)
