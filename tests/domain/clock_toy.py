"""A tiny game for the clock tests (issue #19), registered only while a test uses it (``toy_games``): seats move
in turn (``Move``), or all at once when ``simultaneous`` (each seat answers once a round, in any order); the game
ends after ``moves`` moves, the seat with the most moves winning (ties: every one of them). ``ToyTimed`` adds a game
timer: while ``timer`` is above 0 (and the number of moves made is a multiple of ``timer_every``), a timer of that
many seconds runs, keyed by the number of moves made; when it runs out (``tick``) a move by nobody passes
(``Ticked``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from contracts.base import Command, Event
from contracts.table import Flow, Result
from domain import kernel


class Move(Command, tag="toy.Move"):
    pass


class Moved(Event, tag="toy.Moved"):
    seat: int


class Ticked(Event, tag="toy.Ticked"):
    key: str


class ToyOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    simultaneous: bool = False
    moves: int = 6
    timer: float = 0.0
    timer_every: int = 1  # the timer runs while the number of moves made is a multiple of this


class ToyState(msgspec.Struct, frozen=True):
    seats: int
    options: ToyOptions
    made: tuple[int, ...]  # moves by seat
    moves: int = 0  # every move, a tick's too
    answered: tuple[int, ...] = ()  # simultaneous: the seats that answered this round


class Toy:
    name = "toy"
    title = "Toy"
    min_seats = 2
    max_seats = 4
    options_type = ToyOptions
    command_types = (Move,)
    event_types = (Moved, Ticked)
    view_types = ()

    def setup(self, seats: int, options: Any, chance: Any) -> list[Any]:
        return []

    def initial_state(self, seats: int, options: Any) -> ToyState:
        return ToyState(seats, options, (0,) * seats)

    def evolve(self, state: ToyState, event: Any) -> ToyState:
        if isinstance(event, Ticked):
            return msgspec.structs.replace(state, moves=state.moves + 1, answered=())
        made = list(state.made)
        made[event.seat] += 1
        answered = (*state.answered, event.seat) if state.options.simultaneous else ()
        if len(answered) == state.seats:
            answered = ()
        return msgspec.structs.replace(state, made=tuple(made), moves=state.moves + 1, answered=answered)

    def decide(self, state: ToyState, seat: int, command: Any, chance: Any) -> list[Any]:
        if seat not in self.flow(state).awaiting:
            raise kernel.RuleViolation("not_your_turn", "not now")
        return [Moved(seat)]

    def flow(self, state: ToyState) -> Flow:
        if state.moves >= state.options.moves:
            return Flow("over")
        if state.options.simultaneous:
            return Flow("answer", tuple(s for s in range(state.seats) if s not in state.answered))
        return Flow("turn", (state.moves % state.seats,), turn_seat=state.moves % state.seats)

    def legal_commands(self, state: ToyState, seat: int) -> list[Any]:
        return [Move()] if seat in self.flow(state).awaiting else []

    def view(self, state: ToyState, seat: int | None) -> Any:
        return None

    def views(self, state: ToyState) -> dict[int | None, Any]:
        return {**{s: None for s in range(state.seats)}, None: None}

    def redact(self, event: Any, seat: int | None) -> Any:
        return event

    def result(self, state: ToyState) -> Result | None:
        if state.moves < state.options.moves:
            return None
        best = max(state.made)
        return Result(state.made, tuple(s for s in range(state.seats) if state.made[s] == best))

    def scores(self, state: ToyState) -> tuple[int, ...]:
        return state.made

    def is_barrier(self, event: Any) -> bool:
        return False


class ToyTimed(Toy):
    name = "toytimed"

    def timer(self, state: ToyState) -> tuple[str, float] | None:
        if state.options.timer <= 0 or state.moves >= state.options.moves or state.moves % state.options.timer_every:
            return None
        return f"m{state.moves}", state.options.timer

    def tick(self, state: ToyState, key: str, chance: Any) -> list[Any]:
        return [Ticked(key)]


TOY, TOY_TIMED = Toy(), ToyTimed()


@pytest.fixture
def toy_games() -> Iterator[None]:
    """The toy games registered for one test (the registry is global: no other test sees them)."""
    for game in (TOY, TOY_TIMED):
        kernel.register(game)
    try:
        yield
    finally:
        for game in (TOY, TOY_TIMED):
            kernel._GAMES.pop(game.name, None)
