"""A tiny game for testing the platform without a real game's rules.

Seats take turns adding 1-3 to a shared total; the seat that reaches 10 or more wins. Each seat draws a secret
number at setup (chance, written into an event) that only it may see, so redaction is exercised too.
"""

from __future__ import annotations

from typing import Any

import msgspec

from contracts.base import Command, Event, View
from contracts.table import Flow, Result
from domain.chance import Chance
from domain.kernel import RuleViolation


class Options(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    target: int = 10


class Add(Command, tag="tally.Add"):
    amount: int


class SecretsDrawn(Event, tag="tally.SecretsDrawn"):
    secrets: tuple[int, ...]
    first: int


class Added(Event, tag="tally.Added"):
    seat: int
    amount: int


class TallyView(View, tag="tally.TallyView"):
    total: int
    turn: int
    my_secret: int | None


class State(msgspec.Struct, frozen=True):
    seats: int
    target: int
    total: int = 0
    turn: int = 0
    secrets: tuple[int, ...] = ()
    started: bool = False


class Tally:
    name = "tally"
    title = "Tally"
    min_seats, max_seats = 2, 4
    options_type = Options
    command_types = (Add,)
    event_types = (SecretsDrawn, Added)
    view_types = (TallyView,)

    def setup(self, seats: int, options: Options, chance: Chance) -> list[Any]:
        return [SecretsDrawn(tuple(chance.below(100) for _ in range(seats)), chance.below(seats))]

    def initial_state(self, seats: int, options: Options) -> State:
        return State(seats, options.target)

    def evolve(self, state: State, event: Any) -> State:
        if isinstance(event, SecretsDrawn):
            return msgspec.structs.replace(state, secrets=event.secrets, turn=event.first, started=True)
        return msgspec.structs.replace(state, total=state.total + event.amount, turn=(state.turn + 1) % state.seats)

    def decide(self, state: State, seat: int, command: Any, chance: Chance) -> list[Any]:
        if not 1 <= command.amount <= 3:
            raise RuleViolation("bad_amount", "add 1, 2 or 3")
        return [Added(seat, command.amount)]

    def flow(self, state: State) -> Flow:
        if state.total >= state.target:
            return Flow("over")
        return Flow("play", (state.turn,), turn_seat=state.turn)

    def legal_commands(self, state: State, seat: int) -> list[Any]:
        return [Add(a) for a in (1, 2, 3)] if seat in self.flow(state).awaiting else []

    def view(self, state: State, seat: int | None) -> TallyView:
        return TallyView(state.total, state.turn, None if seat is None else state.secrets[seat])

    def views(self, state: State) -> dict[int | None, TallyView]:
        return {seat: self.view(state, seat) for seat in (*range(state.seats), None)}

    def redact(self, event: Any, seat: int | None) -> Any:
        if isinstance(event, SecretsDrawn):
            return SecretsDrawn(tuple(s if i == seat else -1 for i, s in enumerate(event.secrets)), event.first)
        return event

    def result(self, state: State) -> Result | None:
        if state.total < state.target:
            return None
        winner = (state.turn - 1) % state.seats
        return Result(tuple(int(i == winner) for i in range(state.seats)), (winner,))


GAME = Tally()
