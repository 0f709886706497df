"""The platform's own commands and events: creating a game, taking seats, starting and ending, undo.

They wrap every game the same way, so the engine, the projectors and the lobby read them without knowing
the game being played. Undo (issue #10): a seat takes back its own last command(s), at once or with the other
seats' consent, never across an undo barrier (a chance outcome, a reveal); docs/rules-decisions.md (Undo).
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from contracts.base import Command, Event, upcast


# --- commands -------------------------------------------------------------------------------------------

class ForkedFrom(msgspec.Struct, frozen=True):
    """Where a fork comes from: a finished game and the version of its position (``POST /games/{id}/fork``)."""

    game_id: str
    version: int


class Fork(msgspec.Struct, frozen=True):
    """A fork's position: the game events that were live at ``source.version`` of the source game (the undone ones
    left out), replayed as the fork's first events. The gateway reads them from the source's stream; the record of
    the fork holds them in its CreateGame, so the fork verifies without the source."""

    source: ForkedFrom
    events: tuple[Any, ...]  # the game's events, as JSON objects with their tags


class CreateGame(Command, tag="table.CreateGame"):
    game: str
    title: str
    seats: int
    options: dict[str, Any] = {}
    # 64 hex digits (the server's own 32 bytes), for a reproducible game (tests, benchmarks): allowed only with
    # ``unfair`` true (else refused: ``seed_needs_unfair``), and the game says so to everyone (GameCreated.unfair),
    # since whoever chose it can predict every shuffle and roll.
    seed: str | None = None
    unfair: bool = False
    creator_hash: str = ""  # sha256 hex of the creator's token: it may cancel the game before it starts
    invite_hash: str = ""  # sha256 hex of an invite code: a private game, joined with the code, never listed
    rematch_of: str = ""  # the finished game this one replays with the same players
    imported_from: str = ""  # `souk import`: the id of the game whose record this one is made from
    fork: Fork | None = None  # a fork of a finished game at a version (never from a client's body: the gateway's)
    # ``options`` may also hold ``"undo"``: the table's undo policy (``UNDO_POLICIES``, default ``"own_turn"``);
    # the table takes it out of the game's options and stores it in ``GameCreated.undo``.
    # And ``"clock"``: the table's clocks (a ``ClockOptions`` object, refused with ``bad_clock`` when invalid),
    # stored in ``GameCreated.clock``.


class JoinSeat(Command, tag="table.JoinSeat"):
    name: str
    token_hash: str  # sha256 hex of the secret seat token the gateway handed out
    seat: int | None = None  # None: the lowest free seat
    invite_hash: str = ""  # sha256 hex of the invite code, for a private game
    # The seat's own contribution to the game's chance: 64 hex digits the client draws at random ("": none, the
    # seat then trusts the server's seed alone). Published in SeatJoined; mixed into the game's seed at the start.
    entropy: str = ""


class SeatBots(Command, tag="table.SeatBots"):
    """Free seats of an open game taken by the server's bots (``POST /games/{id}/bots``): ``seats`` (None: every
    free seat), each played by ``strategy`` (``BOT_STRATEGIES``) from the start. Sent for no seat, with no token;
    a private game's needs its invite (``invite_hash``), as a join does. The game starts when the last seat is
    taken, as with any join."""

    strategy: str
    seats: tuple[int, ...] | None = None
    invite_hash: str = ""


class LeaveSeat(Command, tag="table.LeaveSeat"):
    """Gives a seat back before the game starts (the seat and its token come with the command's envelope)."""


class CancelGame(Command, tag="table.CancelGame"):
    """Cancels a game that never started: by the platform (the engine's upkeep expires open games, with no token)
    or by its creator (with the creator's token). No seat may send it."""

    reason: str = "expired"


class RequestUndo(Command, tag="table.RequestUndo"):
    """Take back this seat's last command(s): the game goes back to how it was at ``to_version`` (a version that
    ends a command, after the last undo barrier). Granted at once when every game event since came from this
    seat's commands; with the policy ``with_consent`` the other seats are asked otherwise."""

    to_version: int


class AcceptUndo(Command, tag="table.AcceptUndo"):
    """An asked seat agrees to the pending undo request (the last agreement applies it)."""


class DeclineUndo(Command, tag="table.DeclineUndo"):
    """An asked seat refuses the pending undo request (it ends); from the requester: it withdraws its request."""


# --- events ---------------------------------------------------------------------------------------------

class GameCreated(Event, tag="table.GameCreated"):
    game: str
    title: str
    seats: int
    options: dict[str, Any]
    seed_hash: str  # sha256 hex of the server's secret seed; the seed itself is revealed by GameEnded
    # The creator chose the seed (``CreateGame.unfair``): it knows every chance outcome in advance. Schema 1 named
    # it ``seed_chosen`` (``_game_created_1``).
    unfair: bool = False
    creator_hash: str = ""  # redacted in the history, like a seat's token hash
    private: bool = False  # joined by invite code only, and not listed in the lobby
    invite_hash: str = ""  # redacted in the history
    rematch_of: str = ""
    undo: str = "own_turn"  # the undo policy: "none" / "own_turn" / "with_consent" (games stored before: own_turn)
    imported_from: str = ""  # made by `souk import` from the record of this game (of another server)
    # The table's clocks (``CreateGame.options["clock"]``, issue #19). UNSET (none given) is left out of the
    # encoding, so a game without clocks stores the bytes it stored before (a record made before still re-runs to
    # the same hashes); a reader takes UNSET as None (``event.clock or None``).
    clock: ClockOptions | None | UnsetType = UNSET
    schema: int = 2  # this shape's version (contracts.base.upcast)


@upcast("table.GameCreated", 1)
def _game_created_1(raw: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 (before 2026-11-23): ``seed_chosen`` is now ``unfair``."""
    raw["unfair"] = raw.pop("seed_chosen", False)
    return raw


class GameForked(Event, tag="table.GameForked"):
    """Right after a fork's GameCreated: the game events that follow replay the position of ``source`` (a finished
    game) at its version, up to the first SeatJoined; the fork starts from that position (no setup) once its new
    seats are taken. (An event of its own, not a GameCreated field: GameCreated's bytes stay as they were.)"""

    source: ForkedFrom


class SeatJoined(Event, tag="table.SeatJoined"):
    seat: int
    name: str
    token_hash: str
    entropy: str = ""  # the seat's contribution to the game's chance (JoinSeat.entropy), public; "" none


class BotSeated(Event, tag="table.BotSeated"):
    """A free seat taken by the server's bots (``SeatBots``): ``name`` shows in the lobby, ``strategy`` plays every
    decision of the seat (the clock worker's takeover, ``PlayFor`` / ``BotMoved`` as for an absent seat). The seat
    has no token: no one sends its commands."""

    seat: int
    name: str
    strategy: str


class SeatLeft(Event, tag="table.SeatLeft"):
    seat: int


class GameStarted(Event, tag="table.GameStarted"):
    first_seat: int = 0
    # sha256 hex of the game's chance seed (domain.chance.game_seed: the server's seed mixed with the entropy of
    # every seat taken now), fixed here; "" when no seat gave entropy (the chance is then the server's seed).
    chance_hash: str = ""


class GameEnded(Event, tag="table.GameEnded"):
    scores: tuple[int, ...]
    winners: tuple[int, ...]
    seed: str  # the server's seed, hex; check: sha256(bytes.fromhex(seed)) == GameCreated.seed_hash
    details: dict[str, Any] = {}


class GameCancelled(Event, tag="table.GameCancelled"):
    reason: str  # "expired": nobody filled its seats in time; "cancelled": by its creator


class UndoRequested(Event, tag="table.UndoRequested"):
    """``seat`` asks to go back to ``to_version``; each seat of ``asked`` answers (AcceptUndo / DeclineUndo). A
    decline, or any game event, ends the request."""

    seat: int
    to_version: int
    asked: tuple[int, ...]


class UndoAccepted(Event, tag="table.UndoAccepted"):
    seat: int


class UndoDeclined(Event, tag="table.UndoDeclined"):
    seat: int  # the requester itself: it withdrew its request


class UndoApplied(Event, tag="table.UndoApplied"):
    """The game is again as it was at ``to_version``: every event after it (up to this one) is undone. The log
    keeps them; the fold skips them (``domain.table``)."""

    to_version: int
    by_seat: int


# --- clocks, leaving and bots (issue #19) --------------------------------------------------------------
# Time enters the rules only as data: the engine's clock at a command (``domain.table.decide(..., now=)``, the
# ``recorded_at`` of its events, which a record's re-run passes again) and the instants these events carry.

CLOCK_TIMEOUT_POLICIES = ("bot", "absent", "forfeit")
# The bots' strategies a seat may be given (``SeatBots.strategy``): ``services.bots.STRATEGIES`` plays them (a test
# checks the two lists agree).
BOT_STRATEGIES = ("random", "greedy", "mcts", "seeker")


class ClockOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A table's clocks: ``CreateGame.options["clock"]`` (taken out of the game's options like ``undo``), every
    time in seconds. A seat's deadline for the decision it owes is the instant it became awaited plus
    ``per_decision`` plus its ``reserve`` left: time past ``per_decision`` is taken from the reserve, and each of
    its moves adds ``increment`` to it. With neither ``per_decision`` nor ``reserve`` the table has no clock."""

    per_decision: float = 0.0  # each decision may take this long before the reserve is spent (0: none)
    reserve: float = 0.0  # a seat's reserve for the whole game (0: none)
    increment: float = 0.0  # added to a seat's reserve after each of its moves
    on_timeout: str = "bot"  # CLOCK_TIMEOUT_POLICIES: who plays when a clock runs out (and after a resignation)


class SeatClock(msgspec.Struct, frozen=True, array_like=True):
    """One seat's clock: the instant (unix seconds) its current decision times out (None: not awaited, or out of
    the game), and its reserve left (seconds) when that decision began."""

    deadline: float | None
    reserve: float


class GameTimer(msgspec.Struct, frozen=True):
    """A timer of the game's own rules (Samarkand's real-time countdown): the game's ``timer(state)`` hook names
    it by ``key``; it fires at ``due`` (``Tick``) unless the key changes first."""

    key: str
    due: float


class Timeout(Command, tag="table.Timeout"):
    """The platform's (the clock worker's): ``seat``'s clock ran out at ``deadline``. Refused (``not_due``) when
    that is no longer the seat's deadline, or not reached yet by the engine's clock."""

    seat: int
    deadline: float


class Tick(Command, tag="table.Tick"):
    """The platform's (the clock worker's): the game's timer ``key`` is due (``not_due`` otherwise)."""

    key: str
    due: float


