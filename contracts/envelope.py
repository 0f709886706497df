"""What travels on the streams: the command envelope, the stored event envelope, and the engine's reply.

Stream layout (Redis keys, see ``services.keys``):
- ``souk:commands``: one entry per command, field ``c`` = ``CommandEnvelope`` (JSON).
- ``souk:game:{id}``: the game's events, entry id ``{seq}-0``, field ``e`` = ``EventEnvelope`` (JSON).
- ``souk:events``: every game's events in commit order (fields ``g`` game id, ``k`` game name, ``e`` envelope),
  for projectors.
"""

from __future__ import annotations

import hashlib

import msgspec


class CommandEnvelope(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    command_id: str  # client-chosen, unique per seat and game; a retry with the same id is answered, not applied
    game_id: str
    body: msgspec.Raw  # a tagged command: table.CreateGame, table.JoinSeat, or a game's command
    seat: int | None = None
    token_hash: str | None = None  # sha256 hex of the seat token; the raw token never enters the store
    reply_to: str = ""  # pub/sub channel the engine answers on ("" = nobody waits)
    sent_at: float = 0.0  # unix seconds when the gateway (or benchmark) published it


class EventEnvelope(msgspec.Struct, frozen=True):
    game_id: str
    seq: int  # 1-based position in the game's stream
    type: str  # the payload's tag
    payload: msgspec.Raw
    command_id: str
    seat: int | None
    recorded_at: float  # unix seconds, engine clock
    prev_hash: str
    hash: str = ""
    sent_at: float = 0.0  # the command's sent_at, carried for end-to-end latency measurement


GENESIS_HASH = "0" * 64
_encoder = msgspec.json.Encoder()


def chain_hash(envelope: EventEnvelope) -> str:
    """sha256 over the envelope's canonical JSON with ``hash`` empty; it covers ``prev_hash``, so it chains."""
    unsigned = msgspec.structs.replace(envelope, hash="")
    return hashlib.sha256(_encoder.encode(unsigned)).hexdigest()


def seal(envelope: EventEnvelope) -> EventEnvelope:
    return msgspec.structs.replace(envelope, hash=chain_hash(envelope))


class Reply(msgspec.Struct, frozen=True):
    """The engine's answer to one command. ``status`` is ``accepted`` or ``rejected``."""

    command_id: str
    game_id: str
    status: str
    version: int = 0  # the game's version after the command (accepted) or when it was refused
    code: str = ""
    message: str = ""
    events: int = 0  # how many events the command appended
    seat: int | None = None  # the seat the command acted for (for JoinSeat: the seat taken)
