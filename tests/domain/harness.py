"""Shared test helpers for games: given/when/then specs and seeded random playouts through the table.

- ``Spec``: given these game events (folded from ``initial_state``), when this seat sends this command,
  then these events, or this error code (fmodel's DeciderEventSourcedSpec).
- ``playout``: a whole game through ``domain.table`` with seeded random choices among ``legal_commands``;
  every legal command must be accepted, replay must rebuild the same table, ``views`` must equal ``view`` for
  every seat, an event a spectator sees whole must hide nothing from any seat, and a game-specific ``check``
  runs after every event (conservation, views leaking nothing, ...).
- ``golden_transcript``: a recorded command -> event transcript of one seeded game on the bare decider, replayed
  and compared (a rule change shows as a diff; ``SOUK_REGEN_GOLDEN=1`` records it again).
- ``Played``: a table driven command by command with each event's ``Origin`` (as the engine folds them), for
  undo; ``play_with_undos``: a seeded random game with undo requests and answers interleaved where legal.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Union

import msgspec
import pytest

from contracts.table import (
    AcceptUndo,
    CreateGame,
    DeclineUndo,
    JoinSeat,
    RequestUndo,
    Result,
    UndoApplied,
    UndoRequested,
)
from domain import table as tbl
from domain.chance import Chance
from domain.kernel import Game, RuleViolation, get_game


class Spec:
    def __init__(self, game: Game, seats: int, options: Any = None) -> None:
        self.game = game
        self.options = options if options is not None else game.options_type()
        self.seats = seats
        self.state = game.initial_state(seats, self.options)
        self.seed = b"spec-seed"

    def given(self, events: Sequence[Any]) -> Spec:
        for event in events:
            self.state = self.game.evolve(self.state, event)
        return self

    def given_setup(self, seed: bytes = b"spec-seed") -> Spec:
        self.seed = seed
        return self.given(self.game.setup(self.seats, self.options, Chance(seed, 0)))

    def decide(self, seat: int, command: Any, position: int = 1) -> list[Any]:
        return list(self.game.decide(self.state, seat, command, Chance(self.seed, position)))

    def when(self, seat: int, command: Any, position: int = 1) -> Then:
        try:
            return Then(self, self.decide(seat, command, position), None)
        except RuleViolation as exc:
            return Then(self, None, exc)


class Then:
    def __init__(self, spec: Spec, events: list[Any] | None, error: RuleViolation | None) -> None:
        self.spec, self.events, self.error = spec, events, error

    def then(self, expected: Sequence[Any]) -> Any:
        assert self.error is None, f"refused with {self.error.code}: {self.error.message}"
        assert self.events == list(expected)
        return self.state_after()

    def then_starts_with(self, expected: Sequence[Any]) -> Any:
        assert self.error is None, f"refused with {self.error.code}: {self.error.message}"
        assert self.events[: len(expected)] == list(expected)
        return self.state_after()

    def then_error(self, code: str) -> None:
        assert self.error is not None, f"accepted: {self.events}"
        assert self.error.code == code, f"{self.error.code} != {code}: {self.error.message}"

    def state_after(self) -> Any:
        state = self.spec.state
        for event in self.events or ():
            state = self.spec.game.evolve(state, event)
        return state


def token_hash(seat: int) -> str:
    return hashlib.sha256(f"token-{seat}".encode()).hexdigest()


def start_table(game: Game, seats: int, options: dict | None = None, seed: bytes = b"seed") -> tuple[tbl.Table, list]:
    """A table with every seat taken, through the platform decider, and the events that made it."""
    events: list[Any] = []
    table = tbl.EMPTY

    def apply(seat, token, command):
        nonlocal table
        new = tbl.decide(table, seat, token, command, Chance(seed, table.version))
        for event in new:
            table = tbl.evolve(table, event)
        events.extend(new)

    # a new game, as the engine makes it: under its title's newest rules
    apply(None, None, tbl.newest_rules(CreateGame(game=game.name, title="test", seats=seats, options=options or {})))
    for seat in range(seats):
        apply(None, None, JoinSeat(name=f"p{seat}", token_hash=token_hash(seat)))
    return table, events


def playout(
    game: Game,
    seats: int,
    seed: int,
    options: dict | None = None,
    check: Callable[[tbl.Table], None] | None = None,
    max_commands: int = 20_000,
) -> tuple[tbl.Table, list[Any]]:
    """Play one game to its end with random legal commands; returns the final table and all events."""
    rng = random.Random(seed)
    table, events = start_table(game, seats, options, seed=seed.to_bytes(8, "big"))
    secret = seed.to_bytes(8, "big")
    for n in range(max_commands):
        if table.status == tbl.OVER:
            break
        flow = tbl.flow(table)
        assert flow.awaiting, f"game stuck in phase {flow.phase}: nobody is awaited"
        seat = rng.choice(flow.awaiting)
        legal = list(game.legal_commands(table.state, seat))
        assert legal, f"seat {seat} is awaited in {flow.phase} but has no legal command"
        for other in range(seats):
            if other not in flow.awaiting:
                assert not game.legal_commands(table.state, other), f"seat {other} not awaited has commands"
        command = rng.choice(legal)
        try:
            new = tbl.decide(table, seat, token_hash(seat), command, Chance(secret, table.version))
        except RuleViolation as exc:  # pragma: no cover - the assertion message is the point
            pytest.fail(f"legal command {command!r} refused: {exc.code} {exc.message}")
        for event in new:
            table = tbl.evolve(table, event)
            if tbl.redact(table, event, None) is event:  # hides nothing from a spectator: nor from any seat
                assert all(tbl.redact(table, event, s) is event for s in range(seats)), event
            if check is not None:
                check(table)
        if n % 5 == 0:  # views built at once are each seat's view (every 5th state: they are costly)
            all_views = game.views(table.state)
            assert list(all_views) == [*range(seats), None]
            assert all(all_views[s] == game.view(table.state, s) for s in all_views)
        events.extend(new)
    else:
        pytest.fail(f"game not over after {max_commands} commands")
    replayed = tbl.fold(events)
    assert msgspec.json.encode(replayed) == msgspec.json.encode(table), "replay gave another state"
    return table, events


def encoded(value: Any) -> bytes:
    return msgspec.json.encode(value)


def plain(value: Any) -> Any:
    """JSON's own shape (lists, not tuples), as stored in a golden file."""
    return json.loads(msgspec.json.encode(value))


