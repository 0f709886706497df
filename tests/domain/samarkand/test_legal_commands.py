"""``legal_commands`` lists exactly what ``decide`` accepts, for every seat, at every step of seeded games whose
players pass often (so the countdown goes down to 1 and rounds end with unsold cards)."""

from __future__ import annotations

import random

import msgspec
import pytest

from contracts.samarkand import ChooseCard, ChooseLeastBought, DiscardGoods, Options, Pass, Stop
from domain.chance import Chance
from domain.kernel import RuleViolation
from domain.samarkand import GAME, data, rules


def candidates(state: rules.State) -> list:
    if state.phase == rules.CHOOSING:
        return [ChooseCard(value=v) for v in range(0, 9)] + [Pass()]
    if state.phase == rules.COUNTDOWN:
        targets = [*range(-1, state.seats + 1), "bank", "camel"]
        return [Pass(), ChooseCard(value=1)] + [Stop(target=t) for t in targets]
    kinds = rules.kinds_in_play(state) + ("nothing",)
    return (
        [DiscardGoods(kind=k, value=v) for k in kinds for v in sorted(set(data.GOODS_VALUES))]
        + [ChooseLeastBought(kind=k) for k in kinds]
        + [Pass()]
    )


def accepted(state: rules.State, seat: int, command) -> bool:
    try:
        GAME.decide(state, seat, command, Chance(b"legal", 0))
    except RuleViolation:
        return False
    return True


def play(seats: int, seed: int, pass_rate: float) -> rules.State:
    rng = random.Random(seed)
    options = Options(hidden_goods=bool(seed % 2))
    events = list(GAME.setup(seats, options, Chance(seed.to_bytes(4, "big"), 0)))
    state = rules.fold(GAME.initial_state(seats, options), events)
    position = 1
    while GAME.result(state) is None:
        awaited = GAME.flow(state).awaiting
        assert awaited, f"stuck in {state.phase}"
        if state.phase == rules.COUNTDOWN:  # seats answer from 10 down to 1; nothing is sold for 0
            assert data.COUNTDOWN_TO == 1 <= state.value <= data.COUNTDOWN_FROM == 10
        for seat in range(seats):
            legal = GAME.legal_commands(state, seat)
            assert bool(legal) == (seat in awaited)
            for command in candidates(state):
                assert accepted(state, seat, command) == (command in legal), (state.phase, seat, command)
        seat = rng.choice(awaited)
        legal = GAME.legal_commands(state, seat)
        command = Pass() if Pass() in legal and rng.random() < pass_rate else rng.choice(legal)
        old, before = state, msgspec.json.encode(state)
        new = GAME.decide(state, seat, command, Chance(seed.to_bytes(4, "big"), position))
        position += 1
        for event in new:
            state = GAME.evolve(state, event)
        events.extend(new)
        assert msgspec.json.encode(old) == before, "decide or evolve changed its input"
        assert msgspec.json.encode(rules.fold(GAME.initial_state(seats, options), events)) == msgspec.json.encode(state)
    return state


@pytest.mark.parametrize("seats", [3, 4, 5])
def test_legal_commands_are_exactly_what_decide_accepts(seats):
    for seed in range(2):
        state = play(seats, seed, pass_rate=0.85)
        assert state.phase == rules.OVER and state.round == data.ROUNDS
