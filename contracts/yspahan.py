"""Yspahan's contracts: options, commands a seat may send, events the game stores, views it serves.

Identifiers are the data ids of ``domain.yspahan.data``: floors ``camels bag barrel chest vase gold``,
shops ``"BAG-3.1"`` (quarter, souk size, shop number), road squares ``"C" "W1".."W10" "E1".."E7" "N1".."N4"
"S1".."S7"``, cards and buildings as in the ``Card`` and ``Building`` literals below.
Tags are explicit and stable (``"yspahan.<Name>"``); never derived from a class name.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from contracts.base import Command, Event, View

Floor = Literal["camels", "bag", "barrel", "chest", "vase", "gold"]
Action = Literal["floor", "supervisor", "card", "build"]
Card = Literal[
    "take_camels",  # take 3 camels
    "place_cube",  # put a reserve cube on any shop (souk rules apply)
    "sell_camels",  # return up to 4 camels, 2 points each
    "build_gold_only",  # build one building paying only its gold
    "exchange",  # gold for camels or camels for gold, one for one
    "take_gold",  # take 3 gold
    "caravan_cube",  # a reserve cube onto the caravan (no Caravanserai draw)
    "sell_gold",  # return up to 10 gold, 1 point each
    "build_camels_only",  # build one building paying only its camels
]
Building = Literal["pen", "stall", "hammam", "caravanserai", "bazaar", "crane"]
Resource = Literal["gold", "camels"]


class Options(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Choices the rulebook leaves open; see docs/rules-decisions.md (Yspahan)."""

    # camels per caravan row with 2 players (the 2-player text is silent; 4 = the 4-player caravan, DATA.md)
    caravan_width_2p: int = 4
    # each colour has about 25 cubes; one marks the score track, the rest are goods
    cubes_per_player: int = 24
    # the wooden gold coins and camels in the box (about 25 each); players' starting gold comes from them
    gold_in_box: int = 25
    camels_in_box: int = 25


# --- commands -------------------------------------------------------------------------------------------


class RollDice(Command, tag="yspahan.RollDice"):
    """The first player buys 0 to 3 yellow dice (1 gold each) and rolls them with the white dice."""

    yellow: int = 0


class SelectDice(Command, tag="yspahan.SelectDice"):
    """Take a dice group from the tower for one of its actions.

    ``floor`` None: no group is left for the seat, so it draws a card (``action="card"``), or with 2 players
    builds instead (``action="build"``). ``discard``: a card discarded for one more die (floor action only).
    """

    floor: Floor | None
    action: Action
    discard: Card | None = None


class PlaceCube(Command, tag="yspahan.PlaceCube"):
    shop: str


class MoveSupervisor(Command, tag="yspahan.MoveSupervisor"):
    square: str


class ShipCube(Command, tag="yspahan.ShipCube"):
    """The mover picks which of the two shops facing the supervisor ships first."""

    shop: str


class KeepCube(Command, tag="yspahan.KeepCube"):
    """The cube's owner discards a camel: the cube stays in its shop and a reserve cube ships instead."""


class LetCubeGo(Command, tag="yspahan.LetCubeGo"):
    """The cube's owner lets the shop's cube go to the caravan."""


class Build(Command, tag="yspahan.Build"):
    """Build one building; ``card`` ``build_gold_only`` / ``build_camels_only`` waives its camels / gold."""

    building: Building
    card: Card | None = None


class PlayCard(Command, tag="yspahan.PlayCard"):
    """Play a card for its effect (not a build card: those are played through ``Build``).

    ``shop`` for ``place_cube``; ``count`` for ``sell_camels``, ``sell_gold`` and ``exchange``;
    ``give`` for ``exchange`` (what goes back to the supply).
    """

    card: Card
    shop: str | None = None
    count: int = 0
    give: Resource | None = None


class EndTurn(Command, tag="yspahan.EndTurn"):
    pass


# --- events ---------------------------------------------------------------------------------------------


class DeckShuffled(Event, tag="yspahan.DeckShuffled"):
    """A new draw pile, top first (the discards when the pile ran out). Redacted: ``order`` is empty."""

    order: tuple[Card, ...]
    size: int


class DayBegan(Event, tag="yspahan.DayBegan"):
    week: int
    day: int
    order: tuple[int, ...]  # the seats' turns this day; the first rolls the dice


class DiceRolled(Event, tag="yspahan.DiceRolled"):
    seat: int
    white: tuple[int, ...]
    yellow: tuple[int, ...]  # bought for 1 gold each


class DiceSelected(Event, tag="yspahan.DiceSelected"):
    seat: int
    floor: Floor | None
    action: Action
    discard: Card | None = None
    dice: int = 0  # dice the seat counts (with the discarded card's die)
    value: int = 0  # the group's value


class CamelsTaken(Event, tag="yspahan.CamelsTaken"):
    seat: int
    count: int


