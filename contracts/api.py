"""HTTP request and response bodies of the gateway (inbound ones strict), and the limits of a request."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from contracts.envelope import Reply
from contracts.table import CLOCK_TIMEOUT_POLICIES, UNDO_POLICIES, ClockOptions, ForkedFrom

# The limits of a request (issue #8): over them, it is refused with a JSON error and changes nothing.
MAX_BODY_BYTES = 64 * 1024  # 413 body_too_large
MAX_BODY_DEPTH = 32  # arrays and objects nested deeper: 400 bad_request (a command's body nests 2 deep)
MAX_HEADER_BYTES = 8 * 1024  # the headers' names and values together: 431 headers_too_large
MAX_HEAD_BYTES = 64 * 1024  # the request line and headers as sent: 431 headers_too_large (uvicorn's parser)
MAX_INT = 2**63 - 1  # integers in the path and query: Redis's are signed 64-bit
MAX_RECORD_BYTES = 8 * 1024 * 1024  # POST /verify: a record (a 1,000-event game's is about 600 KB): 413 over it


class Strict(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    pass


REQUEST_ID_LENGTH = (16, 100)  # a request id's length: long enough to be unguessable; else 400 bad_request_id


class CreateGameRequest(Strict):
    game: str
    title: str
    seats: int
    options: dict[str, Any] = {}
    # 64 hex digits, for a reproducible game (tests, benchmarks): only with ``unfair`` true (else 422
    # seed_needs_unfair), and the game then shows everyone that its creator chose the seed (``unfair``)
    seed: str | None = None
    unfair: bool = False
    # A random string the client makes once per game it creates: resending the request with it (after a
    # timeout, say) answers the same game instead of creating another.
    request_id: str | None = None
    private: bool = False  # joined with the invite code the answer carries; never listed in the lobby
    # An https URL that receives the game's notices for every seat (README, Webhooks): signed with the
    # ``webhook_secret`` the answer carries.
    webhook: str | None = None


class JoinRequest(Strict):
    name: str
    seat: int | None = None
    # A random string the client makes once per seat it takes, and keeps as secret as the token: resending the
    # join with it answers the same seat and the same token instead of taking another seat.
    request_id: str | None = None
    invite: str | None = None  # a private game's invite code
    # The seat's contribution to the game's chance: 64 hex digits the client draws at random (the SDK does). The
    # server's seed is mixed with every seat's when the game starts: a seat that gives one needs to trust no one.
    entropy: str | None = None
    # An https URL that receives this seat's notices (its turn, its clock low, an undo asked, the end; README,
    # Webhooks): signed with the ``webhook_secret`` the answer carries.
    webhook: str | None = None


class BotsRequest(Strict):
    """``POST /games/{id}/bots``: free seats of an open game taken by the server's bots, which play them from the
    start (README, Bots)."""

    seats: list[Annotated[int, msgspec.Meta(ge=0, le=MAX_INT)]] | None = None  # None: every free seat
    strategy: str | None = None  # one of BOT_STRATEGIES; None: the server's takeover strategy (SOUK_TAKEOVER_STRATEGY)
    # As for a join: a resent request with it answers the same seats instead of taking others.
    request_id: str | None = None
    invite: str | None = None  # a private game's invite code


class BotsSeated(msgspec.Struct, frozen=True):
    """The seats the bots took (in seat order), their strategy, and the game's version after them (the game has
    started when they filled it)."""

    game_id: str
    version: int
    seats: tuple[int, ...]
    strategy: str


class WebhookRequest(Strict):
    """``PUT /games/{id}/webhook`` (the creator's token) or ``PUT .../seats/{seat}/webhook`` (the seat's): the URL
    Souk posts the notices to from now on, signed with a new secret (the answer's)."""

    url: str
    # As for a join: a resent request with it answers the same secret (without one, every PUT draws a new one).
    request_id: str | None = None


class Webhook(msgspec.Struct, frozen=True):
    """A game's (``seat`` None) or a seat's webhook registration: its URL, and its secret only in the answer of the
    PUT that set it (keep it: it signs the POSTs; a GET never shows it)."""

    game_id: str
    seat: int | None
    url: str
    secret: str | None = None


class CommandRequest(Strict):
    command_id: str  # chosen by the client, unique per game and seat; resending it is safe
    command: dict[str, Any]  # a tagged command, e.g. {"type": "samarkand.ChooseCard", ...}: see /legal
    # The game's version the client decided on (its view's ``version``): refused as ``stale`` if the game has
    # moved on meanwhile, so a double click or a late resend never plays a move decided on an older state. The
    # other seats' answers in a simultaneous step do not make it stale: the seat was awaited for this decision
    # since that version (``domain.table.awaited_since``).
    expected_version: int | None = None


class UndoCommandRequest(Strict):
    """Take back this seat's last command(s): the game goes back to how it was at ``to_version`` (one of its view's
    ``undo.to_versions``). Granted at once, or asked to the other seats (the table's policy ``with_consent``)."""

    command_id: str  # as for a command: unique per game and seat; resending it is safe
    to_version: Annotated[int, msgspec.Meta(ge=0, le=MAX_INT)]  # else 400 bad_request
    expected_version: int | None = None  # as for a command: refused as ``stale`` if the game moved on


class ForkRequest(Strict):
    """A new game from a finished game's position at ``version`` (as ``GET …/view?at=`` shows it), for a what-if."""

    version: Annotated[int, msgspec.Meta(ge=1, le=MAX_INT)]  # else 400 bad_request
    title: str | None = None  # default: the source's title and "(fork at N)"
    # Names that take the fork's seats at once, in seat order (at most its number of seats): the answer holds their
    # tokens. The other seats are taken as in any game (POST /games/{fork}/seats).
    seats: list[str] | None = None
    request_id: str | None = None  # as for a creation: a resent request answers the same fork
    private: bool = False


class UndoAnswerRequest(Strict):
    """An answer to the pending undo request (``undo/accept``, ``undo/decline``; the requester declines to
    withdraw it)."""

    command_id: str
    expected_version: int | None = None


class ResignRequest(Strict):
    """``POST .../seats/{seat}/resign``: the seat leaves the game in play for good. ``expected_version``: refused as
    ``stale`` when the game moved on since (None: resign whatever happened since)."""

    command_id: str
    expected_version: int | None = None


class Created(msgspec.Struct, frozen=True):
    game_id: str
    version: int
    creator_token: str = ""  # lets its holder cancel the game before it starts (DELETE /games/{id}); keep it secret
    invite_code: str | None = None  # a private game's: players join with it
    # The secret that signs the POSTs to the request's ``webhook`` (none without one): keep it secret
    webhook_secret: str | None = None


class Forked(msgspec.Struct, frozen=True):
    """A fork: its id and version, where it comes from, the creator token, and the seats taken at once."""

    game_id: str
    version: int
    forked_from: ForkedFrom
    creator_token: str = ""  # as a creation's: cancels the fork before it starts
    invite_code: str | None = None
    seats: tuple[Joined, ...] = ()


class Left(msgspec.Struct, frozen=True):
    game_id: str
    seat: int
    version: int


class Cancelled(msgspec.Struct, frozen=True):
    game_id: str
    version: int


class Rematch(msgspec.Struct, frozen=True):
    """The rematch of a finished game, and the caller's seat in it (the seat it had)."""

    game_id: str
    seat: int
    token: str
    version: int


class Joined(msgspec.Struct, frozen=True):
    game_id: str
    seat: int
    token: str  # the seat's secret: send it as "Authorization: Bearer <token>" (or ?token= on WebSockets)
    version: int
    # The secret that signs the POSTs to the join's ``webhook`` (none without one): keep it secret
    webhook_secret: str | None = None


class ApiErrorBody(msgspec.Struct, frozen=True):
    code: str
    message: str


# A seat's WebSocket carries its commands too (``/games/{game_id}/seats/{seat}/ws``): the client sends a
# ``CommandFrame``, the gateway answers each with a ``CommandAnswer`` on the same socket, the outcome the POST
# ``/games/{game_id}/seats/{seat}/commands`` gives the same body (``services.gateway.controllers.sockets``).
COMMAND_FRAME = "souk.Command"
COMMAND_ANSWER = "souk.CommandAnswer"


class CommandFrame(Strict, tag_field="type", tag=COMMAND_FRAME):
    """A command sent on a seat's WebSocket: the body of ``POST …/seats/{seat}/commands`` (``CommandRequest``)
    with ``"type": "souk.Command"``; the socket's token is the seat's authorization."""

    command_id: str  # as the POST's: unique per game and seat; resending it answers the first answer again
    command: dict[str, Any]  # a tagged command, one of the view's ``legal``
    expected_version: int | None = None  # as the POST's: refused as ``stale`` if the game has moved on


class CommandAnswer(msgspec.Struct, frozen=True, omit_defaults=True, tag_field="type", tag=COMMAND_ANSWER):
    """The gateway's answer, on the same socket, to one frame the client sent: what the POST would have answered,
    its status (200: accepted) and its body, ``reply`` (the engine's ``Reply``) or ``error`` (the POST's
    ``{"code", "message"}``). A frame that is no ``CommandFrame`` gets one too: 400 ``bad_frame``, its
    ``command_id`` when one could be read, else empty. ``retry_after``: the POST's ``Retry-After`` (429, 503)."""

    command_id: str
    status: int
    reply: Reply | None = None
    error: ApiErrorBody | None = None
    retry_after: int | None = None


class ClockInfo(msgspec.Struct, frozen=True):
    """The table option ``clock`` (``CreateGame.options["clock"]``, a ``ClockOptions``): its fields with their
    defaults (``defaults``: no clock), and the policies ``on_timeout`` may name."""

    defaults: ClockOptions = msgspec.field(default_factory=ClockOptions)
    policies: tuple[str, ...] = CLOCK_TIMEOUT_POLICIES


class UndoInfo(msgspec.Struct, frozen=True):
    """The table option ``undo``: its default and the policies it may name."""

    default: str = "own_turn"
    policies: tuple[str, ...] = UNDO_POLICIES


class TableOptionsInfo(msgspec.Struct, frozen=True):
    """The options every game's table takes beside the game's own (in ``CreateGame.options`` too)."""

    clock: ClockInfo = msgspec.field(default_factory=ClockInfo)
    undo: UndoInfo = msgspec.field(default_factory=UndoInfo)


class GameInfo(msgspec.Struct, frozen=True):
    name: str
    title: str
    min_seats: int
    max_seats: int
    options: dict[str, Any]  # the options with their defaults
    # the options every game's table takes (clock, undo), beside the game's own
    table: TableOptionsInfo = msgspec.field(default_factory=TableOptionsInfo)


class LegalCommands(msgspec.Struct, frozen=True):
    game_id: str
    seat: int
    version: int
    legal: tuple[Any, ...]


class Audit(msgspec.Struct, frozen=True):
    """A finished game's whole history, unredacted, with its seed: anyone can check the chain, the commitments
    to its secrets and the seed (``services.history.audit.verify_audit``, ``souk verify``)."""

    game_id: str
    seed: str
    seed_hash: str
    events: tuple[Any, ...]  # EventEnvelope: payload (and public) as the exact JSON the chain hashed


class RecordVerdict(msgspec.Struct, frozen=True):
    """``POST /verify``: whether a record holds (``services.history.verify.verify_record``): its hash chain, its
    seed against its commitment, and every command re-run by the rules giving the recorded events byte for byte."""

    ok: bool
    events: int
    commands: int
    summary: str  # "OK: ..." or the first problem (naming the first event that differs)
    problems: tuple[str, ...] = ()
    first_difference: int | None = None  # the seq of the first event the re-run does not give as recorded
    # The header's fields the events cannot determine, taken on the word of whoever wrote the record (its
    # ``archived_at``); every other field of the header is checked against the events (a lie is a problem).
    unverified: tuple[str, ...] = ()


WEBHOOK_KINDS = ("turn", "clock_low", "undo_requested", "game_ended")


class WebhookNotice(msgspec.Struct, frozen=True):
    """The body of a webhook POST (README, Webhooks): something a seat (or the game's creator) should know while
    its app is closed. Delivered at least once: ``key`` is the same on every attempt, so a receiver keeps the keys
    it has handled and ignores a second delivery of one."""

    key: str  # "{game_id}:{version}:{kind}:{seat}" (seat "" for the whole game): the idempotency key
    kind: str  # WEBHOOK_KINDS: the seat's turn, its clock low, an undo asked of it, the game ended
    game_id: str
    version: int  # the game's version the notice is about (the event that made it)
    seat: int | None  # the seat concerned; None: the whole game (game_ended to the game's own URL)
    game: str  # the game's name (/catalog)
    title: str
    at: float  # when that event was recorded (unix seconds)
    deadline: float | None = None  # clock_low: the instant the seat's clock runs out
    to_version: int | None = None  # undo_requested: the version the requester asks to go back to
    by_seat: int | None = None  # undo_requested: the requester
    scores: tuple[int, ...] = ()  # game_ended
    winners: tuple[int, ...] = ()  # game_ended
