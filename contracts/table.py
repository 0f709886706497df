"""The platform's own commands and events: creating a game, taking seats, starting and ending.

They wrap every game the same way, so the engine, the projectors and the lobby read them without knowing
the game being played.
"""

from __future__ import annotations

from typing import Any

import msgspec

from contracts.base import Command, Event


# --- commands -------------------------------------------------------------------------------------------

class CreateGame(Command, tag="table.CreateGame"):
    game: str
    title: str
    seats: int
    options: dict[str, Any] = {}
    # 64 hex digits (the server's own 32 bytes), for a reproducible game: the game then says so to everyone
    # (GameCreated.seed_chosen), since whoever chose it can predict every shuffle and roll.
    seed: str | None = None


class JoinSeat(Command, tag="table.JoinSeat"):
    name: str
    token_hash: str  # sha256 hex of the secret seat token the gateway handed out
    seat: int | None = None  # None: the lowest free seat


class CancelGame(Command, tag="table.CancelGame"):
    """Cancels a game that never started. Sent by the platform itself (the engine's upkeep expires open games;
    no seat may send it)."""

    reason: str = "expired"


# --- events ---------------------------------------------------------------------------------------------

class GameCreated(Event, tag="table.GameCreated"):
    game: str
    title: str
    seats: int
    options: dict[str, Any]
    seed_hash: str  # sha256 hex of the secret seed; the seed itself is revealed by GameEnded
    seed_chosen: bool = False  # the creator chose the seed (and so knows every chance outcome in advance)


class SeatJoined(Event, tag="table.SeatJoined"):
    seat: int
    name: str
    token_hash: str


class GameStarted(Event, tag="table.GameStarted"):
    first_seat: int = 0


class GameEnded(Event, tag="table.GameEnded"):
    scores: tuple[int, ...]
    winners: tuple[int, ...]
    seed: str  # hex; check: sha256(bytes.fromhex(seed)) == GameCreated.seed_hash
    details: dict[str, Any] = {}


class GameCancelled(Event, tag="table.GameCancelled"):
    reason: str  # "expired": nobody filled its seats in time


TABLE_COMMANDS = (CreateGame, JoinSeat, CancelGame)
TABLE_EVENTS = (GameCreated, SeatJoined, GameStarted, GameEnded, GameCancelled)


class Flow(msgspec.Struct, frozen=True):
    """Whose decision is awaited, readable without knowing the game (boardgame.io's ``ctx``)."""

    phase: str
    awaiting: tuple[int, ...] = ()  # seats that may (and must) act now; several at once for simultaneous choices
    round: int = 0
    turn_seat: int | None = None  # the seat whose turn it is, when the game has turns


class Result(msgspec.Struct, frozen=True):
    scores: tuple[int, ...]
    winners: tuple[int, ...]
    details: dict[str, Any] = {}
