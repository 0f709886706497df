"""Seeded random playouts of whole games through the table, with invariants checked after every event.

``SOUK_PLAYOUTS`` sets how many games per player count: by default 60 (180 games), the CI's short form (300 took 96 s
of the suite's time in a run of 2026-11-28 at 16:00 UTC, 120 took 81 s in one at 20:40); ``SOUK_PLAYOUTS=1000``
plays 3,000 games (10 to 55 games/s with the checks, by the machine's load).
"""

from __future__ import annotations

import os
import random

import msgspec
import pytest

from contracts.yspahan import (
    Build,
    CaravanScored,
    CardDrawn,
    CubeShipped,
    DeckShuffled,
    EndTurn,
    KeepCube,
    LetCubeGo,
    MoveSupervisor,
    PlaceCube,
    PlayCard,
    RollDice,
    SelectDice,
    ShipCube,
)
from domain.chance import Chance
from domain.kernel import RuleViolation
from domain.yspahan import GAME, board, data
from domain.yspahan.rules import ACTIONS
from tests.domain.harness import playout
from tests.domain.yspahan.support import random_game, shipping_game, table_check

GAMES = int(os.environ.get("SOUK_PLAYOUTS", "60"))


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_random_games_play_to_the_end_conserving_everything_and_leaking_no_hand(seats):
    for seed in range(GAMES):
        table, events = playout(GAME, seats, seed * 10 + seats, check=table_check)
        assert table.result is not None and table.state.week == 3 and table.state.day == 7
        hidden_in_history(events, seats)


def hidden_in_history(events: list, seats: int) -> None:
    for event in events:
        for seat in [*range(seats), None]:
            seen = GAME.redact(event, seat)
            if isinstance(event, DeckShuffled):
                assert seen.order == () and seen.size == event.size
            elif isinstance(event, CardDrawn):
                assert seen.card == (event.card if seat == event.seat else None)
            else:
                assert seen is event


def candidates() -> list:
    """Every command shape with right and wrong arguments."""
    out: list = [RollDice(yellow=n) for n in range(-1, 5)]
    floors = [*data.FLOORS, None, "roof"]
    discards = [None, *data.CARDS]
    out += [SelectDice(floor=f, action=a, discard=d) for f in floors for a in [*ACTIONS, "dance"] for d in discards]
    out += [PlaceCube(shop=s) for s in [*board.SHOPS, "NOPE"]]
    out += [MoveSupervisor(square=s) for s in [*board.SQUARES, "Z9"]]
    out += [ShipCube(shop=s) for s in board.SHOPS]
    out += [KeepCube(), LetCubeGo(), EndTurn()]
    out += [Build(building=b, card=c) for b in [*board.BUILDING_IDS, "tower"] for c in discards]
    for card in [*data.CARDS, "joker"]:
        out += [PlayCard(card=card, shop=s) for s in [*board.SHOPS, "NOPE"]]
        out += [PlayCard(card=card, count=n, give=g) for n in range(-1, 13) for g in (None, "gold", "camels")]
    return out


CANDIDATES = candidates()


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_decide_accepts_exactly_the_legal_commands(seats):
    """On states met in random games, every candidate command is accepted iff it is listed as legal."""
    rng = random.Random(seats)
    sampled = 0
    for i, (state, _, _, _) in enumerate(random_game(seats, 7 + seats)):
        if rng.random() > 0.25:
            continue
        sampled += 1
        awaiting = GAME.flow(state).awaiting
        assert awaiting
        for seat in range(seats):
            legal = GAME.legal_commands(state, seat)
            assert bool(legal) == (seat in awaiting), (seat, awaiting)
            if seat in awaiting and state.step == "after":  # a turn with nothing left to do ends by itself
                assert len(legal) > 1, legal
            for command in CANDIDATES:
                try:
                    GAME.decide(state, seat, command, Chance(b"fuzz", i))
                    accepted = True
                except RuleViolation as exc:
                    accepted = False
                    assert exc.code and exc.code == exc.code.lower() and " " not in exc.code
                assert accepted == (command in legal), (seat, command, GAME.flow(state))
            for command in legal:
                assert command in CANDIDATES, command
    assert sampled > 20


def test_evolve_never_mutates_its_input_and_states_encode_to_json():
    _, events = playout(GAME, 4, 3)
    state = GAME.initial_state(4, GAME.options_type())
    for event in events:
        if type(event).__module__ != "contracts.yspahan":
            continue
        before = msgspec.json.encode(state)
        after = GAME.evolve(state, event)
        assert msgspec.json.encode(state) == before
        state = after
    assert msgspec.json.decode(msgspec.json.encode(state), type=type(state)) == state


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_games_that_ship_often_fill_and_empty_the_caravan_conserving_everything(seats):
    kinds: set[str] = set()
    for seed in range(max(3, GAMES // 20)):
        table, events = shipping_game(seats, 1000 + seed, check=table_check)
        assert table.result is not None
        hidden_in_history(events, seats)
        for event in events:
            if isinstance(event, CaravanScored) and event.emptied:
                kinds.add("caravan full")
            if isinstance(event, CubeShipped) and event.camel:
                kinds.add("cube kept")
    assert "cube kept" in kinds
    if seats > 2:  # 2 players' 12 camels rarely fill in a few games
        assert "caravan full" in kinds