class PlayFor(Command, tag="table.PlayFor"):
    """The platform's: a bot's move for ``seat`` (absent, out of the game, or timed out on this decision);
    ``command`` is one of the seat's legal commands, as JSON with its tag; ``strategy`` names the bot."""

    seat: int
    strategy: str
    command: dict[str, Any]


class Resign(Command, tag="table.Resign"):
    """A seat leaves a game in play for good (``POST .../resign``; a ``LeaveSeat`` after the start does the same):
    bots play its decisions, or the game ends when one seat is left."""


class ClocksSet(Event, tag="table.ClocksSet"):
    """The table's clocks at ``at`` (the engine's clock at the command), one per seat, and the game's timer: after
    any command that changed a deadline, a reserve or the timer, in a table with clocks or a timer."""

    at: float
    clocks: tuple[SeatClock, ...] = ()
    timer: GameTimer | None = None


class SeatTimedOut(Event, tag="table.SeatTimedOut"):
    seat: int
    deadline: float


class SeatAbsent(Event, tag="table.SeatAbsent"):
    """A bot plays for ``seat`` until it comes back (any command with its token: ``SeatReturned`` first)."""

    seat: int


class SeatReturned(Event, tag="table.SeatReturned"):
    seat: int


class SeatOut(Event, tag="table.SeatOut"):
    """``seat`` is out of the game for good (``reason``: "resigned" / "forfeited"): bots play its decisions, it
    wins nothing; when one seat is left in the game, the game ends."""

    seat: int
    reason: str


