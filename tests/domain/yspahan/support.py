"""Helpers for Yspahan's tests: the registry workaround, event builders, and the playout invariants."""

from __future__ import annotations

import sys
import types
from typing import Any

from domain import kernel
from domain import table as tbl
from domain.yspahan import GAME, board
from domain.yspahan.state import State


def ensure_registered() -> None:
    """``domain.table`` finds games through ``domain.games``, which imports every game of the repo. While a
    sibling game is half-written that import fails and no game can be played through the table; then
    register Yspahan alone so these tests still run."""
    try:
        import domain.games  # noqa: F401
    except Exception:  # noqa: BLE001 - any failure of another game's import
        if kernel._GAMES.get("yspahan") is None:  # noqa: SLF001
            kernel.register(GAME)
        sys.modules["domain.games"] = types.ModuleType("domain.games")


ensure_registered()


def conservation(state: State) -> None:
    """Cubes, camels, gold and cards are all somewhere, and nothing is negative."""
    options = state.options
    assert state.gold_supply >= 0 and state.camel_supply >= 0
    assert state.gold_supply + sum(p.gold for p in state.players) == options.gold_in_box
    assert state.camel_supply + sum(p.camels for p in state.players) == options.camels_in_box
    assert len(state.deck) + len(state.discard) + sum(len(p.hand) for p in state.players) == len(board.FULL_DECK)
    assert sorted(state.deck + state.discard + sum((p.hand for p in state.players), ())) == sorted(board.FULL_DECK)
    for seat, p in enumerate(state.players):
        assert p.gold >= 0 and p.camels >= 0 and p.reserve >= 0, p
        on_board = sum(1 for owner in state.shops if owner == seat)
        in_caravan = sum(1 for owner in state.caravan if owner == seat)
        assert p.reserve + on_board + in_caravan + len(p.buildings) == options.cubes_per_player
        assert len(set(p.buildings)) == len(p.buildings)
        assert list(p.hand) == sorted(p.hand)
    for souk_shops in board.SOUK_SHOPS:  # one owner per souk
        owners = {state.shops[s] for s in souk_shops} - {-1}
        assert len(owners) <= 1, owners


def no_leak(game: Any, state: State) -> None:
    """Each seat's view shows its own hand only; a spectator sees no hand; no view holds the deck order."""
    for seat in [*range(state.seats), None]:
        v = game.view(state, seat)
        if seat is None:
            assert v.hand is None
        else:
            assert v.hand == state.players[seat].hand
        assert v.deck_size == len(state.deck)
        assert not hasattr(v.players[0], "hand")
        assert [p.hand_size for p in v.players] == [len(p.hand) for p in state.players]


def table_check(table: tbl.Table) -> None:
    if table.state is None:
        return
    conservation(table.state)
    no_leak(GAME, table.state)


# --- event builders for given/when/then ----------------------------------------------------------------
from contracts.yspahan import (  # noqa: E402
    BuildingBuilt,
    CamelsTaken,
    CardDrawn,
    CubePlaced,
    CubeShipped,
    DayBegan,
    DeckShuffled,
    DiceRolled,
    GoldTaken,
    GoodsSold,
    SupervisorMoved,
)
from domain.yspahan.rules import day_order  # noqa: E402

# The rulebook's colours, seated in its turn order.
BLEU, VERT, ROUGE, JAUNE = 0, 1, 2, 3


def deck(*top: str) -> tuple[str, ...]:
    """The full deck with ``top`` cards first, in that order."""
    rest = list(board.FULL_DECK)
    for card in top:
        rest.remove(card)
    return tuple(top) + tuple(rest)


def opening(seats: int, *, first: int = 0, top: tuple[str, ...] = (), week: int = 1, day: int = 1) -> list:
    order = deck(*top)
    return [DeckShuffled(order=order, size=len(order)), DayBegan(week=week, day=day, order=day_order(seats, first))]


def new_day(seats: int, *, first: int = 0, week: int = 1, day: int = 1, order: tuple[int, ...] | None = None):
    return DayBegan(week=week, day=day, order=order if order is not None else day_order(seats, first))


