"""Encoders and decoders, built once per game (msgspec perf tips): commands strict, events evolvable."""

from __future__ import annotations

from functools import cache
from collections.abc import Iterable, Sequence
from typing import Any, Union

import msgspec

from contracts.envelope import GENESIS_HASH, CommandEnvelope, EventEnvelope, Reply
from contracts.table import TABLE_COMMANDS, TABLE_EVENTS
from domain.kernel import get_game

encoder = msgspec.json.Encoder()
command_envelope_decoder = msgspec.json.Decoder(CommandEnvelope)
event_envelope_decoder = msgspec.json.Decoder(EventEnvelope)
reply_decoder = msgspec.json.Decoder(Reply)


@cache
def command_decoder(game: str | None) -> msgspec.json.Decoder:
    """Decodes a command body for ``game`` (None: the game does not exist yet, only table commands)."""
    types: tuple[type, ...] = TABLE_COMMANDS
    if game is not None:
        types = types + tuple(get_game(game).command_types)
    return msgspec.json.Decoder(Union[types])  # type: ignore[valid-type]


@cache
def event_decoder(game: str) -> msgspec.json.Decoder:
    types = TABLE_EVENTS + tuple(get_game(game).event_types)
    return msgspec.json.Decoder(Union[types])  # type: ignore[valid-type]


def tag_of(value: Any) -> str:
    return value.__struct_config__.tag


table_event_decoder = msgspec.json.Decoder(Union[TABLE_EVENTS])  # type: ignore[valid-type]


def game_name(first: EventEnvelope) -> str:
    """The game of a stream, from its first event (always table.GameCreated)."""
    return table_event_decoder.decode(first.payload).game


def decode_stream(envelopes: list[EventEnvelope]) -> list[Any]:
    """The events of one game's stream, from its first (which names the game) on."""
    if not envelopes:
        return []
    decode = event_decoder(game_name(envelopes[0])).decode
    return [decode(e.payload) for e in envelopes]


# --- the game stream's stored form ----------------------------------------------------------------------
#
# A game stream entry's field ``e`` holds one of two forms, told apart by their first byte:
# - JSON (``{``): a whole ``EventEnvelope``. Every entry written before 2026-11-23, and still the table's own
#   events (``table.*``: a handful per game, read alone by the gateway, which stops at the game's first event).
# - compact (a MessagePack array): a chain-2 game event, stored with what cannot be derived and nothing else:
#   ``[payload, hash]``, ``[payload, hash, public, commitment]`` or ``[payload, hash, public, commitment,
#   command_id, recorded_at, seat]``. ``payload`` and ``public`` are the event's JSON bytes exactly as the chain
#   hashed them but their first 9, always ``{"type":"`` (``public`` b"" when the event hides nothing), ``hash`` and ``commitment`` the 32 bytes of their hex
#   (b"" for no commitment), ``command_id`` 16 bytes when it is 32 lowercase hex digits, else the text. The
#   short forms carry the same ``command_id``, ``recorded_at`` and ``seat`` as the entry before (another event
#   of the same command). Derived when read: ``game_id`` (the key), ``seq`` (the entry id ``{seq}-0``),
#   ``type`` (the payload's tag), ``prev_hash`` (the hash of the entry before), ``chain`` (2). Not stored: the
#   command's ``sent_at`` and ``traceparent`` (a latency measurement and a log correlation id, outside the record:
#   the projectors get them from ``souk:events``, whose entries are whole JSON envelopes).

_pack_stored = msgspec.msgpack.Encoder().encode
_unpack_stored = msgspec.msgpack.Decoder().decode
_HEX = frozenset("0123456789abcdef")


def _hex_bytes(text: str, length: int) -> bytes | None:
    return bytes.fromhex(text) if len(text) == 2 * length and _HEX.issuperset(text) else None


_TAGGED = b'{"type":"'  # how every event's JSON begins (its tag first): not stored
_PREFIX = len(_TAGGED)


def _tag(payload: bytes) -> str | None:
    """The tag of an event's JSON (msgspec writes it first: ``{"type":"..."``)."""
    if payload.startswith(b'{"type":"'):
        end = payload.find(b'"', 9)
        if end > 9:
            return payload[9:end].decode()
    return None


def stored_forms(envelopes: Sequence[EventEnvelope], prev_hash: str) -> list[bytes]:
    """How one append's events are kept in their game's stream (see above), after an entry whose hash is
    ``prev_hash``; the first event of an append always carries its command's fields."""
    out: list[bytes] = []
    before: EventEnvelope | None = None
    for env in envelopes:
        payload, public = bytes(env.payload), bytes(env.public)
        digest = _hex_bytes(env.hash, 32)
        commitment = _hex_bytes(env.commitment, 32) if env.commitment else b""
        if (env.chain != 2 or env.type.startswith("table.") or digest is None or commitment is None
                or _tag(payload) != env.type or (public and _tag(public) != env.type) or env.prev_hash != (before.hash if before is not None else prev_hash)):
            out.append(encoder.encode(msgspec.structs.replace(env, sent_at=0.0, traceparent="")))
        else:
            record: list[Any] = [payload[_PREFIX:], digest, public[_PREFIX:], commitment]
            if (before is None or before.command_id != env.command_id or before.recorded_at != env.recorded_at
                    or before.seat != env.seat):
                record += [_hex_bytes(env.command_id, 16) or env.command_id, env.recorded_at, env.seat]
            elif not public and not commitment:
                record = record[:2]
            out.append(_pack_stored(record))
        before = env
    return out


def stored_envelopes(game_id: str, entries: Iterable[tuple[bytes, bytes]], before: EventEnvelope | None = None
                     ) -> list[EventEnvelope]:
    """The envelopes of a game stream's entries ``(entry id, field e)``, in order, from its first entry or from
    the one after ``before`` (the envelope of the entry before the first given)."""
    out: list[EventEnvelope] = []
    for entry_id, raw in entries:
        if raw[:1] == b"{":
            env = event_envelope_decoder.decode(raw)
        else:
            record = _unpack_stored(raw)
            payload, digest, public, commitment = (record + [b"", b""])[:4]
            payload = _TAGGED + payload
            public = _TAGGED + public if public else b""
            if len(record) > 4:
                command_id, recorded_at, seat = record[4], record[5], record[6]
                if isinstance(command_id, bytes):
                    command_id = command_id.hex()
            elif before is None:
                raise ValueError(f"game {game_id}: entry {entry_id!r} continues an entry that was not read")
            else:
                command_id, recorded_at, seat = before.command_id, before.recorded_at, before.seat
            seq = int(entry_id.split(b"-", 1)[0] if isinstance(entry_id, bytes) else entry_id.split("-", 1)[0])
            env = EventEnvelope(game_id, seq, _tag(payload) or "", msgspec.Raw(payload), command_id, seat,
                                recorded_at, before.hash if before is not None else GENESIS_HASH, digest.hex(),
                                chain=2, **({"public": msgspec.Raw(public)} if public else {}),
                                commitment=commitment.hex())
        out.append(env)
        before = env
    return out
