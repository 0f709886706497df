"""Istanbul: Choose & Write for bots: how good a position looks to a seat (``evaluate``) and a world it cannot tell
from the true one (``determinize``). Pure; the kernel's optional hooks of the same names (``services.bots``).

What a seat does not know (``views``): the other hands (location, guild and goods cards, a guild card to keep),
every deck's order, and another seat's answer to the played card until the turn resolves. The sheets, the display,
the palace, the discard piles and every count are public.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import msgspec

from domain.istanbul import data
from domain.istanbul.rules import State, tiebreak

replace = msgspec.structs.replace


def evaluate(state: State, seat: int) -> float:
    """Rubies first, then the tie-break (unspent lira, goods and bonus boxes, goods cards), then the sheet's
    progress (upgrades, boxes ever filled), less the best other sheet's (sheets are public)."""
    def worth(i: int) -> float:
        p = state.players[i]
        return 20.0 * p.rubies + tiebreak(p) + 1.5 * sum(p.upgrades) + 0.5 * (sum(p.goods) + p.lira + p.bonus)

    if not state.players:
        return 0.0
    others = [worth(i) for i in range(state.seats) if i != seat]
    return worth(seat) - (max(others) if others else 0.0)


def _deal(pool: list[Any], sizes: Sequence[int], rng: random.Random) -> tuple[list[tuple], tuple]:
    """``pool`` (sorted first: its order tells nothing) shuffled, a hand of each size dealt, the rest a deck."""
    pool = sorted(pool)
    rng.shuffle(pool)
    hands = []
    for n in sizes:
        hands.append(tuple(sorted(pool[:n])))
        pool = pool[n:]
    return hands, tuple(pool)


def determinize(state: State, seat: int, rng: random.Random) -> State:
    """``state`` with what ``seat`` has not seen drawn again with ``rng``: the other hands dealt again from their
    cards and the decks' (each hand keeps its size), the decks' order (caravan and ruby decks too) shuffled, and
    the others' answers to the played card taken back (they answer again in the simulation). Built only from what
    the seat knows: two states it cannot tell apart give the same result for the same ``rng``."""
    others = [i for i in range(state.seats) if i != seat]
    ps = list(state.players)
    # a fountain is turned face up as soon as it is drawn (``_Run.reveal``): no hand holds one, it stays in the deck
    fountains = [c for c in state.location_deck if data.LOCATION_CARDS[c].fountain is not None]
    hands, rest = _deal([*(c for c in state.location_deck if data.LOCATION_CARDS[c].fountain is None),
                         *(c for i in others for c in ps[i].hand)], [len(ps[i].hand) for i in others], rng)
    _, location_deck = _deal([*rest, *fountains], [], rng)
    guild_sizes = [n for i in others for n in (len(ps[i].guild), len(ps[i].keep))]
    guilds, guild_deck = _deal([*state.guild_deck, *(c for i in others for c in (*ps[i].guild, *ps[i].keep))],
                               guild_sizes, rng)
    cards, goods_deck = _deal([*state.goods_deck, *(c for i in others for c in ps[i].cards)],
                              [len(ps[i].cards) for i in others], rng)
    for n, i in enumerate(others):
        p = replace(ps[i], hand=hands[n], guild=guilds[2 * n], keep=guilds[2 * n + 1], cards=cards[n])
        if p.answered and i in state.pending:
            p = replace(p, answered=False, answer=None, took_bonus=False)
        ps[i] = p
    caravan = sorted(state.caravan_deck)
    rng.shuffle(caravan)
    ruby = sorted(state.ruby_deck)
    rng.shuffle(ruby)
    return replace(state, players=tuple(ps), location_deck=location_deck, guild_deck=guild_deck,
                   goods_deck=goods_deck, caravan_deck=tuple(caravan), ruby_deck=tuple(ruby))