def roll(seat: int, *white: int, yellow: tuple[int, ...] = ()) -> DiceRolled:
    return DiceRolled(seat=seat, white=tuple(white), yellow=tuple(yellow))


def cubes(seat: int, *shops: str) -> list:
    return [CubePlaced(seat=seat, shop=s, by_card=True) for s in shops]


def gold(seat: int, n: int) -> GoldTaken:
    return GoldTaken(seat=seat, count=n)


def camels(seat: int, n: int) -> CamelsTaken:
    return CamelsTaken(seat=seat, count=n)


def draws(seat: int, *cards: str) -> list:
    """The seat draws these cards; the deck must have them on top (``opening(top=...)``)."""
    return [CardDrawn(seat=seat, card=c) for c in cards]


def built(seat: int, *buildings: str) -> list:
    """Buildings given for free (put these before a DayBegan: they mark the turn as having built)."""
    return [BuildingBuilt(seat=seat, building=b, camels=0, gold=0, points=0) for b in buildings]


def score(seat: int, points: int) -> GoodsSold:
    return GoodsSold(seat=seat, camels=0, gold=0, points=points)


def supervisor_at(square: str) -> SupervisorMoved:
    """Put the supervisor on ``square`` (before a DayBegan, which clears the move's pending state)."""
    return SupervisorMoved(seat=0, square=square, gold=0)


def caravan(*seats: int) -> list:
    return [CubeShipped(seat=s, shop=None, camel=False, points=0) for s in seats]


def random_game(seats: int, seed: int, options: Any = None):
    """A random game played on the bare decider (no table): yields (state, seat, command, events) per
    command, the state being the one the command was decided on."""
    import random

    from domain.chance import Chance

    rng = random.Random(seed)
    secret = seed.to_bytes(8, "big")
    options = options if options is not None else GAME.options_type()
    state = GAME.initial_state(seats, options)
    for event in GAME.setup(seats, options, Chance(secret, 0)):
        state = GAME.evolve(state, event)
    position = 1
    while GAME.result(state) is None:
        seat = rng.choice(GAME.flow(state).awaiting)
        command = rng.choice(GAME.legal_commands(state, seat))
        events = GAME.decide(state, seat, command, Chance(secret, position))
        yield state, seat, command, events
        for event in events:
            state = GAME.evolve(state, event)
        position += 1


def shipping_game(seats: int, seed: int, check=None) -> tuple[tbl.Table, list]:
    """A random game through the table that favours moving the supervisor onto cubes, so that the caravan
    fills, empties and owners answer often (uniform random play rarely ships a cube)."""
    import random

    from contracts.yspahan import MoveSupervisor, PlayCard, SelectDice
    from domain.chance import Chance
    from tests.domain.harness import start_table, token_hash

    rng = random.Random(seed)
    secret = seed.to_bytes(8, "big")
    table, events = start_table(GAME, seats, seed=secret)

    def weight(state: State, command: Any) -> float:
        if isinstance(command, SelectDice) and command.action == "supervisor":
            return 4.0 if any(owner >= 0 for owner in state.shops) else 0.2
        if isinstance(command, SelectDice) and command.action == "floor" and command.floor not in ("camels", "gold"):
            return 4.0
        if isinstance(command, MoveSupervisor):
            facing = board.FACING[board.SQUARE_INDEX[command.square]]
            return 1.0 + 100.0 * sum(state.shops[s] >= 0 for s in facing)
        if isinstance(command, PlayCard) and command.card == "caravan_cube":
            return 5.0
        return 1.0

    while table.status != tbl.OVER:
        seat = rng.choice(tbl.flow(table).awaiting)
        legal = GAME.legal_commands(table.state, seat)
        command = rng.choices(legal, weights=[weight(table.state, c) for c in legal])[0]
        new = tbl.decide(table, seat, token_hash(seat), command, Chance(secret, table.version))
        for event in new:
            table = tbl.evolve(table, event)
            if check is not None:
                check(table)
        events.extend(new)
    return table, events
