"""Le marché de Samarkand for bots: how good a position looks to a seat (``evaluate``) and a world it cannot tell
from the true one (``determinize``). Pure; the kernel's optional hooks of the same names (``services.bots``).

What a seat does not know (``views``): the order of the camel and bank piles, the card another seat chose before
the reveal, another seat's stop at the current value before it closes. The other hands, money, camels and goods
bought it could have written down from the public history (every seat starts with the same hand and money, every
card played is revealed, every purchase, fine and dispute is public); in the ``hidden_goods`` variant the settlements
are not, and this draw keeps them as they are (a bot there knows the others' goods: a limitation, said in the
README).
"""

from __future__ import annotations

import math
import random
from itertools import combinations
from typing import Any

import msgspec

from domain.samarkand import data
from domain.samarkand.rules import CHOOSING, COUNTDOWN, SCORING, State, kinds_in_play, score, wealth_points

replace = msgspec.structs.replace


def evaluate(state: State, seat: int) -> float:
    """The seat's score if the game ended now (``rules.score``: wealth by money, the least-bought type, series,
    the empty slots of its camels), less the best other seat's."""
    if state.scores is not None:
        totals = state.scores
    elif not state.players:
        return 0.0
    else:
        totals = tuple(s.total for s in score(state))
    others = [t for i, t in enumerate(totals) if i != seat]
    return float(totals[seat] - (max(others) if others else 0))


def determinize(state: State, seat: int, rng: random.Random) -> State:
    """``state`` with what ``seat`` has not seen drawn again with ``rng``: the camel and bank piles reshuffled, and
    every other seat's choice not revealed yet (a card chosen face down, a stop at the current value) taken back,
    so that the seat chooses again in the simulation. Built only from what the seat knows: two states it cannot
    tell apart give the same result for the same ``rng``."""
    camels = sorted(state.camel_pile)
    rng.shuffle(camels)
    bank = sorted(state.bank_pile)
    rng.shuffle(bank)
    players = tuple(p if i == seat else replace(p, chosen=None, answered=False, stop=None)
                    if (p.chosen is not None or p.answered) else p
                    for i, p in enumerate(state.players))
    return replace(state, camel_pile=tuple(camels), bank_pile=tuple(bank), players=players)


def from_view(view: Any, seat: int, seats: int, options: Any, rng: random.Random) -> State:
    """A state consistent with everything ``view`` (``seat``'s ``SamarkandView``) shows, what it does not show
    drawn with ``rng``: another hand is its seller's cards not seen played (every seat starts with the same values;
    a card played shows on the market, in someone's goods or the discard), cut to its size at random when the
    hidden-goods variant hides some; a card chosen face down one of that hand; an answer at the current value a
    pass; the camels behind the other screens and in the pile drawn from the camel cards not seen (the pile keeps
    its size); the bank's pile from its values not seen; another seat's money behind its screen taken as the
    seat's own (it is not shown; nothing the seat may do depends on it). ``view(state, seat) == view``. A remote
    bot (``services.client.remote_bot``) holds nothing else."""
    from domain.samarkand import data
    from domain.samarkand.rules import COUNTDOWN, SeatState

    you = view.you
    seen = [g for p in view.players for g in (*(p.goods or ()), *p.discarded)] + list(view.discard)

    def left(kind: str | None, offer: int | None) -> list[int]:
        values = list(data.GOODS_VALUES)
        for v in [g.value for g in seen if g.kind == kind] + ([offer] if offer is not None else []):
            if v in values:
                values.remove(v)
        return sorted(values)

    mine = view.players[seat]
    camels = list(data.CAMELS)
    for c in [c for p in view.players for c in (p.camels or ())] + ([view.camel_up] if view.camel_up else []):
        camels.remove(c)
    camels.sort()
    rng.shuffle(camels)
    pile, camels = tuple(camels[: view.camel_pile]), camels[view.camel_pile:]
    hidden = [i for i, p in enumerate(view.players) if p.camels is None]
    dealt: dict[int, list[int]] = {i: [] for i in hidden}
    for c in camels if hidden else ():  # the camels bought by the others, dealt among them at random
        dealt[rng.choice(hidden)].append(c)
    players = []
    for i, p in enumerate(view.players):
        if i == seat:
            players.append(SeatState(sells=p.sells, hand=tuple(you.hand), money=p.money or 0,
                                     camels=tuple(p.camels or ()), goods=tuple(p.goods or ()), chosen=you.chosen,
                                     offer=p.offer, answered=you.answered, stop=you.target,
                                     discarded=tuple(p.discarded), least_bought=p.least_bought))
            continue
        hand = left(p.sells, p.offer)
        rng.shuffle(hand)
        hand = sorted(hand[: p.hand_count])
        players.append(SeatState(
            sells=p.sells, hand=tuple(hand), money=p.money if p.money is not None else (mine.money or 0),
            camels=tuple(p.camels) if p.camels is not None else tuple(sorted(dealt[i])),
            goods=tuple(p.goods or ()), chosen=rng.choice(hand) if p.has_chosen and hand else None,
            offer=p.offer, answered=p.has_answered, stop=None, discarded=tuple(p.discarded),
            least_bought=p.least_bought))
    bank = left(view.bank_goods, view.bank_offer) if view.bank_goods is not None else []
    rng.shuffle(bank)
    issued = data.START_MONEY.get(seats, 0) * seats
    return State(seats=seats, options=options, phase=view.phase, round=view.round, dean=view.dean,
                 value=view.value if view.phase == COUNTDOWN and view.value is not None else 0,
                 players=tuple(players), bank_goods=view.bank_goods, bank_pile=tuple(bank[: view.bank_pile]),
                 bank_offer=view.bank_offer, camel_pile=pile, camel_up=view.camel_up, discard=tuple(view.discard),
                 issued=issued, bank_in=issued - sum(p.money for p in players), scores=view.scores,
                 winners=view.winners, details=view.details)


