"""Read models the projectors keep and the gateway serves."""

from __future__ import annotations

from typing import Any

import msgspec

from contracts.table import ClockView, Flow, ForkedFrom, Result, SeatPresence, UndoView


class SeatInfo(msgspec.Struct, frozen=True):
    seat: int
    name: str | None  # None: the seat is free
    bot: str | None = None  # the strategy of the server's bot that plays the seat from the start (POST .../bots)


class TableView(msgspec.Struct, frozen=True):
    """What one seat (or a spectator, ``seat`` None) sees of a game at one version."""

    game_id: str
    game: str
    title: str
    version: int
    status: str  # open / playing / over
    seat: int | None
    seats: tuple[SeatInfo, ...]
    flow: Flow
    legal: tuple[Any, ...]  # the commands this seat may send now, ready to post back as they are
    view: Any  # the game's own view for this seat (a tagged *View struct), None before the game starts
    result: Result | None = None
    unfair: bool = False  # the creator chose the seed (CreateGame.unfair): it can predict every shuffle and roll
    undo: UndoView | None = None  # the undo policy, what was undone, a pending request (None before the start)
    forked_from: ForkedFrom | None = None  # a fork: the finished game and the version its position comes from
    clock: ClockView | None = None  # the table's clocks, bots and leavers (issue #19); None: no clock, nobody out
    presence: tuple[SeatPresence, ...] = ()  # which seats are connected (the gateway's, at the time it serves)


class ViewPatch(msgspec.Struct, frozen=True):
    """A WebSocket frame on a socket opened with ``?patch=1``: the JSON Patch (RFC 6902 operations: add, remove,
    replace) that makes the view of version ``from`` this socket was sent last into the view of ``version`` (the
    same version: a seat's presence changed). ``services.gateway.fanout`` computes it."""

    patch: tuple[dict[str, Any], ...]
    from_: int = msgspec.field(name="from")
    version: int


class ViewsUpdated(msgspec.Struct, frozen=True):
    """Published on ``souk:updates:{game_id}`` when a game's read models reach a new version."""

    version: int
    status: str
    awaiting: tuple[int, ...]  # the seats whose decision is awaited now


class LobbyEntry(msgspec.Struct, frozen=True):
    game_id: str
    game: str
    title: str
    seats: tuple[SeatInfo, ...]
    status: str  # open / playing / over (rewritten when a seat is taken, the game starts or ends)
    created_at: float
    unfair: bool = False  # the creator chose the seed (CreateGame.unfair): it can predict every shuffle and roll
    private: bool = False  # joined by invite code only; not listed (GET /games/{id} still shows it)
    rematch_of: str = ""  # the finished game this one replays with the same players
    imported_from: str = ""  # made by `souk import` from this game's record (a finished game)
    forked_from: ForkedFrom | None = None  # a fork: the finished game and the version its position comes from
    presence: tuple[SeatPresence, ...] = ()  # which seats are connected (the gateway's, at the time it serves)


class HistoryEntry(msgspec.Struct, frozen=True):
    """One event as the reader may see it (another seat's secrets replaced)."""

    seq: int
    type: str
    seat: int | None
    command_id: str
    recorded_at: float
    event: Any
    hash: str
    prev_hash: str
    commitment: str = ""  # chain 2: set when the event hides something (contracts.envelope.ChainLink)
    chain: int = 1  # how ``hash`` is computed: 2 = contracts.envelope.ChainLink, 1 = the whole envelope (older)
    # Taken back by an undo (``TableView.undo.undone``: the UndoApplied and the request and answers that led to it
    # fall in the range too): it stays in the log and the chain but no longer counts. Set when the history is read
    # (a later undo changes it), never hashed.
    undone: bool = False


class HistoryRecord(msgspec.Struct, frozen=True):
    """How the projector stores one event of a game's history: as everybody without a variant of their own sees
    it (``shared``), and the variants of the audiences ("0", "1", ..., "spectator") that see it otherwise (the
    seat that owns a secret). Records stored before 2026-11-22 hold no ``shared`` for a secret event, and a
    variant for every audience: they read the same."""

    shared: HistoryEntry | None = None
    by_audience: dict[str, HistoryEntry] = {}

    def for_audience(self, audience: str) -> HistoryEntry:
        variant = self.by_audience.get(audience)
        return variant if variant is not None else self.shared


class HistoryPage(msgspec.Struct, frozen=True):
    game_id: str
    seat: int | None
    entries: tuple[HistoryEntry, ...]
    next_after: int  # pass as ``after`` for the next page
    version: int