class BotMoved(Event, tag="table.BotMoved"):
    """The game events after it, up to the next command's, are a bot's move (``strategy``) for ``seat``."""

    seat: int
    strategy: str


CLOCK_COMMANDS = (Timeout, Tick, PlayFor)  # the platform's alone: the gateway never takes them from a client
CLOCK_EVENTS = (ClocksSet, SeatTimedOut, SeatAbsent, SeatReturned, SeatOut, BotMoved)


class SeatClockView(msgspec.Struct, frozen=True):
    """What a reader sees of one seat's clock and standing: its deadline (None: nothing awaited from it), its
    reserve left (seconds) when its current decision began, and whether a bot plays for it."""

    seat: int
    deadline: float | None = None
    reserve: float = 0.0
    absent: bool = False  # timed out (policy "absent"): a bot plays until it sends a command
    out: str = ""  # "resigned" / "forfeited": out of the game for good
    bot: bool = False  # a bot plays its current decision


class ClockView(msgspec.Struct, frozen=True):
    """A table's clocks as every reader sees them (``TableView.clock``): the options, each seat's, the timer."""

    options: ClockOptions | None = None
    seats: tuple[SeatClockView, ...] = ()
    timer: GameTimer | None = None
    at: float = 0.0  # the engine's clock when they were set


