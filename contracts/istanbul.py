"""Istanbul: Choose & Write: options, commands, events and views.

Identifiers are the data ids of ``domain.istanbul.data``: locations ``"1"``..``"14"`` and the palace letters
``"A"``..``"D"``; location cards ``0``..``39`` (``data.LOCATION_CARDS``), guild cards ``1``..``16``, caravan cards
``1``..``8``, ruby cards ``0``..``19``; goods types ``fabric spice fruit jewelry``; a goods card is named by its
face, its two goods in alphabetical order joined by ``/`` (``"fabric/spice"``). Lists a seat sends (goods, cards,
fills, upgrades) are in ascending order, so that each choice has exactly one spelling.

Tags are explicit and stable (``"istanbul.<Name>"``). Events are stored forever: a new field gets a default.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from contracts.base import Command, Event, View

Source = Literal["hand", "left", "right"]
Via = Literal["free", "icon", "bonus"]


class Options(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """Istanbul has no options yet (the player count chooses the sheet side and the setup).

    ``rules``: the revision of the rules the game is played under (``domain.kernel.rules_revision``). A new game gets
    its title's newest (the engine writes it into the CreateGame it stores, ``domain.table.newest_rules``); a game
    keeps its revision for good, so that its record re-runs as it was played. 1: the rules as the game landed,
    which every game stored before revisions plays (its options do not name one: 1 is left out of the encoding).
    Revision 2 (2026-11-26, a second reading of the solo rules): the display is refilled after the discarded card's
    use; the left card is discarded after the turn's end of the action."""

    rules: int = 1


class Action(msgspec.Struct, frozen=True):
    """One use of a location, of a guild card or of the face-up caravan card, with every choice it needs.

    - ``location``: the location used (the played one or one adjacent to it); None for a guild card.
    - ``via``: ``free`` (the active seat), ``icon`` (cross one action icon of ``location``) or ``bonus``
      (cross one filled bonus action).
    - ``target``: the Catacombs (12) only: the location whose action is done (its icon is not crossed).
    - ``letter``: the palace letter, where the effect lets the seat choose one (a caravan or guild card).
    - ``goods``: goods of choice, gained or spent as the effect says (the Great Market: the type spent twice).
    - ``cards``: goods cards spent to pay goods (each must pay at least one of them; the surplus is lost).
    - ``discard``: the goods card discarded whole (Small Market, guild cards 11 and 13).
    - ``fill``: boxes filled by "fill 1 box": ``lira``, ``bonus`` or a goods type.
    - ``upgrades``: locations upgraded (1, 5, 8, 10, 14).
    """

    location: str | None = None
    via: Via = "free"
    target: str | None = None
    letter: str | None = None
    goods: tuple[str, ...] = ()
    cards: tuple[str, ...] = ()
    discard: str | None = None
    fill: tuple[str, ...] = ()
    upgrades: tuple[str, ...] = ()


# --- commands -------------------------------------------------------------------------------------------

class PlayLocation(Command, tag="istanbul.PlayLocation"):
    """The active seat plays its hand's location card or one of the two face-up ones."""

    source: Source


class PlayGuild(Command, tag="istanbul.PlayGuild"):
    """The active seat pays a guild card's cost in lira; it alone then uses the card (``Act``)."""

    card: int


class Act(Command, tag="istanbul.Act"):
    """Use the played location (or an adjacent one), or the played guild card: see ``Action``."""

    location: str | None = None
    via: Via = "free"
    target: str | None = None
    letter: str | None = None
    goods: tuple[str, ...] = ()
    cards: tuple[str, ...] = ()
    discard: str | None = None
    fill: tuple[str, ...] = ()
    upgrades: tuple[str, ...] = ()


class TakeBonus(Command, tag="istanbul.TakeBonus"):
    """Do not use the played location card: gain one bonus action instead."""


class KeepGuild(Command, tag="istanbul.KeepGuild"):
    """Caravan card 4: keep one of the two guild cards drawn, discard the other."""

    card: int


class Draw(Command, tag="istanbul.Draw"):
    """After playing the hand's card: take one of the two face-up location cards or the deck's top card."""

    source: Literal["left", "right", "deck"]


class ChooseFountain(Command, tag="istanbul.ChooseFountain"):
    """A fountain giving a choice: the good of choice, or the location upgraded."""

    good: str | None = None
    upgrade: str | None = None


COMMANDS = (PlayLocation, PlayGuild, Act, TakeBonus, KeepGuild, Draw, ChooseFountain)


