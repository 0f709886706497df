"""What each seat may see. Hidden: every hand (others see its size) and the draw pile's order (everyone sees
its size). Everything else is public, the discard pile included."""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from contracts.yspahan import (
    CardDrawn,
    DeckShuffled,
    FloorView,
    PendingView,
    PlayerView,
    ShopView,
    YspahanView,
)
from domain.yspahan import board, data
from domain.yspahan.rules import awaiting, phase
from domain.yspahan.state import MOVE, OVER, PLACE, SHIP, State, caravan_capacity, caravan_width


def view(state: State, seat: int | None) -> YspahanView:
    return _personal(state, seat, _public(state))


def views(state: State) -> dict[int | None, YspahanView]:
    """Every seat's view, then the spectator's: all but the hand is public, so it is built once."""
    public = _public(state)
    return {seat: _personal(state, seat, public) for seat in (*range(state.seats), None)}


def _personal(state: State, seat: int | None, public: YspahanView) -> YspahanView:
    if seat is None or not 0 <= seat < state.seats:
        return public
    return replace(public, seat=seat, hand=state.players[seat].hand)


def _public(state: State) -> YspahanView:
    """The spectator's view, which every seat's extends with its hand."""
    pending = PendingView()
    if state.step == PLACE:
        pending = PendingView(quarter=data.FLOORS[state.quarter], cubes_left=state.cubes_left)
    elif state.step == MOVE:
        pending = PendingView(move_value=state.move_value)
    elif state.step == SHIP:
        pending = PendingView(
            shops_to_ship=tuple(board.SHOPS[s] for s in state.ship_pending),
            shipping=board.SHOPS[state.ship_shop] if state.ship_shop >= 0 else None,
        )
    return YspahanView(
        seat=None,
        phase=phase(state),
        week=state.week,
        day=state.day,
        order=state.order,
        turn_seat=state.order[state.turn] if state.order and state.step != OVER else None,
        awaiting=awaiting(state),
        tower=tuple(
            FloorView(floor=data.FLOORS[f], value=v, white=w, yellow=y) for f, (v, w, y) in enumerate(state.tower)
        ),
        supervisor=board.SQUARES[state.supervisor],
        shops=tuple(ShopView(shop=board.SHOPS[i], seat=o) for i, o in enumerate(state.shops) if o >= 0),
        caravan=state.caravan,
        caravan_capacity=caravan_capacity(state.seats, state.options),
        caravan_width=caravan_width(state.seats, state.options),
        players=tuple(
            PlayerView(
                seat=i,
                score=p.score,
                gold=p.gold,
                camels=p.camels,
                reserve=p.reserve,
                buildings=p.buildings,
                hand_size=len(p.hand),
            )
            for i, p in enumerate(state.players)
        ),
        hand=None,
        deck_size=len(state.deck),
        discard=state.discard,
        gold_supply=state.gold_supply,
        camel_supply=state.camel_supply,
        built_this_turn=state.built,
        pending=pending,
        over=state.step == OVER,
    )


def redact(event: Any, seat: int | None) -> Any:
    """The event as ``seat`` may see it: others' drawn cards and every shuffle order are hidden."""
    if isinstance(event, DeckShuffled):
        return replace(event, order=())
    if isinstance(event, CardDrawn) and event.seat != seat:
        return replace(event, card=None)
    return event
