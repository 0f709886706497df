"""What each seat may see of Le marché de Samarkand, and of its history.

Public: who sells which type, how many cards each hand holds, who has chosen / answered, the market (revealed
cards, the face-up camel, the bank's card), the sizes of the camel and bank piles, the discard pile, bought goods
(unless the ``hidden_goods`` variant), every purchase, fine and dispute as it happens (in the variant: what
happened to each card, but not who stopped, bought, was fined or disputed), and from the scoring on everything
(the screens are lifted). Secret to all but the owner: the hand's cards, the card chosen before the reveal, the
answer at the current value before it closes, money and camels (and goods in the variant) behind the screen,
and in the variant one's part in each settlement. Secret to everyone: the order of the camel and bank piles.
"""

from __future__ import annotations

from typing import Any

import msgspec

from contracts.samarkand import (
    Answered,
    BankDeckShuffled,
    CamelBought,
    CamelDeckShuffled,
    CamelDisputed,
    CardChosen,
    GoodsBought,
    GoodsDisputed,
    PlayerView,
    PrivateView,
    SamarkandView,
    StopFined,
    ValueClosed,
)
from domain.samarkand.rules import CHOOSING, COUNTDOWN, OVER, SCORING, State, awaiting

replace = msgspec.structs.replace


def view(state: State, seat: int | None) -> SamarkandView:
    return _personal(state, seat, _Public(state))


def views(state: State) -> dict[int | None, SamarkandView]:
    """Every seat's view, then the spectator's: what they share is built once."""
    public = _Public(state)
    return {seat: _personal(state, seat, public) for seat in (*range(state.seats), None)}


class _Public:
    """What every seat sees alike: the players as others see them, the market, the piles."""

    __slots__ = ("lifted", "players", "awaiting")

    def __init__(self, state: State) -> None:
        self.lifted = state.phase in (SCORING, OVER)
        goods_public = self.lifted or not state.options.hidden_goods
        choosing = state.phase == CHOOSING
        self.awaiting = awaiting(state)
        self.players = tuple(
            PlayerView(
                seat=i,
                sells=p.sells,
                hand_count=len(p.hand),
                has_chosen=choosing and p.chosen is not None,
                has_answered=p.answered,
                offer=p.offer,
                goods=p.goods if goods_public else None,
                money=p.money if self.lifted else None,
                camels=p.camels if self.lifted else None,
                discarded=p.discarded,
                least_bought=p.least_bought,
            )
            for i, p in enumerate(state.players)
        )


def _personal(state: State, seat: int | None, public: _Public) -> SamarkandView:
    players, you = public.players, None
    if seat is not None:
        p = state.players[seat]
        if not public.lifted:  # behind the screen: only its owner sees money and camels (goods too in the hidden-goods variant)
            mine = replace(players[seat], goods=p.goods, money=p.money, camels=p.camels)
            players = (*players[:seat], mine, *players[seat + 1:])
        you = PrivateView(
            seat=seat,
            hand=p.hand,
            chosen=p.chosen,
            answered=p.answered,
            stop=(p.stop is not None) if p.answered else None,
            target=p.stop,
        )
    return SamarkandView(
        seat=seat,
        phase=state.phase,
        round=state.round,
        dean=state.dean,
        value=state.value if state.phase == COUNTDOWN else None,
        awaiting=public.awaiting,
        players=players,
        bank_goods=state.bank_goods,
        bank_offer=state.bank_offer,
        bank_pile=len(state.bank_pile),
        camel_up=state.camel_up,
        camel_pile=len(state.camel_pile),
        discard=state.discard,
        you=you,
        scores=state.scores,
        winners=state.winners,
        details=state.details,
    )


def redact(event: Any, seat: int | None) -> Any:
    kind = type(event)
    if kind is CardChosen:
        return event if seat == event.seat else replace(event, value=None)
    if kind is Answered:
        return event if seat == event.seat else replace(event, stop=None, target=None)
    if kind is CamelDeckShuffled or kind is BankDeckShuffled:
        return replace(event, order=None)
    if kind in _SETTLEMENTS and event.hidden_goods:
        return _behind_screens(event, seat)
    return event


_SETTLEMENTS = frozenset({ValueClosed, GoodsBought, CamelBought, StopFined, GoodsDisputed, CamelDisputed})


def _behind_screens(event: Any, seat: int | None) -> Any:
    """The hidden-goods variant: a settlement names a seat only to that seat itself, so that no reader can tell
    who bought which goods (docs/rules-decisions.md). The event itself when it hides nothing from ``seat``."""
    kind = type(event)
    if kind is ValueClosed:
        stops = tuple(call for call in event.stops if call.seat == seat)
        return event if stops == event.stops else replace(event, stops=stops)
    if kind is StopFined:
        return event if seat == event.seat else replace(event, seat=None, target=None, amount=None)
    if kind is GoodsBought or kind is CamelBought:
        disputants = tuple(s for s in event.disputants if s == seat)
        if seat == event.buyer:
            return event if disputants == event.disputants else replace(event, disputants=disputants)
        return replace(event, buyer=None, disputants=disputants)
    seats = tuple(s for s in event.seats if s == seat)  # GoodsDisputed, CamelDisputed
    return event if seats == event.seats else replace(event, seats=seats)
