"""Istanbul: Choose & Write: what each seat (and a spectator) sees, and the history as each may read it.

Public: every sheet (T: sheets are public), the display, the palace, the face-up caravan card, the discard piles,
how many cards each seat holds and each deck's size. Secret: every hand (location, guild and goods cards), every
deck's order, and a seat's answer to the played card until the turn resolves.
"""

from __future__ import annotations

from typing import Any

import msgspec

from contracts.istanbul import (
    Answered,
    DeckShuffled,
    GoodsCardDrawn,
    GoodsDeckShuffled,
    GuildDrawn,
    GuildKept,
    IstanbulView,
    LocationDealt,
    PalaceView,
    PrivateView,
    SheetView,
)
from domain.istanbul import data
from domain.istanbul.rules import State, awaiting, location_of, phase, price

replace = msgspec.structs.replace


def view(state: State, seat: int | None) -> IstanbulView:
    return _personal(state, seat, _public(state))


def views(state: State) -> dict[int | None, IstanbulView]:
    public = _public(state)
    return {seat: _personal(state, seat, public) for seat in (*range(state.seats), None)}


def _public(state: State) -> dict[str, Any]:
    players = tuple(
        SheetView(
            seat=i,
            first=p.first,
            rubies=p.rubies,
            lira_filled=p.lira,
            lira_crossed=p.lira_x,
            goods_filled=p.goods,
            goods_crossed=p.goods_x,
            bonus_filled=p.bonus,
            bonus_crossed=p.bonus_x,
            bonus_boxes=p.bonus_boxes,
            icons_crossed={loc: p.icons[k] for k, loc in enumerate(data.LOCATIONS)},
            upgrades={loc: p.upgrades[k] for k, loc in enumerate(data.UPGRADABLE)},
            ruby_bonuses=p.ruby_bonuses,
            hand=len(p.hand),
            guild_cards=len(p.guild),
            goods_cards=len(p.cards),
            answered=p.answered,
        )
        for i, p in enumerate(state.players)
    )
    palace = tuple(
        PalaceView(letter=letter, cards=state.palace[k], price=price(state, letter))
        for k, letter in enumerate(data.LETTERS)
    )
    return dict(
        phase=phase(state),
        round=state.round,
        active=state.active,
        first=state.first,
        side=state.side,
        played=state.played,
        guild_played=state.guild_played,
        display=state.display,
        display_locations=tuple(location_of(c) or "" for c in state.display),
        palace=palace,
        caravan=state.caravan,
        fountain=state.fountain,
        location_deck=len(state.location_deck),
        location_discard=state.location_discard,
        guild_deck=len(state.guild_deck),
        guild_discard=state.guild_discard,
        goods_deck=len(state.goods_deck),
        goods_discard=state.goods_discard,
        ruby_deck=len(state.ruby_deck),
        awaiting=awaiting(state),
        players=players,
        scores=state.scores,
        winners=state.winners,
        challenges=state.challenges,
        column=state.column,
    )


def _personal(state: State, seat: int | None, public: dict[str, Any]) -> IstanbulView:
    you = None
    if seat is not None and state.players:
        p = state.players[seat]
        you = PrivateView(
            seat=seat,
            hand=p.hand,
            hand_locations=tuple(location_of(c) or "" for c in p.hand),
            guild_cards=p.guild,
            goods_cards=p.cards,
            answer=p.answer,
            took_bonus=p.took_bonus,
            keep=p.keep,
        )
    return IstanbulView(seat=seat, you=you, **public)


def redact(event: Any, seat: int | None) -> Any:
    kind = type(event)
    if kind is DeckShuffled or kind is GoodsDeckShuffled:
        return replace(event, order=None)
    if kind is LocationDealt or kind is GuildDrawn or kind is GoodsCardDrawn:
        return event if seat == event.seat else replace(event, card=None)
    if kind is Answered:
        return event if seat == event.seat else replace(event, action=None, bonus=None)
    if kind is GuildKept:
        return event if seat == event.seat else replace(event, kept=None)
    return event
