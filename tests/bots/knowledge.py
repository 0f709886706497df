"""Hidden facts a seat never saw, swapped: per game, ``swap(state, seat)`` gives a state the seat cannot tell from
``state`` (its view is the same) in which facts it has not seen differ. A bot's decision must not change."""

from __future__ import annotations

from typing import Any

import msgspec

from domain.istanbul import data as istanbul_data
from domain.karawane import data as karawane_data

replace = msgspec.structs.replace


def _karawane(state: Any, seat: int) -> Any:
    known = set(state.face_up) | set(state.players[seat].seen)
    clued = {t for clue in state.clues for t in clue.tiles}  # told publicly: one of them is of a kind
    kinds = list(state.kinds)
    for sector in karawane_data.SECTORS:  # within a sector: a hex's back shows its sector to everyone
        unknown = [t for t in karawane_data.SECTOR_CELLS[sector] if t not in known and t not in clued]
        pair = next(((a, b) for a in unknown for b in unknown if kinds[a] < kinds[b]), None)
        if pair is not None:
            a, b = pair
            kinds[a], kinds[b] = kinds[b], kinds[a]
    players, supply = list(state.players), state.supply
    for other in range(state.seats):
        hand = players[other].hand
        if other != seat and hand.water_skins and supply.camel_drivers:  # one card for another, counts kept
            players[other] = replace(players[other], hand=replace(hand, water_skins=hand.water_skins - 1,
                                                                  camel_drivers=hand.camel_drivers + 1))
            supply = replace(supply, water_skins=supply.water_skins + 1, camel_drivers=supply.camel_drivers - 1)
            break
    return replace(state, kinds=tuple(kinds), players=tuple(players), supply=supply)


def _samarkand(state: Any, seat: int) -> Any:
    from domain.samarkand.rules import market_targets

    players = list(state.players)
    for other, p in enumerate(players):
        if other == seat:
            continue
        if p.chosen is not None:  # face down: another card of its hand
            others = sorted(v for v in set(p.hand) if v != p.chosen)
            if others:
                players[other] = replace(p, chosen=others[0])
        elif p.answered:  # its stop at this value, not closed yet: another target, or a pass for a stop
            targets = [t for t in market_targets(state, other) if t != p.stop]
            players[other] = replace(p, stop=None if p.stop is not None else (targets[0] if targets else None))
    return replace(state, players=tuple(players), camel_pile=state.camel_pile[::-1], bank_pile=state.bank_pile[::-1])


def _exchange(hand: tuple, deck: tuple, ok: Any = lambda card: True) -> tuple[tuple, tuple]:
    """The first card of ``hand`` for the first other card of ``deck`` that ``ok`` allows."""
    for k, card in enumerate(deck):
        if hand and card != hand[0] and ok(card):
            new_deck = (*deck[:k], hand[0], *deck[k + 1:])
            return tuple(sorted((card, *hand[1:]))), new_deck
    return hand, deck


def _istanbul(state: Any, seat: int) -> Any:
    players = list(state.players)
    location, guild, goods = state.location_deck, state.guild_deck, state.goods_deck
    for other, p in enumerate(players):
        if other == seat:
            continue
        hand, location = _exchange(p.hand, location, lambda c: istanbul_data.LOCATION_CARDS[c].fountain is None)
        guilds, guild = _exchange(p.guild, guild)
        cards, goods = _exchange(p.cards, goods)
        players[other] = replace(p, hand=hand, guild=guilds, cards=cards)
    return replace(state, players=tuple(players), location_deck=location[::-1], guild_deck=guild[::-1],
                   goods_deck=goods[::-1], caravan_deck=state.caravan_deck[::-1], ruby_deck=state.ruby_deck[::-1])


def _yspahan(state: Any, seat: int) -> Any:
    players, deck = list(state.players), state.deck
    for other, p in enumerate(players):
        if other != seat:
            hand, deck = _exchange(p.hand, deck)
            players[other] = replace(p, hand=hand)
    return replace(state, players=tuple(players), deck=deck[::-1])


SWAPS = {"karawane": _karawane, "samarkand": _samarkand, "istanbul": _istanbul, "yspahan": _yspahan}
SEATS = {"karawane": 2, "samarkand": 3, "istanbul": 3, "yspahan": 3}


def swap(name: str, state: Any, seat: int) -> Any:
    return SWAPS[name](state, seat)


def positions(name: str, count: int = 6) -> list[tuple[Any, Any, int, Any]]:
    """``(game, state, seat, swapped)`` at positions of seeded games where the swap changes something."""
    from tests.bots.support import advanced

    out = []
    for k in range(count * 3):
        game, state = advanced(name, SEATS[name], seed=100 + k, commands=5 + 13 * k)
        awaiting = game.flow(state).awaiting
        if game.result(state) is not None or not awaiting:
            continue
        seat = awaiting[-1]
        swapped = swap(name, state, seat)
        if swapped != state and game.view(swapped, seat) == game.view(state, seat):
            out.append((game, state, seat, swapped))
        if len(out) == count:
            break
    return out