# One seeded game on the bare decider: (state decided on, seat, command, events) per command.
Turns = Callable[[int, int], Iterable[tuple[Any, int, Any, Sequence[Any]]]]


def golden_transcript(game: Game, path: Path, seats: int, seed: int, turns: Turns, options: Any = None) -> Result:
    """Replays the golden game stored at ``path`` (recorded first from ``turns(seats, seed)`` when the file is
    missing and ``SOUK_REGEN_GOLDEN`` is set): the setup and every command's events must be what the file holds;
    returns the final result, which must be the stored scores. The file has one line per command, so that a rule
    change shows as a readable diff. ``options``: the game's (default: its options type's defaults)."""
    options = game.options_type() if options is None else options
    if os.environ.get("SOUK_REGEN_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_dump(_record(game, seats, seed, turns, options)))
    assert path.exists(), f"{path} is missing: run with SOUK_REGEN_GOLDEN=1"
    golden = json.loads(path.read_text())
    commands = msgspec.json.Decoder(Union[tuple(game.command_types)])  # type: ignore[misc]
    secret = golden["seed"].to_bytes(8, "big")
    state = game.initial_state(golden["seats"], options)
    setup = game.setup(golden["seats"], options, Chance(secret, 0))
    assert plain(setup) == golden["setup"]
    for event in setup:
        state = game.evolve(state, event)
    for position, turn in enumerate(golden["transcript"], start=1):
        command = commands.decode(json.dumps(turn["command"]).encode())
        events = game.decide(state, turn["seat"], command, Chance(secret, position))
        assert plain(events) == turn["events"], f"command {position}: {turn['command']}"
        for event in events:
            state = game.evolve(state, event)
    final = game.result(state)
    assert final is not None and list(final.scores) == golden["final_scores"]
    return final


def _record(game: Game, seats: int, seed: int, turns: Turns, options: Any) -> dict:
    events = msgspec.json.Decoder(Union[tuple(game.event_types)])  # type: ignore[misc]
    setup = game.setup(seats, options, Chance(seed.to_bytes(8, "big"), 0))
    transcript = [{"seat": seat, "command": plain(command), "events": plain(new)}
                  for _, seat, command, new in turns(seats, seed)]
    state = game.initial_state(seats, options)
    for event in setup:
        state = game.evolve(state, event)
    for turn in transcript:  # the events as stored fold to the end too
        for event in turn["events"]:
            state = game.evolve(state, events.decode(json.dumps(event).encode()))
    final = game.result(state)
    return {"seats": seats, "seed": seed, "final_scores": list(final.scores), "setup": plain(setup),
            "transcript": transcript}


def _dump(golden: dict) -> str:
    head = {k: v for k, v in golden.items() if k != "transcript"}
    lines = [json.dumps(turn, ensure_ascii=False) for turn in golden["transcript"]]
    return json.dumps(head)[:-1] + ', "transcript": [\n' + ",\n".join(lines) + "\n]}\n"


class Played:
    """A table driven command by command as the engine does: every event folded with its ``Origin`` (the seat and
    id of the command that made it, as the event's envelope records them), the whole log kept for replays."""

    def __init__(self, game: Game, seats: int, options: dict | None = None, seed: bytes = b"seed") -> None:
        self.game, self.seed = game, seed
        self.table = tbl.EMPTY
        self.events: list[Any] = []
        self.origins: list[tbl.Origin] = []
        self.commands = 0
        self.send(None, tbl.newest_rules(CreateGame(game=game.name, title="test", seats=seats, options=options or {})),
                  token=None)
        for seat in range(seats):
            self.send(None, JoinSeat(name=f"p{seat}", token_hash=token_hash(seat)), token=None)

    def decide(self, seat: int | None, command: Any, token: str | None = "own") -> list[Any]:
        if token == "own":
            token = None if seat is None else token_hash(seat)
        return tbl.decide(self.table, seat, token, command, Chance(self.seed, self.table.version))

    def send(self, seat: int | None, command: Any, token: str | None = "own") -> list[Any]:
        """Decides and folds ``command`` (raises ``RuleViolation`` when refused); returns its events."""
        events = self.decide(seat, command, token)
        self.commands += 1
        origin = tbl.Origin(seat, f"c{self.commands}")
        for event in events:
            self.table = tbl.evolve(self.table, event, origin)
            self.events.append(event)
            self.origins.append(origin)
        return events

    def refused(self, seat: int | None, command: Any, token: str | None = "own") -> str:
        """The code ``command`` is refused with (fails when it is accepted); the table does not change."""
        with pytest.raises(RuleViolation) as info:
            self.decide(seat, command, token)
        assert info.value.message
        return info.value.code

    def legal(self, seat: int) -> list[Any]:
        flow = tbl.flow(self.table)
        return list(self.game.legal_commands(self.table.state, seat)) if seat in flow.awaiting else []

    def play_random(self, rng: random.Random) -> list[Any]:
        """One random legal command of a random awaited seat."""
        seat = rng.choice(tbl.flow(self.table).awaiting)
        return self.send(seat, rng.choice(self.legal(seat)))


def play_with_undos(name: str, seats: int, seed: int, undo: str, commands: int,
                    check: Callable[[Played], None] | None = None) -> tuple[Played, dict[str, int]]:
    """Up to ``commands`` commands: legal game commands, and now and then an undo request from a seat that may
    ask one (``tbl.undo_targets``), answered by random agreements, a decline, a withdrawal or a new game command.
    ``check`` runs before each command."""
    rng = random.Random(seed)
    played = Played(get_game(name), seats, {"undo": undo}, seed=seed.to_bytes(4, "big"))
    counts = {"applied": 0, "requested": 0, "declined": 0, "ended_by_a_move": 0}
    for _ in range(commands):
        if played.table.status != tbl.PLAYING:
            break
        if check is not None:
            check(played)
        request = played.table.request
        if request is not None:
            waiting = [s for s in request.asked if s not in request.accepted]
            choice = rng.random()
            if choice < 0.6:
                events = played.send(rng.choice(waiting), AcceptUndo())
                counts["applied"] += isinstance(events[-1], UndoApplied)
            elif choice < 0.75:
                played.send(rng.choice([*waiting, request.seat]), DeclineUndo())
                counts["declined"] += 1
            else:
                played.play_random(rng)
                counts["ended_by_a_move"] += 1
                assert played.table.request is None
            continue
        asking = [(s, v) for s in range(seats) for v in tbl.undo_targets(played.table, s)]
        if asking and rng.random() < 0.3:
            seat, version = rng.choice(asking)
            [*_, event] = played.send(seat, RequestUndo(to_version=version))
            if isinstance(event, UndoApplied):
                counts["applied"] += 1
                assert encoded(played.table.state) == encoded(tbl.fold(played.events[:version]).state)
            else:
                assert isinstance(event, UndoRequested)
                counts["requested"] += 1
            continue
        played.play_random(rng)
    return played, counts
