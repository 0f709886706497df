"""What each seat may see of Le marché de Samarkand, and of its history.

Public: who sells which type, how many cards each hand holds, who has chosen / answered, the market (revealed
cards, the face-up camel, the bank's card), the sizes of the camel and bank piles, the discard pile, bought goods
(unless the ``hidden_goods`` variant), every purchase, fine and dispute as it happens, and from the scoring on
everything (the screens are lifted). Secret to all but the owner: the hand's cards, the card chosen before the
reveal, the answer at the current value before it closes, money and camels (and goods in the variant) behind
the screen. Secret to everyone: the order of the camel and bank piles.
"""

from __future__ import annotations

from typing import Any

import msgspec

from contracts.samarkand import (
    Answered,
    BankDeckShuffled,
    CamelDeckShuffled,
    CardChosen,
    PlayerView,
    PrivateView,
    SamarkandView,
)
from domain.samarkand.rules import CHOOSING, COUNTDOWN, OVER, SCORING, State, awaiting

replace = msgspec.structs.replace


def view(state: State, seat: int | None) -> SamarkandView:
    lifted = state.phase in (SCORING, OVER)
    goods_public = lifted or not state.options.hidden_goods
    choosing = state.phase == CHOOSING
    players = []
    you = None
    for i, p in enumerate(state.players):
        own = i == seat
        show = own or lifted
        players.append(
            PlayerView(
                seat=i,
                sells=p.sells,
                hand_count=len(p.hand),
                has_chosen=choosing and p.chosen is not None,
                has_answered=p.answered,
                offer=p.offer,
                goods=p.goods if (own or goods_public) else None,
                money=p.money if show else None,
                camels=p.camels if show else None,
                discarded=p.discarded,
                least_bought=p.least_bought,
            )
        )
        if own:
            you = PrivateView(
                seat=i,
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
        awaiting=awaiting(state),
        players=tuple(players),
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
    return event