# --- events ---------------------------------------------------------------------------------------------

class SheetsPrepared(Event, tag="istanbul.SheetsPrepared"):
    """Each seat takes a sheet on ``side``; the 3-player icons (1-2 players) or the 5-player bonus box (4 players)
    are crossed."""

    side: str
    thick_icons_crossed: bool
    thick_bonus_crossed: bool


class DeckShuffled(Event, tag="istanbul.DeckShuffled"):
    """A deck of card ids, top first: ``location``, ``guild``, ``caravan`` or ``ruby``. The order is secret to
    everyone (``redact`` gives None). A guild deck shuffled during play is made of its discard pile."""

    deck: str
    order: tuple[int, ...] | None
    size: int


class GoodsDeckShuffled(Event, tag="istanbul.GoodsDeckShuffled"):
    """The goods deck, by face, top first (secret; made of the discard pile during play)."""

    order: tuple[str, ...] | None
    size: int


class RubyCardPlaced(Event, tag="istanbul.RubyCardPlaced"):
    """The ruby deck's top card goes to ``letter``: in front at setup, tucked under (one more good) after a ruby
    was taken there."""

    letter: str
    card: int
    tucked: bool = False


class CaravanTurned(Event, tag="istanbul.CaravanTurned"):
    card: int


class CaravanReturned(Event, tag="istanbul.CaravanReturned"):
    """The face-up caravan card used this turn goes under its deck, face down."""

    card: int


class LocationRevealed(Event, tag="istanbul.LocationRevealed"):
    """The location deck's top card goes face up to the display, on the ``left`` or the ``right``."""

    card: int
    slot: str


class FountainRevealed(Event, tag="istanbul.FountainRevealed"):
    """A fountain came off the location deck: discarded, every seat gets ``reward``."""

    card: int
    reward: str


class FountainTaken(Event, tag="istanbul.FountainTaken"):
    """One seat's part of a fountain: 1 lira, 1 good (``good``) or 1 upgrade (``upgrade``; None when every
    square is crossed already). The goods-card fountain is a ``GoodsCardDrawn``."""

    seat: int
    reward: str
    good: str | None = None
    upgrade: str | None = None


class LocationDealt(Event, tag="istanbul.LocationDealt"):
    """The location deck's top card to a seat's hand: only that seat sees ``card``."""

    seat: int
    card: int | None


class DeckDraw(Event, tag="istanbul.DeckDraw"):
    """The active seat draws from the location deck: the card follows (``LocationDealt``), after any fountain."""

    seat: int


class FirstPlayerChosen(Event, tag="istanbul.FirstPlayerChosen"):
    seat: int


class TurnStarted(Event, tag="istanbul.TurnStarted"):
    seat: int
    round: int


class LocationPlayed(Event, tag="istanbul.LocationPlayed"):
    seat: int
    source: str
    card: int


class GuildPlayed(Event, tag="istanbul.GuildPlayed"):
    seat: int
    card: int
    cost: int


class Answered(Event, tag="istanbul.Answered"):
    """A seat's answer to the played card, secret until every awaited seat answered: others see only that it
    answered (``action`` and ``bonus`` None)."""

    seat: int
    action: Action | None
    bonus: bool | None


class Acted(Event, tag="istanbul.Acted"):
    """A seat's action, resolved (clockwise from the active seat). ``effect``: what was done, ``loc:<id>``,
    ``caravan:<id>`` or ``guild:<id>``."""

    seat: int
    action: Action
    effect: str


class BonusTaken(Event, tag="istanbul.BonusTaken"):
    """A seat did not use the played card: one bonus action filled (``gained`` False: its section is full)."""

    seat: int
    gained: bool


class GuildDrawn(Event, tag="istanbul.GuildDrawn"):
    """The guild deck's top card to a seat: only that seat sees ``card``. ``to_keep``: one of the two cards of
    caravan card 4, to choose from (``KeepGuild``)."""

    seat: int
    card: int | None
    to_keep: bool = False


class GuildKept(Event, tag="istanbul.GuildKept"):
    """Caravan card 4: the discarded card is public, the kept one only to its seat."""

    seat: int
    kept: int | None
    discarded: int


class GoodsCardDrawn(Event, tag="istanbul.GoodsCardDrawn"):
    """The goods deck's top card to a seat: only that seat sees ``card`` (its face)."""

    seat: int
    card: str | None