def _kept(goods: tuple[Any, ...], cap: int, kinds: tuple[str, ...]) -> tuple[Any, ...]:
    """The goods a seat keeps at the scoring when it holds more than its camels carry: the ``cap`` cards whose
    least-bought type and series are worth most (every choice tried when there are few, else the cheapest cards
    left one by one)."""
    if len(goods) <= cap:
        return goods
    if cap <= 0:
        return ()
    if math.comb(len(goods), cap) <= 120:
        return max(combinations(goods, cap), key=lambda kept: _least(kept, kinds, 1.0) + _series(kept))
    kept = sorted(goods, key=lambda g: g.value, reverse=True)
    return tuple(kept[:cap])


def _least(goods: tuple[Any, ...], kinds: tuple[str, ...], ahead: float) -> float:
    """The least-bought type's worth (the sum of the values of the type bought fewest times, the better on a tie);
    a type never bought is worth 0 at the end, and until then ``ahead`` (0 to 1: how likely the seat is to buy
    the types it misses) times half the least-bought of the types it has."""
    by_kind: dict[str, list[int]] = {k: [] for k in kinds}
    for g in goods:
        by_kind.setdefault(g.kind, []).append(g.value)
    bought = {k: v for k, v in by_kind.items() if v}
    if not bought:
        return 0.0
    fewest = min(len(v) for v in bought.values())
    least = max(sum(v) for v in bought.values() if len(v) == fewest)
    return float(least) if len(bought) == len(by_kind) else 0.5 * ahead * least


def _series(goods: tuple[Any, ...]) -> int:
    counts: dict[int, int] = {}
    for g in goods:
        counts[g.value] = counts.get(g.value, 0) + 1
    return sum(data.series_points(c) for c in counts.values())


PRICE = 3.0  # what a goods card costs at the countdown, roughly (the seat's money / PRICE: the cards it can buy)


def outlook(state: State, seat: int) -> float:
    """The seat's score to be, less the best other seat's: mcts's value where its look ahead stops (greedy keeps
    ``evaluate``, the score if the game ended now). Each seat's goods as it would keep them at the scoring (no more
    than its camels carry, the best of them); the cards it may still buy (one a round left at most, as many as its
    money pays at ``PRICE``) fill empty places on its camels before they are fined and may bring a type it never
    bought (worth, by the share of the types missing they cover, half its least-bought type); the wealth by money
    as the scoring counts it. Reads only public facts."""
    if state.scores is not None:
        totals = [float(t) for t in state.scores]
    elif not state.players:
        return 0.0
    else:
        rounds = 0.0
        if state.phase in (CHOOSING, COUNTDOWN):
            rounds = data.ROUNDS - state.round + 0.5
        elif state.phase != SCORING:
            rounds = float(data.ROUNDS - state.round)
        wealth = wealth_points([p.money for p in state.players], data.WEALTH_POINTS[state.seats])
        in_play = kinds_in_play(state)
        totals = []
        for i, p in enumerate(state.players):
            cap = sum(p.camels)
            kinds = tuple(k for k in in_play if k != p.sells)
            kept = _kept(p.goods, cap, kinds)
            future = min(rounds, p.money / PRICE)
            missing = sum(1 for k in kinds if not any(g.kind == k for g in kept))
            ahead = min(1.0, future / missing) if missing else 1.0
            fine = data.EMPTY_SLOT_PENALTY * max(0.0, cap - len(kept) - future)
            totals.append(wealth[i] + _least(kept, kinds, ahead) + _series(kept) - fine)
    others = [t for i, t in enumerate(totals) if i != seat]
    return totals[seat] - (max(others) if others else 0.0)
