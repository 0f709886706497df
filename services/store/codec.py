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
#   hashed them but their first 9, always ``{"type":"`` (``public`` b"" when the event hides nothing); ``hash``
#   and ``commitment`` are the 32 bytes of their hex (b"" for no commitment); ``command_id`` 16 bytes when it is
#   32 lowercase hex digits, else the text. The short forms carry the same ``command_id``, ``recorded_at`` and
#   ``seat`` as the entry before (another event of the same command). Derived when read: ``game_id`` (the key),
#   ``seq`` (the entry id ``{seq}-0``), ``type`` (the payload's tag), ``prev_hash`` (the hash of the entry
#   before), ``chain`` (2). Not stored: the command's ``sent_at`` and ``traceparent`` (a latency measurement and a
#   log correlation id, outside the record: the projectors get them from ``souk:events``, whose entries are whole
#   JSON envelopes).


class _Stored(msgspec.Struct, array_like=True, frozen=True):
    """A game event in the compact form (see above), as read: the fields a short form lacks take their defaults."""

    payload: bytes  # without its first 9 bytes
    hash: bytes
    public: bytes = b""  # without its first 9 bytes
    commitment: bytes = b""
    command_id: Any = None  # bytes (32 hex digits) or str; None: the entry before's, with its time and seat
    recorded_at: float = 0.0
    seat: int | None = None


_pack_stored = msgspec.msgpack.Encoder().encode  # lists: an array_like Struct writes its trailing defaults
_unpack_stored = msgspec.msgpack.Decoder(_Stored).decode
_TAGGED = b'{"type":"'  # how every event's JSON begins (its tag first): not stored
_PREFIX = len(_TAGGED)
_NO_PUBLIC = EventEnvelope("", 0, "", msgspec.Raw(b"{}"), "", None, 0.0, "").public  # the default, omitted


def _hex_bytes(text: str) -> bytes | None:
    """The bytes of lowercase hex digits that give back ``text`` exactly, else None."""
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        return None
    return raw if raw.hex() == text else None


def _tag(payload: bytes) -> str | None:
    """The tag of an event's JSON (msgspec writes it first: ``{"type":"..."``)."""
    if payload.startswith(_TAGGED):
        end = payload.find(b'"', _PREFIX)
        if end > _PREFIX:
            return payload[_PREFIX:end].decode()
    return None


def stored_form(payload: bytes, digest: str, public: bytes, commitment: str, command: tuple | None) -> bytes:
    """One game event's compact form: ``command`` is (command_id, recorded_at, seat), or None when the entry
    before has the same (the same command's). The caller checked that it fits (``stored_forms``)."""
    record: list[Any] = [payload[_PREFIX:], bytes.fromhex(digest)]
    if public or commitment or command is not None:
        record += [public[_PREFIX:], bytes.fromhex(commitment)]
    if command is not None:
        command_id = command[0]
        if len(command_id) == 32:
            command_id = _hex_bytes(command_id) or command_id
        record += [command_id, command[1], command[2]]
    return _pack_stored(record)


def stored_forms(envelopes: Sequence[EventEnvelope], prev_hash: str) -> list[bytes]:
    """How one append's events are kept in their game's stream (see above), after an entry whose hash is
    ``prev_hash``; the first event of an append always carries its command's fields."""
    out: list[bytes] = []
    before: EventEnvelope | None = None
    for env in envelopes:
        payload, public = bytes(env.payload), bytes(env.public)
        tagged = b'{"type":"%s"' % env.type.encode()
        digest = _hex_bytes(env.hash)
        if (env.chain != 2 or env.type.startswith("table.") or digest is None or len(digest) != 32
                or (env.commitment and _hex_bytes(env.commitment) is None) or not payload.startswith(tagged)
                or (public and not public.startswith(tagged))
                or env.prev_hash != (before.hash if before is not None else prev_hash)):
            out.append(encoder.encode(msgspec.structs.replace(env, sent_at=0.0, traceparent="")))
        else:
            same = (before is not None and before.command_id == env.command_id
                    and before.recorded_at == env.recorded_at and before.seat == env.seat)
            out.append(stored_form(payload, env.hash, public, env.commitment,
                                   None if same else (env.command_id, env.recorded_at, env.seat)))
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
            r = _unpack_stored(raw)
            payload = _TAGGED + r.payload
            if r.command_id is not None:
                command_id, recorded_at, seat = r.command_id, r.recorded_at, r.seat
                if type(command_id) is bytes:
                    command_id = command_id.hex()
            elif before is None:
                raise ValueError(f"game {game_id}: entry {entry_id!r} continues an entry that was not read")
            else:
                command_id, recorded_at, seat = before.command_id, before.recorded_at, before.seat
            end = payload.find(b'"', _PREFIX)
            env = EventEnvelope(game_id, int(entry_id[:entry_id.index(b"-" if type(entry_id) is bytes else "-")]),
                                payload[_PREFIX:end].decode(), msgspec.Raw(payload), command_id, seat, recorded_at,
                                before.hash if before is not None else GENESIS_HASH, r.hash.hex(), 0.0, 2,
                                msgspec.Raw(_TAGGED + r.public) if r.public else _NO_PUBLIC, r.commitment.hex())
        out.append(env)
        before = env
    return out