class SeatPresence(msgspec.Struct, frozen=True):
    """Whether a seat's player is connected (a WebSocket open, or a request with its token in the last minute),
    and since when (unix seconds; 0 when never seen). Not connected, ``since`` is when it left."""

    seat: int
    connected: bool
    since: float = 0.0


UNDO_POLICIES = ("none", "own_turn", "with_consent")
# Sent by a seat through its own route (POST .../seats/{seat}/undo), not among TABLE_COMMANDS: decoders of seat
# commands (the gateway's, the engine's) add them where they accept undo.
UNDO_COMMANDS = (RequestUndo, AcceptUndo, DeclineUndo)
UNDO_EVENTS = (UndoRequested, UndoAccepted, UndoDeclined, UndoApplied)
TABLE_COMMANDS = (CreateGame, JoinSeat, LeaveSeat, CancelGame, SeatBots)
TABLE_EVENTS = (GameCreated, GameForked, SeatJoined, SeatLeft, BotSeated, GameStarted, GameEnded, GameCancelled,
                *UNDO_EVENTS, *CLOCK_EVENTS)


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


class UndoneRange(msgspec.Struct, frozen=True):
    """Events ``first`` to ``last`` (versions) are undone: ``UndoApplied`` at version ``last + 1`` took them back
    (the request and answers that led to it fall inside the range too)."""

    first: int
    last: int
    by_seat: int


class UndoRequest(msgspec.Struct, frozen=True):
    """A pending request: ``seat`` asks to go back to ``to_version``; ``accepted``: the asked seats that agreed."""

    seat: int
    to_version: int
    asked: tuple[int, ...]
    accepted: tuple[int, ...] = ()


class UndoView(msgspec.Struct, frozen=True):
    """What a reader sees of undo at a table: the policy, ``undone``: the latest undo's range (at most one; every
    undo's is in the history, whose entries it took back say ``undone``), the pending request, and (for a seat)
    the versions it may ask to go back to now (``RequestUndo.to_version``), latest first."""

    policy: str
    # It listed every undo until 2026-11-27 (issue #18): each undo made every view and push bigger.
    undone: tuple[UndoneRange, ...] = ()
    request: UndoRequest | None = None
    to_versions: tuple[int, ...] = ()
