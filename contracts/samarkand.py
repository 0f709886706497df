"""Le marché de Samarkand: options, commands, events and views.

Tags are explicit and stable (``"samarkand.CardChosen"``). Events are stored forever: a new field gets a
default, a changed meaning gets a new event type.

A *target* on the market is named by who sells it: a seat number for that seat's revealed card, ``"bank"`` for
the bank's goods card (3 players only), ``"camel"`` for the face-up camel card.

``hidden_goods`` on the events that settle a value of the countdown (``ValueClosed``, the purchases, fines and
disputes): the game plays the hidden-goods variant, so in the history (``redact``) these events name a seat
(who stopped, bought, was fined, disputed) only to that seat itself; to every other reader that seat is left out
of a list or shown as None. The events are stored whole; ``False`` (the default, and every event written before
the flag) names everyone to everyone.
"""

from __future__ import annotations

from typing import Literal, Union

import msgspec

from contracts.base import Command, Event, View

Target = Union[int, Literal["bank", "camel"]]


class Options(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    countdown_mode: Literal["stepwise", "realtime"] = "stepwise"
    countdown_interval_ms: int = 1500  # real-time mode only: how long each value of the countdown is shown
    hidden_goods: bool = False  # the variant: bought goods go behind the screen too


class Goods(msgspec.Struct, frozen=True):
    """One goods card: its type (``"jewels"``) and its value (1 to 7)."""

    kind: str
    value: int


class StopCall(msgspec.Struct, frozen=True):
    """A "stop!" as revealed when the value closes: who called it and which card it designated."""

    seat: int
    target: Target


class SeatScore(msgspec.Struct, frozen=True):
    """One seat's final scoring, line by line."""

    money: int
    wealth: int
    least_bought_kind: str | None  # the type counted as least bought (None: a type was never bought)
    least_bought: int
    series: int
    capacity: int
    goods_kept: int
    capacity_penalty: int  # <= 0
    discarded: tuple[Goods, ...]
    total: int


# --- commands -------------------------------------------------------------------------------------------

class ChooseCard(Command, tag="samarkand.ChooseCard"):
    """Put one card of one's hand up for sale this round, face down (named by its value)."""

    value: int


class Pass(Command, tag="samarkand.Pass"):
    """Let the countdown go on past the current value (stepwise mode only: in real time a seat lets the value run
    out, ``no_pass_in_realtime``)."""


class Stop(Command, tag="samarkand.Stop"):
    """Call "stop!" at the current value and designate the card to buy at that price."""

    target: Target


class DiscardGoods(Command, tag="samarkand.DiscardGoods"):
    """At scoring, leave behind one goods card the camels cannot carry."""

    kind: str
    value: int


class ChooseLeastBought(Command, tag="samarkand.ChooseLeastBought"):
    """At scoring, on a tie, choose which of the least-bought types is counted."""

    kind: str


COMMANDS = (ChooseCard, Pass, Stop, DiscardGoods, ChooseLeastBought)


# --- events ---------------------------------------------------------------------------------------------

class MarketSetUp(Event, tag="samarkand.MarketSetUp"):
    """Each seat receives all the cards of one type and its money; the first dean is named."""

    goods: tuple[str, ...]  # per seat, the type it sells
    bank_goods: str | None  # 3 players: the type the bank sells
    hand: tuple[int, ...]  # the values of every seller's ten cards
    money: int
    dean: int


class CamelDeckShuffled(Event, tag="samarkand.CamelDeckShuffled"):
    """The camel pile, top first. The order is secret to everyone: ``redact`` replaces it with None."""

    order: tuple[int, ...] | None
    size: int


class BankDeckShuffled(Event, tag="samarkand.BankDeckShuffled"):
    """3 players: the bank's goods pile, top first (secret, like the camels)."""

    order: tuple[int, ...] | None
    size: int


class RoundStarted(Event, tag="samarkand.RoundStarted"):
    round: int
    dean: int


class CamelTurned(Event, tag="samarkand.CamelTurned"):
    capacity: int


class BankCardTurned(Event, tag="samarkand.BankCardTurned"):
    value: int


class CardChosen(Event, tag="samarkand.CardChosen"):
    """A seat put a card face down. ``value`` is seen only by that seat until the reveal."""

    seat: int
    value: int | None


class CardsRevealed(Event, tag="samarkand.CardsRevealed"):
    """Every seat's chosen card, by seat; the countdown starts."""

    values: tuple[int, ...]
    start: int = 10


class Answered(Event, tag="samarkand.Answered"):
    """A seat answered at a value of the countdown. Whether it stopped, and on what, is seen only by that seat
    until the value closes (stops at one value are simultaneous). In the real-time countdown every answer is a
    stop, recorded when it arrives and settled when the value's time runs out."""

    seat: int
    value: int
    stop: bool | None
    target: Target | None = None


class ValueClosed(Event, tag="samarkand.ValueClosed"):
    """Everyone eligible answered: the stops are revealed; the countdown goes on at the value just below (after 1
    it reaches 0: the round ends). With ``hidden_goods`` each reader sees its own stop only."""

    value: int
    stops: tuple[StopCall, ...] = ()
    hidden_goods: bool = False


class GoodsBought(Event, tag="samarkand.GoodsBought"):
    """With ``hidden_goods`` only the buyer sees ``buyer``, and each disputant itself among ``disputants``."""

    buyer: int | None  # None: hidden from this reader (hidden-goods variant)
    seller: int | None  # None: the bank
    kind: str
    value: int
    price: int
    disputants: tuple[int, ...] = ()  # not empty: a dispute the dean won
    hidden_goods: bool = False


class CamelBought(Event, tag="samarkand.CamelBought"):
    """Hidden like ``GoodsBought`` in the hidden-goods variant (naming the camel's buyer would tell, by
    elimination, who bought the goods at the same value)."""

    buyer: int | None  # None: hidden from this reader (hidden-goods variant)
    capacity: int
    price: int
    disputants: tuple[int, ...] = ()
    hidden_goods: bool = False


class StopFined(Event, tag="samarkand.StopFined"):
    """A stop the seat could not pay: it pays the fine (at most what it has) to the bank. With ``hidden_goods``
    the others see only that some seat was fined at ``price``: ``seat``, ``target`` and ``amount`` are None."""

    seat: int | None
    target: Target | None
    price: int
    amount: int | None
    hidden_goods: bool = False


class GoodsDisputed(Event, tag="samarkand.GoodsDisputed"):
    """A dispute without the dean: the card is discarded, each disputant pays ``payment`` to the seller."""

    seats: tuple[int, ...]  # who paid; with ``hidden_goods`` each reader sees itself only
    seller: int | None
    kind: str
    value: int
    price: int
    payment: int
    hidden_goods: bool = False


class CamelDisputed(Event, tag="samarkand.CamelDisputed"):
    """A dispute over the camel: it goes back into its pile (then shuffled), each disputant pays the bank."""

    seats: tuple[int, ...]  # who paid; with ``hidden_goods`` each reader sees itself only
    capacity: int
    price: int
    payment: int
    hidden_goods: bool = False


class RoundEnded(Event, tag="samarkand.RoundEnded"):
    round: int
    discarded: tuple[Goods, ...] = ()


class ScoringStarted(Event, tag="samarkand.ScoringStarted"):
    """After the tenth round: the screens are lifted (money, camels and goods become public)."""


class GoodsDiscarded(Event, tag="samarkand.GoodsDiscarded"):
    seat: int
    kind: str
    value: int


class LeastBoughtChosen(Event, tag="samarkand.LeastBoughtChosen"):
    seat: int
    kind: str


class GameScored(Event, tag="samarkand.GameScored"):
    scores: tuple[int, ...]
    winners: tuple[int, ...]
    details: tuple[SeatScore, ...]


EVENTS = (
    MarketSetUp,
    CamelDeckShuffled,
    BankDeckShuffled,
    RoundStarted,
    CamelTurned,
    BankCardTurned,
    CardChosen,
    CardsRevealed,
    Answered,
    ValueClosed,
    GoodsBought,
    CamelBought,
    StopFined,
    GoodsDisputed,
    CamelDisputed,
    RoundEnded,
    ScoringStarted,
    GoodsDiscarded,
    LeastBoughtChosen,
    GameScored,
)


# --- views ----------------------------------------------------------------------------------------------

class PlayerView(View, tag="samarkand.PlayerView"):
    """One seat as the viewer sees it. ``None`` means hidden behind that seat's screen."""

    seat: int
    sells: str
    hand_count: int
    has_chosen: bool  # choosing phase: the seat put its card face down
    has_answered: bool  # countdown: the seat answered at the current value
    offer: int | None  # its revealed card still on the market
    goods: tuple[Goods, ...] | None  # None: hidden (variant), except to its owner and after the game
    money: int | None
    camels: tuple[int, ...] | None
    discarded: tuple[Goods, ...] = ()  # left behind at scoring
    least_bought: str | None = None  # chosen at scoring


class PrivateView(View, tag="samarkand.PrivateView"):
    """What only the viewing seat knows."""

    seat: int
    hand: tuple[int, ...]
    chosen: int | None
    answered: bool
    stop: bool | None  # its answer at the current value (None: not answered yet)
    target: Target | None


class SamarkandView(View, tag="samarkand.SamarkandView"):
    seat: int | None  # the viewer (None: a spectator)
    phase: str
    round: int
    dean: int
    value: int | None  # the countdown's current value (None outside the countdown)
    awaiting: tuple[int, ...]
    players: tuple[PlayerView, ...]
    bank_goods: str | None
    bank_offer: int | None
    bank_pile: int  # cards left in the bank's pile (3 players)
    camel_up: int | None  # the face-up camel card
    camel_pile: int  # cards left in the camel pile (order secret)
    discard: tuple[Goods, ...]  # goods out of the game (unsold, disputed)
    you: PrivateView | None
    scores: tuple[int, ...] | None = None
    winners: tuple[int, ...] | None = None
    details: tuple[SeatScore, ...] | None = None


VIEWS = (PlayerView, PrivateView, SamarkandView)
