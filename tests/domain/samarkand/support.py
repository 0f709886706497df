"""Helpers shared by the Samarkand tests.

``ensure_registered``: ``domain.games`` imports every game the build ships; while a sibling game is not in the
tree yet, that import fails and ``domain.table`` cannot find any game. The tests then register Samarkand alone
(a workaround in our own files; the kernel is untouched).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from typing import Any

from domain import kernel
from domain.samarkand import GAME


def ensure_registered() -> None:
    try:
        import domain.games  # noqa: F401
    except Exception:  # a game listed in domain.games is missing or broken: register Samarkand alone
        kernel._GAMES.setdefault(GAME.name, GAME)
        sys.modules.setdefault("domain.games", types.ModuleType("domain.games"))


# --- builders for given/when/then ----------------------------------------------------------------------

import msgspec  # noqa: E402

from contracts.samarkand import (  # noqa: E402
    BankCardTurned,
    BankDeckShuffled,
    CamelDeckShuffled,
    CamelTurned,
    CardChosen,
    CardsRevealed,
    Goods,
    MarketSetUp,
    Options,
    RoundStarted,
)
from domain.samarkand import data, rules  # noqa: E402
from tests.domain.harness import Spec  # noqa: E402

# 4 players: seat 0 sells carpets, 1 spices, 2 fruits, 3 jewels; 3 players: the bank sells jewels.
CAMEL_ORDER = (3, 4, 5, 2, 3, 4, 5, 2, 3, 4, 5, 2, 3, 4, 5, 2)
BANK_ORDER = (7, 5, 4, 3, 3, 2, 2, 1, 1, 1)


def market(seats: int = 4, dean: int = 0, camels: tuple[int, ...] = CAMEL_ORDER, money: int | None = None) -> list:
    """The events of a setup without chance: types in data order, the given camel pile, round 1 started."""
    bank = data.GOODS[3] if seats == 3 else None
    events: list = [
        MarketSetUp(
            goods=data.GOODS[:seats],
            bank_goods=bank,
            hand=data.GOODS_VALUES,
            money=data.START_MONEY[seats] if money is None else money,
            dean=dean,
        ),
        CamelDeckShuffled(order=camels, size=len(camels)),
    ]
    if bank is not None:
        events.append(BankDeckShuffled(order=BANK_ORDER, size=len(BANK_ORDER)))
    events.append(RoundStarted(round=1, dean=dean))
    if camels:
        events.append(CamelTurned(capacity=camels[0]))
    if bank is not None:
        events.append(BankCardTurned(value=BANK_ORDER[0]))
    return events


def reveal(values: tuple[int, ...]) -> list:
    """Every seat chooses, then the cards are revealed: the countdown stands at 10."""
    chosen = [CardChosen(seat=s, value=v) for s, v in enumerate(values)]
    return chosen + [CardsRevealed(values=values, start=data.COUNTDOWN_FROM)]


def spec(seats: int = 4, events: list | None = None, **options) -> Spec:
    from domain.samarkand import GAME

    s = Spec(GAME, seats, Options(**options))
    return s.given(events if events is not None else [])


def with_players(state: rules.State, **changes_by_seat: dict) -> rules.State:
    """Replace fields of some seats: ``with_players(state, s0={"money": 3})``."""
    players = list(state.players)
    for key, changes in changes_by_seat.items():
        seat = int(key[1:])
        players[seat] = msgspec.structs.replace(players[seat], **changes)
    return msgspec.structs.replace(state, players=tuple(players))


def goods(*cards: tuple[str, int]) -> tuple[Goods, ...]:
    return tuple(Goods(k, v) for k, v in cards)


def scoring_state(seats: int, players: list[dict]) -> rules.State:
    """A state at the scoring phase: the setup, then each seat's money, camels and goods as given."""
    s = spec(seats, market(seats)).state
    s = msgspec.structs.replace(s, phase=rules.SCORING, round=data.ROUNDS, camel_up=None, bank_offer=None)
    empty = {"hand": (), "chosen": None, "offer": None}
    return with_players(s, **{f"s{i}": {**empty, **p} for i, p in enumerate(players)})


# --- the history ----------------------------------------------------------------------------------------

SETTLEMENT_FIELDS = frozenset({"seat", "seats", "buyer", "disputants"})  # who acted, in a settlement event


def named(value: Any) -> Iterator[int]:
    """Every seat a settlement event (or a part of it: a ``StopCall``) names as having acted."""
    if isinstance(value, msgspec.Struct):
        for field in value.__struct_fields__:
            inner = getattr(value, field)
            if field in SETTLEMENT_FIELDS:
                yield from (s for s in (inner if isinstance(inner, tuple) else (inner,)) if type(s) is int)
            elif isinstance(inner, (msgspec.Struct, tuple)):
                yield from named(inner)
    elif isinstance(value, tuple):
        for item in value:
            yield from named(item)
