"""What travels on the streams: the command envelope, the stored event envelope, and the engine's reply.

Stream layout (Redis keys, see ``services.store.keys``):
- ``souk:commands``: one entry per command, field ``c`` = ``CommandEnvelope`` (JSON).
- ``souk:game:{id}``: the game's events, entry id ``{seq}-0``, field ``e`` = ``EventEnvelope`` (JSON).
- ``souk:events``: every game's events in commit order (fields ``g`` game id, ``k`` game name, ``e`` envelope),
  for projectors.
"""

from __future__ import annotations

import functools
import hashlib
import hmac

import msgspec


class CommandEnvelope(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    command_id: str  # client-chosen, unique per seat and game; a retry with the same id is answered, not applied
    game_id: str
    body: msgspec.Raw  # a tagged command: table.CreateGame, table.JoinSeat, or a game's command
    seat: int | None = None
    token_hash: str | None = None  # sha256 hex of the seat token; the raw token never enters the store
    reply_to: str = ""  # pub/sub channel the engine answers on ("" = nobody waits)
    sent_at: float = 0.0  # unix seconds when the gateway (or benchmark) published it
    expected_version: int | None = None  # the version the client decided on: refused as ``stale`` if it moved on
    traceparent: str = ""  # W3C trace context of the request that sent it ("" = none); see services/runtime/tracing.py


class EventEnvelope(msgspec.Struct, frozen=True, omit_defaults=True):
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
    # Chain 2 (see ``chain_hash``); envelopes recorded before it have chain 1 and neither of the fields below.
    chain: int = 1
    public: msgspec.Raw = msgspec.Raw(b"")  # the event as a spectator sees it, when that differs from the payload
    commitment: str = ""  # sha256(salt + payload) when ``public`` is set; the salt derives from the seed
    # The W3C traceparent of the command that produced it, for following a command in the logs. Like
    # ``sent_at``, not part of the record: no chain hashes it (``ChainLink``, ``_EnvelopeV1``).
    traceparent: str = ""


GENESIS_HASH = "0" * 64
CHAIN = 2  # the chain version the engine writes
_encoder = msgspec.json.Encoder()


class _EnvelopeV1(msgspec.Struct, frozen=True):
    """The fields chain 1 hashed, in its order (new fields must not change an old envelope's hash)."""

    game_id: str
    seq: int
    type: str
    payload: msgspec.Raw
    command_id: str
    seat: int | None
    recorded_at: float
    prev_hash: str
    hash: str = ""
    sent_at: float = 0.0


class ChainLink(msgspec.Struct, frozen=True, array_like=True):
    """What chain 2 hashes for one event: everything public about it, and a commitment to its secrets.

    ``public`` is the event as a spectator sees it (the whole event when it hides nothing, then ``commitment`` is
    ""). A secret part enters the chain only through ``commitment`` = sha256(salt || payload JSON), whose salt
    (``commitment_salt``) derives from the game's secret seed: before the end, no digest any audience receives
    lets it test a guess of a secret; after the end, the seed is published and anyone can check each commitment
    against the revealed payload, and the chain itself at any time from the spectator's history (every field
    here is in its entries). ``sent_at``, a latency measurement, and ``traceparent``, a log correlation id, are not
    part of the record."""

    game_id: str
    seq: int
    type: str
    command_id: str
    seat: int | None
    recorded_at: float
    prev_hash: str
    public: msgspec.Raw
    commitment: str


def commitment_salt(seed: bytes, game_id: str, seq: int) -> bytes:
    """HMAC-SHA256(seed, "commit:<game_id>:<seq>"): the keyed HMAC with the game's prefix is prepared once per
    seed and game (``_salt_prefix``) and copied for each event (the same bytes: HMAC is streaming)."""
    mac = _salt_prefix(seed, game_id).copy()
    mac.update(str(seq).encode())
    return mac.digest()


@functools.lru_cache(maxsize=4096)
def _salt_prefix(seed: bytes, game_id: str) -> hmac.HMAC:
    """HMAC(seed) fed with "commit:<game_id>:", never digested itself (callers copy it)."""
    return hmac.new(seed, f"commit:{game_id}:".encode(), hashlib.sha256)


def commitment(seed: bytes, game_id: str, seq: int, payload: bytes) -> str:
    return hashlib.sha256(commitment_salt(seed, game_id, seq) + payload).hexdigest()


def link_hash(link: ChainLink) -> str:
    return hashlib.sha256(_encoder.encode(link)).hexdigest()


def chain_hash(envelope: EventEnvelope) -> str:
    """The event's hash in its game's chain (it covers ``prev_hash``, so it chains).

    Chain 2: sha256 over the ``ChainLink`` (what a spectator sees, and a salted commitment to the rest).
    Chain 1 (older envelopes): sha256 over the whole envelope, payload included, with ``hash`` empty."""
    if envelope.chain == 1:
        fields = {f: getattr(envelope, f) for f in _EnvelopeV1.__struct_fields__}
        return hashlib.sha256(_encoder.encode(_EnvelopeV1(**{**fields, "hash": ""}))).hexdigest()
    return link_hash(link_of(envelope))


def link_of(envelope: EventEnvelope) -> ChainLink:
    public = envelope.public if envelope.public else envelope.payload
    return ChainLink(envelope.game_id, envelope.seq, envelope.type, envelope.command_id, envelope.seat,
                     envelope.recorded_at, envelope.prev_hash, public, envelope.commitment)


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
