"""Forks (issue #10 section 3): a new game from a finished game's position at a version, to play a what-if.

``POST /games/{id}/fork {version, title?, seats?}`` (the gateway) asks ``fork_of`` for the fork's ``CreateGame``,
built from the source's game stream:

- a private source (joined by invite code) is forked by its seats only, with a seat's token (401
  ``missing_token`` / ``bad_token`` otherwise), and its fork is private too (``source_is_private``): nothing
  public names a private game;
- the source must be over (a running game's state holds secrets a fork would expose; a cancelled game never had a
  position): 409 ``game_not_over`` otherwise;
- the position is the game at ``version`` as time travel gives it (``GET …/view?at=``): a version inside a
  command (a join's start and setup, a move and its reveal) is the game before that command; it must be after the
  start and before the end: 422 ``not_a_position`` otherwise;
- the fork's first events replay the position: every game event of the source up to there that was live then
  (the events an undo had taken back before ``version`` are left out, as the fold left them out). They travel in
  the CreateGame (``contracts.table.Fork``), so the fork's record re-runs and verifies without the source's;
- its seats are new (taken by POST /games/{fork}/seats with new tokens, or at once by the names in ``seats``),
  its server seed is its own (a new commitment), mixed with its new seats' entropy when they are all taken: every
  roll and shuffle after the position is fresh.

Decks are kept as they were: the position is the source's position, the order of a deck shuffled before
``version`` included, and anyone who read the source's audit knows that order (README, Forks).
"""

from __future__ import annotations

import secrets
from typing import Any

import msgspec

from contracts.envelope import EventEnvelope
from contracts.table import TABLE_EVENTS, CreateGame, Fork, ForkedFrom, GameCreated, GameEnded, GameStarted
from domain import table as tbl
from domain.text import TITLE_MAX
from services.store.codec import decode_stream, origins, same_command

_TABLE_EVENT_TYPES = tuple(TABLE_EVENTS)


class ForkRefused(ValueError):
    """Why a fork cannot be made: an HTTP status, a stable code and a message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def position_version(envelopes: list[EventEnvelope], version: int) -> int:
    """``version``, or, inside a command (its events were appended together), the version before that command:
    the version time travel answers for ``version`` (``services.history.travel.table_at``)."""
    if version >= len(envelopes) or not same_command(envelopes[version - 1], envelopes[version]):
        return version
    i = version  # envelopes[i] is the event at version + 1
    while i > 0 and same_command(envelopes[i - 1], envelopes[i]):
        i -= 1
    return envelopes[i].seq - 1


def source_is_private(envelopes: list[EventEnvelope]) -> bool:
    """Whether the game is private (created with an invite code): then so is its fork."""
    events = decode_stream(envelopes[:1])
    return bool(events) and isinstance(events[0], GameCreated) and bool(events[0].invite_hash)


def fork_of(source_id: str, envelopes: list[EventEnvelope], version: int, title: str | None,
            token_hash: str | None = None) -> CreateGame:
    """The CreateGame of a fork of ``source_id`` (its whole game stream: ``envelopes``) at ``version``.
    ``token_hash``: the hash of the caller's token, which a private source's seats need."""
    events = decode_stream(envelopes)
    if not events or not isinstance(events[0], GameCreated):
        raise ForkRefused(404, "game_not_found", f"there is no game {source_id!r}")
    if events[0].invite_hash:
        _check_a_seat(events, envelopes, token_hash)
    if not isinstance(events[-1], GameEnded):  # a game that is over ends with it (nothing follows the end)
        raise ForkRefused(409, "game_not_over", "only a game that is over can be forked: a running game's state "
                                                "holds secrets that the fork would expose")
    if not 1 <= version <= len(envelopes):
        raise ForkRefused(400, "bad_version", f"version is 1 to {len(envelopes)}, not {version}")
    at = position_version(envelopes, version)
    table = tbl.fold(events[:at], origins=origins(envelopes[:at]))
    if table.status != tbl.PLAYING:
        started = next((e.seq for e, ev in zip(envelopes, events) if isinstance(ev, GameStarted)), None)
        raise ForkRefused(422, "not_a_position",
                          f"version {version} is not a position of the game in play (it started at version "
                          f"{started} and ended at version {len(envelopes)}): fork between the two")
    undone = tbl.undone_ranges(events[:at])
    live = [msgspec.to_builtins(event) for env, event in zip(envelopes[:at], events[:at])
            if not isinstance(event, _TABLE_EVENT_TYPES)
            and not any(r.first <= env.seq <= r.last for r in undone)]
    created: GameCreated = events[0]
    # the table's options too (taken out of the game's at creation): the undo policy and the clocks
    options: dict[str, Any] = {**created.options, "undo": created.undo,
                               **({"clock": msgspec.to_builtins(created.clock)} if created.clock else {})}
    name = title if title is not None else f"{created.title} (fork at {version})"[-TITLE_MAX:]
    return CreateGame(created.game, name, created.seats, options,
                      fork=Fork(ForkedFrom(source_id, version), tuple(live)))


def _check_a_seat(events: list[Any], envelopes: list[EventEnvelope], token_hash: str | None) -> None:
    """A private game is forked by one of its seats: the caller's token is one of theirs."""
    if not token_hash:
        raise ForkRefused(401, "missing_token", "a private game is forked by its players only: send a seat token "
                                                "as 'Authorization: Bearer <token>'")
    table = tbl.fold(events, origins=origins(envelopes))
    if not any(p is not None and secrets.compare_digest(p.token_hash, token_hash) for p in table.players):
        raise ForkRefused(401, "bad_token", "the token is not one of this game's seat tokens")
