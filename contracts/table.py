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
    creator_hash: str = ""  # sha256 hex of the creator's token: it may cancel the game before it starts
    invite_hash: str = ""  # sha256 hex of an invite code: a private game, joined with the code, never listed
    rematch_of: str = ""  # the finished game this one replays with the same players


class JoinSeat(Command, tag="table.JoinSeat"):
    name: str
    token_hash: str  # sha256 hex of the secret seat token the gateway handed out
    seat: int | None = None  # None: the lowest free seat
    invite_hash: str = ""  # sha256 hex of the invite code, for a private game


class LeaveSeat(Command, tag="table.LeaveSeat"):
    """Gives a seat back before the game starts (the seat and its token come with the command's envelope)."""


class CancelGame(Command, tag="table.CancelGame"):
    """Cancels a game that never started: by the platform (the engine's upkeep expires open games, with no token)
    or by its creator (with the creator's token). No seat may send it."""

    reason: str = "expired"


# --- events ---------------------------------------------------------------------------------------------

class GameCreated(Event, tag="table.GameCreated"):
    game: str
    title: str
    seats: int
    options: dict[str, Any]
    seed_hash: str  # sha256 hex of the secret seed; the seed itself is revealed by GameEnded
    seed_chosen: bool = False  # the creator chose the seed (and so knows every chance outcome in advance)
    creator_hash: str = ""  # redacted in the history, like a seat's token hash
    private: bool = False  # joined by invite code only, and not listed in the lobby
    invite_hash: str = ""  # redacted in the history
    rematch_of: str = ""


class SeatJoined(Event, tag="table.SeatJoined"):
    seat: int
    name: str
    token_hash: str


class SeatLeft(Event, tag="table.SeatLeft"):
    seat: int


class GameStarted(Event, tag="table.GameStarted"):
    first_seat: int = 0


class GameEnded(Event, tag="table.GameEnded"):
    scores: tuple[int, ...]
    winners: tuple[int, ...]
    seed: str  # hex; check: sha256(bytes.fromhex(seed)) == GameCreated.seed_hash
    details: dict[str, Any] = {}


class GameCancelled(Event, tag="table.GameCancelled"):
    reason: str  # "expired": nobody filled its seats in time; "cancelled": by its creator


TABLE_COMMANDS = (CreateGame, JoinSeat, LeaveSeat, CancelGame)
TABLE_EVENTS = (GameCreated, SeatJoined, SeatLeft, GameStarted, GameEnded, GameCancelled)


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