class GoldTaken(Event, tag="yspahan.GoldTaken"):
    seat: int
    count: int


class PlacementBegan(Event, tag="yspahan.PlacementBegan"):
    seat: int
    quarter: Floor
    cubes: int  # cubes the seat may place (dice, card, Crane), at most its reserve


class CubePlaced(Event, tag="yspahan.CubePlaced"):
    seat: int
    shop: str
    by_card: bool = False


class SupervisorMoved(Event, tag="yspahan.SupervisorMoved"):
    seat: int
    square: str
    gold: int  # paid to adjust the move


class ShipmentChosen(Event, tag="yspahan.ShipmentChosen"):
    seat: int  # the mover
    shop: str


class CubeShipped(Event, tag="yspahan.CubeShipped"):
    """A cube of ``seat`` enters the caravan. ``shop`` None: by the caravan card, from the reserve."""

    seat: int
    shop: str | None
    camel: bool  # the owner discarded a camel: the shop's cube stayed, a reserve cube went
    points: int


class CardDrawn(Event, tag="yspahan.CardDrawn"):
    """Redacted for the other seats: ``card`` None."""

    seat: int
    card: Card | None


class CardPlayed(Event, tag="yspahan.CardPlayed"):
    seat: int
    card: Card


class GoodsSold(Event, tag="yspahan.GoodsSold"):
    seat: int
    camels: int
    gold: int
    points: int


class GoodsExchanged(Event, tag="yspahan.GoodsExchanged"):
    seat: int
    give: Resource
    count: int


class BuildingBuilt(Event, tag="yspahan.BuildingBuilt"):
    seat: int
    building: Building
    camels: int  # paid
    gold: int  # paid
    points: int


class ActionEnded(Event, tag="yspahan.ActionEnded"):
    seat: int


class TurnEnded(Event, tag="yspahan.TurnEnded"):
    seat: int


class SoukCompleted(msgspec.Struct, frozen=True):
    souk: str
    seat: int
    points: int  # with the Bazaar bonus


class SouksScored(Event, tag="yspahan.SouksScored"):
    """Week end: complete souks score, then every quarter is emptied."""

    completed: tuple[SoukCompleted, ...]
    points: tuple[int, ...]  # per seat


class CaravanScored(Event, tag="yspahan.CaravanScored"):
    points: tuple[int, ...]  # per seat
    emptied: bool  # True when it was full; False at a week end


class WeekEnded(Event, tag="yspahan.WeekEnded"):
    week: int


COMMANDS = (RollDice, SelectDice, PlaceCube, MoveSupervisor, ShipCube, KeepCube, LetCubeGo, Build, PlayCard, EndTurn)
EVENTS = (
    DeckShuffled,
    DayBegan,
    DiceRolled,
    DiceSelected,
    CamelsTaken,
    GoldTaken,
    PlacementBegan,
    CubePlaced,
    SupervisorMoved,
    ShipmentChosen,
    CubeShipped,
    CardDrawn,
    CardPlayed,
    GoodsSold,
    GoodsExchanged,
    BuildingBuilt,
    ActionEnded,
    TurnEnded,
    SouksScored,
    CaravanScored,
    WeekEnded,
)


# --- views ----------------------------------------------------------------------------------------------


class FloorView(View, tag="yspahan.FloorView"):
    floor: Floor
    value: int  # 0: empty
    white: int
    yellow: int


class PlayerView(View, tag="yspahan.PlayerView"):
    seat: int
    score: int
    gold: int
    camels: int
    reserve: int  # cubes not on the board, the caravan or a building
    buildings: tuple[Building, ...]  # in the order built
    hand_size: int


class ShopView(View, tag="yspahan.ShopView"):
    shop: str
    seat: int


class PendingView(View, tag="yspahan.PendingView"):
    """What the current action still waits for."""

    quarter: Floor | None = None
    cubes_left: int = 0
    move_value: int = 0
    shops_to_ship: tuple[str, ...] = ()
    shipping: str | None = None  # the shop whose owner decides now


class YspahanView(View, tag="yspahan.YspahanView"):
    seat: int | None  # None: a spectator
    phase: str
    week: int
    day: int
    order: tuple[int, ...]
    turn_seat: int | None
    awaiting: tuple[int, ...]
    tower: tuple[FloorView, ...]
    supervisor: str
    shops: tuple[ShopView, ...]  # occupied shops only
    caravan: tuple[int, ...]  # seats, in the caravan's order
    caravan_capacity: int
    caravan_width: int
    players: tuple[PlayerView, ...]
    hand: tuple[Card, ...] | None  # the viewer's own cards; None for a spectator
    deck_size: int
    discard: tuple[Card, ...]
    gold_supply: int
    camel_supply: int
    built_this_turn: bool
    pending: PendingView
    over: bool

VIEWS = (FloorView, PlayerView, ShopView, PendingView, YspahanView)