class BonusRuby(Event, tag="istanbul.BonusRuby"):
    """A ruby bonus ticked: ``lira-1``/``lira-2`` (a lira section completed) or ``goods-5``..``goods-8`` (that
    column filled in all four goods rows)."""

    seat: int
    bonus: str


class LocationTaken(Event, tag="istanbul.LocationTaken"):
    """The active seat took a face-up location card into its hand."""

    seat: int
    slot: str
    card: int


class SoloCardDiscarded(Event, tag="istanbul.SoloCardDiscarded", omit_defaults=True):
    """Solo: after the turn the left display card is discarded; the player may use it as an opponent would.

    ``after_turn``: the turn's ruby cards were tucked and its caravan card returned before this discard, so the
    use of this card tucks and returns its own afterwards. False in games stored before that correction, where the
    turn's and the use's were settled together after the use; omitted when False, so that their payloads encode
    as they were stored (and hashed)."""

    card: int
    after_turn: bool = False


class SeatScore(msgspec.Struct, frozen=True):
    rubies: int
    tiebreak: int  # filled boxes not crossed, plus the goods on the goods cards in hand


class GameOver(Event, tag="istanbul.GameOver"):
    """``reason``: ``rubies`` (the round of the 10th ruby ended), ``display`` (it could not be refilled) or
    ``deck`` (a seat could not draw). Solo: ``challenges`` met in ``column`` (10, 11 or 12 rubies)."""

    reason: str
    scores: tuple[SeatScore, ...]
    winners: tuple[int, ...]
    challenges: tuple[int, ...] = ()
    column: int | None = None


EVENTS = (
    SheetsPrepared,
    DeckShuffled,
    GoodsDeckShuffled,
    RubyCardPlaced,
    CaravanTurned,
    CaravanReturned,
    LocationRevealed,
    FountainRevealed,
    FountainTaken,
    LocationDealt,
    DeckDraw,
    FirstPlayerChosen,
    TurnStarted,
    LocationPlayed,
    GuildPlayed,
    Answered,
    Acted,
    BonusTaken,
    GuildDrawn,
    GuildKept,
    GoodsCardDrawn,
    BonusRuby,
    LocationTaken,
    SoloCardDiscarded,
    GameOver,
)


# --- views ----------------------------------------------------------------------------------------------

class SheetView(View, tag="istanbul.SheetView"):
    """One seat's sheet (public) and how many cards it holds. Goods by type in ``data.GOODS`` order; icons and
    upgrades by location id."""

    seat: int
    first: bool
    rubies: int
    lira_filled: int
    lira_crossed: int
    goods_filled: tuple[int, ...]
    goods_crossed: tuple[int, ...]
    bonus_filled: int
    bonus_crossed: int
    bonus_boxes: int
    icons_crossed: dict[str, int]
    upgrades: dict[str, int]
    ruby_bonuses: tuple[str, ...]
    hand: int
    guild_cards: int
    goods_cards: int
    answered: bool


class PrivateView(View, tag="istanbul.PrivateView"):
    seat: int
    hand: tuple[int, ...]  # location card ids
    hand_locations: tuple[str, ...]
    guild_cards: tuple[int, ...]
    goods_cards: tuple[str, ...]
    answer: Action | None  # its answer this turn, before the turn resolves
    took_bonus: bool
    keep: tuple[int, ...]  # caravan card 4: the two guild cards to choose from


class PalaceView(View, tag="istanbul.PalaceView"):
    letter: str
    cards: tuple[int, ...]  # front first
    price: tuple[str, ...]  # the goods to spend for a ruby


class IstanbulView(View, tag="istanbul.IstanbulView"):
    seat: int | None
    phase: str
    round: int
    active: int | None
    first: int | None
    side: str
    played: int | None  # the location card played this turn
    guild_played: int | None
    display: tuple[int, ...]  # left to right
    display_locations: tuple[str, ...]
    palace: tuple[PalaceView, ...]
    caravan: int | None
    fountain: str | None  # a fountain waiting for choices
    location_deck: int
    location_discard: tuple[int, ...]
    guild_deck: int
    guild_discard: tuple[int, ...]
    goods_deck: int
    goods_discard: tuple[str, ...]
    ruby_deck: int
    awaiting: tuple[int, ...]
    players: tuple[SheetView, ...]
    you: PrivateView | None
    scores: tuple[SeatScore, ...] | None = None
    winners: tuple[int, ...] | None = None
    challenges: tuple[int, ...] = ()
    column: int | None = None


VIEWS = (SheetView, PrivateView, PalaceView, IstanbulView)
