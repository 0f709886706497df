"""Encoders and decoders, built once per game (msgspec perf tips): commands strict, events evolvable.

Every stored event is read through ``EventDecoder`` (``event_decoder``, ``table_event_decoder``, hence
``decode_stream`` and ``fold_stream``, from either stored form): an event of a type that changed shape is upcast
from its stored version to the current one (``contracts.base.upcast``) before it is typed. The stored bytes are
never rewritten: the chain hashes them as they are.
"""

from __future__ import annotations

from functools import cache
from collections.abc import Iterable, Sequence
from typing import Any, Union

import msgspec

from contracts.base import UPCASTS, upcast_event
from contracts.envelope import GENESIS_HASH, CommandEnvelope, EventEnvelope, Reply
from contracts.table import CLOCK_COMMANDS, TABLE_COMMANDS, TABLE_EVENTS, UNDO_COMMANDS, Resign
from domain.kernel import get_game
from domain.table import EMPTY, Origin, Table, fold

encoder = msgspec.json.Encoder()
command_envelope_decoder = msgspec.json.Decoder(CommandEnvelope)
event_envelope_decoder = msgspec.json.Decoder(EventEnvelope)
reply_decoder = msgspec.json.Decoder(Reply)


# The table's commands of a game that exists, beside its own: undo, resigning, and the clock worker's.
IN_GAME_COMMANDS: tuple[type, ...] = (*UNDO_COMMANDS, Resign, *CLOCK_COMMANDS)


@cache
def command_decoder(game: str | None) -> msgspec.json.Decoder:
    """Decodes a command body for ``game`` (None: the game does not exist yet, only table commands): the table's
    commands, the undo commands, the clock's (``CLOCK_COMMANDS``, the platform's), ``Resign`` and the game's.
    The gateway's generic command route refuses all but the game's (``services.gateway.commands.convert``): they
    have routes of their own, or are the platform's alone."""
    types: tuple[type, ...] = TABLE_COMMANDS
    if game is not None:
        types = types + IN_GAME_COMMANDS + tuple(get_game(game).command_types)
    return msgspec.json.Decoder(Union[types])  # type: ignore[valid-type]


def tag_of(value: Any) -> str:
    return value.__struct_config__.tag


class EventDecoder:
    """Decodes stored events (JSON) of ``types``, each in its type's current shape. The common case is one typed
    decode; an event whose type has upcast steps is read again as a JSON object, brought to its current version
    step by step (``contracts.base.upcast_event``), then typed."""

    __slots__ = ("_typed", "_upcast")

    def __init__(self, types: tuple[type, ...]) -> None:
        self._typed = msgspec.json.Decoder(Union[types])  # type: ignore[valid-type]
        self._upcast = frozenset(t for t in types if tag_of(t) in UPCASTS)

    def decode(self, payload: bytes | msgspec.Raw) -> Any:
        try:
            event = self._typed.decode(payload)
        except msgspec.ValidationError:  # perhaps an older shape the current type cannot read
            if not self._upcast:
                raise
            return self._upcasted(payload)
        return self._upcasted(payload) if type(event) in self._upcast else event

    def _upcasted(self, payload: bytes | msgspec.Raw) -> Any:
        return self._typed.decode(encoder.encode(upcast_event(_json_object(payload))))


_json_object = msgspec.json.Decoder(dict[str, Any]).decode


@cache
def event_decoder(game: str) -> EventDecoder:
    return EventDecoder(TABLE_EVENTS + tuple(get_game(game).event_types))


table_event_decoder = EventDecoder(TABLE_EVENTS)


def game_name(first: EventEnvelope) -> str:
    """The game of a stream, from its first event (always table.GameCreated)."""
    return table_event_decoder.decode(first.payload).game


def decode_stream(envelopes: list[EventEnvelope]) -> list[Any]:
    """The events of one game's stream, from its first (which names the game) on."""
    if not envelopes:
        return []
    decode = event_decoder(game_name(envelopes[0])).decode
    return [decode(e.payload) for e in envelopes]


def same_command(a: EventEnvelope, b: EventEnvelope) -> bool:
    """Whether two consecutive events came from one command (the engine appends a command's events together, with
    its id and one time)."""
    return a.command_id == b.command_id and a.recorded_at == b.recorded_at


def command_runs(envelopes: Sequence[EventEnvelope]) -> list[list[EventEnvelope]]:
    """A game's events split by the command that appended them (``same_command``), in order."""
    runs: list[list[EventEnvelope]] = []
    for e in envelopes:
        if runs and same_command(runs[-1][-1], e):
            runs[-1].append(e)
        else:
            runs.append([e])
    return runs


def origins(envelopes: Sequence[EventEnvelope]) -> list[Origin]:
    """Who made each event (its envelope's seat and command id), one per envelope: what ``domain.table`` needs
    to decide an undo (``tbl.fold``/``tbl.evolve``/``tbl.table_at``'s ``origins``)."""
    return [Origin(e.seat, e.command_id) for e in envelopes]


def fold_stream(envelopes: list[EventEnvelope], table: Table = EMPTY) -> Table:
    """A game's stream (its first envelopes, or the ones after ``table``) folded with their origins: every fold
    over stored envelopes goes through here, so that undos decide the same everywhere."""
    if not envelopes:
        return table
    if table.exists:
        decode = event_decoder(table.game).decode
        events = [decode(e.payload) for e in envelopes]
    else:
        events = decode_stream(envelopes)
    return fold(events, table, origins(envelopes))


# --- the game stream's stored form ----------------------------------------------------------------------
#
# A game stream entry's field ``e`` holds one of two forms, told apart by their first byte:
# - JSON (``{``): a whole ``EventEnvelope``. Every entry written before 2026-11-23, and still the table's own
#   events (``table.*``: a handful per game, read alone by the gateway, which stops at the game's first event).
# - compact (a MessagePack array): a chain-2 game event, stored with what cannot be derived and nothing else:
#   ``[payload, hash]``, ``[payload, hash, public, commitment]``, ``[payload, hash, public, commitment,
#   command_id, recorded_at, seat]`` or ``[payload, hash, public, commitment, command_id, recorded_at, seat,
#   command]``. ``payload`` and ``public`` are the event's JSON bytes exactly as the chain
#   hashed them but their first 9, always ``{"type":"`` (``public`` b"" when the event hides nothing); ``hash``
#   and ``commitment`` are the 32 bytes of their hex (b"" for no commitment); ``command_id`` 16 bytes when it is
#   32 lowercase hex digits, else the text. The short forms carry the same ``command_id``, ``recorded_at`` and
#   ``seat`` as the entry before (another event of the same command). Derived when read: ``game_id`` (the key),
#   ``seq`` (the entry id ``{seq}-0``), ``type`` (the payload's tag), ``prev_hash`` (the hash of the entry
#   before), ``chain`` (2). Not stored: the command's ``sent_at`` and ``traceparent`` (a latency measurement and a
#   log correlation id, outside the record: the projectors get them from ``souk:events``, whose entries are whole
#   JSON envelopes).
# - ``command``: the accepted command's body (issue #10: a record re-runs it), once per command, on its first
#   event's entry only (the compact form's last element; a JSON entry's extra member ``"command"``): the array
#   ``[tag, field values...]`` (``stored_command``), the values in the command's field order with the trailing
#   ones that equal their defaults left out, and the tag without its game's prefix (``"PlaceCube"`` for
#   ``"yspahan.PlaceCube"``; a table command's tag whole). About 20 bytes for a Yspahan command, where its JSON is
#   60. Entries written before 2026-11-23 carry none (``stored_envelopes``' ``commands`` has no entry for them).
#   A command type's fields may gain trailing ones with defaults; they are never reordered (tests/services/
#   test_stored_commands.py keeps stored bytes of every landed command).


class _Stored(msgspec.Struct, array_like=True, frozen=True):
    """A game event in the compact form (see above), as read: the fields a short form lacks take their defaults."""

    payload: bytes  # without its first 9 bytes
    hash: bytes
    public: bytes = b""  # without its first 9 bytes
    commitment: bytes = b""
    command_id: Any = None  # bytes (32 hex digits) or str; None: the entry before's, with its time and seat
    recorded_at: float = 0.0
    seat: int | None = None
    command: Any = None  # the command's body (``stored_command``), on its first event's entry


class _JsonCommand(msgspec.Struct):
    """The command a JSON entry carries, if any (beside the envelope's fields)."""

    command: Any = None


_pack_stored = msgspec.msgpack.Encoder().encode  # lists: an array_like Struct writes its trailing defaults
_unpack_stored = msgspec.msgpack.Decoder(_Stored).decode
_TAGGED = b'{"type":"'  # how every event's JSON begins (its tag first): not stored
_PREFIX = len(_TAGGED)
_NO_PUBLIC = EventEnvelope("", 0, "", msgspec.Raw(b"{}"), "", None, 0.0, "").public  # the default, omitted
_json_command = msgspec.json.Decoder(_JsonCommand).decode
_GAME_CREATED = "table.GameCreated"


def stored_command(game: str, command: Any) -> list[Any]:
    """A command's body as the game stream keeps it (see above): ``[tag, field values...]``."""
    tag = tag_of(command)
    prefix = f"{game}."
    values = [msgspec.to_builtins(getattr(command, name)) for name in command.__struct_fields__]
    defaults = _defaults(type(command))
    while values and values[-1] == defaults[len(values) - 1]:
        values.pop()
    return [tag[len(prefix):] if tag.startswith(prefix) else tag, *values]


_NO_DEFAULT = object()


@cache
def _defaults(kind: type) -> tuple[Any, ...]:
    """Each field's default as its JSON reads back (``_NO_DEFAULT``: none), in the fields' order."""
    out = []
    for field in msgspec.structs.fields(kind):
        if field.default is not msgspec.NODEFAULT:
            out.append(msgspec.to_builtins(field.default))
        elif field.default_factory is not msgspec.NODEFAULT:
            out.append(msgspec.to_builtins(field.default_factory()))
        else:
            out.append(_NO_DEFAULT)
    return tuple(out)


@cache
def _command_types(game: str) -> dict[str, type]:
    types: tuple[type, ...] = TABLE_COMMANDS + IN_GAME_COMMANDS + tuple(get_game(game).command_types)
    return {t.__struct_config__.tag: t for t in types}


def command_of(game: str, stored: Any) -> Any:
    """The command ``stored_command`` kept (ValueError: not one of ``game``'s commands)."""
    if not isinstance(stored, list) or not stored or not isinstance(stored[0], str):
        raise ValueError(f"not a stored command: {stored!r}"[:200])
    tag = stored[0] if "." in stored[0] else f"{game}.{stored[0]}"
    kind = _command_types(game).get(tag)
    if kind is None:
        raise ValueError(f"{tag!r} is not a command of {game}")
    names = kind.__struct_fields__
    if len(stored) - 1 > len(names):
        raise ValueError(f"{tag}: {len(stored) - 1} values for {len(names)} fields")
    try:
        return msgspec.convert(dict(zip(names, stored[1:])), kind)
    except msgspec.ValidationError as exc:
        raise ValueError(f"{tag}: {exc}") from None


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


def stored_form(payload: bytes, digest: str, public: bytes, commitment: str, command: tuple | None,
                body: list | None = None, game: str = "") -> bytes:
    """One game event's compact form: ``command`` is (command_id, recorded_at, seat), or None when the entry
    before has the same (the same command's); ``body``: the command's (``stored_command``), on its first event;
    ``game``: the game's name, left out of the tag. The caller checked that it fits (``stored_forms``)."""
    cut = _PREFIX
    if game and payload.startswith(b"%s." % game.encode(), _PREFIX):
        cut += len(game) + 1
        if public and public[:cut] != payload[:cut]:  # a spectator's event of another type: both kept whole
            cut = _PREFIX
    record: list[Any] = [payload[cut:], bytes.fromhex(digest)]
    if public or commitment or command is not None:
        record += [public[cut:] if public else b"", bytes.fromhex(commitment)]
    if command is not None:
        command_id = command[0]
        if len(command_id) == 32:
            command_id = _hex_bytes(command_id) or command_id
        record += [command_id, command[1], command[2]]
        if body is not None:
            record.append(body)
    return _pack_stored(record)


def stored_forms(envelopes: Sequence[EventEnvelope], prev_hash: str, body: list | None = None) -> list[bytes]:
    """How one append's events are kept in their game's stream (see above), after an entry whose hash is
    ``prev_hash``; the first event of an append always carries its command's fields, and ``body`` (its command,
    ``stored_command``) when given."""
    out: list[bytes] = []
    before: EventEnvelope | None = None
    for env in envelopes:
        first = before is None
        payload, public = bytes(env.payload), bytes(env.public)
        tagged = b'{"type":"%s"' % env.type.encode()
        digest = _hex_bytes(env.hash)
        if (env.chain != 2 or env.type.startswith("table.") or digest is None or len(digest) != 32
                or (env.commitment and _hex_bytes(env.commitment) is None) or not payload.startswith(tagged)
                or (public and not public.startswith(tagged))
                or env.prev_hash != (before.hash if before is not None else prev_hash)):
            out.append(json_form(env, body if first else None))
        else:
            same = (before is not None and before.command_id == env.command_id
                    and before.recorded_at == env.recorded_at and before.seat == env.seat)
            out.append(stored_form(payload, env.hash, public, env.commitment,
                                   None if same else (env.command_id, env.recorded_at, env.seat),
                                   body if first else None))
        before = env
    return out


def json_form(env: EventEnvelope, body: list | None = None) -> bytes:
    """An event's whole JSON envelope as a game stream keeps it, with its command's body (``stored_command``)."""
    raw = encoder.encode(msgspec.structs.replace(env, sent_at=0.0, traceparent=""))
    return raw if body is None else raw[:-1] + b',"command":' + encoder.encode(body) + b"}"


def entry_hash(raw: bytes) -> str:
    """The event hash a game stream entry's field ``e`` holds (either form)."""
    if raw[:1] == b"{":
        return event_envelope_decoder.decode(raw).hash
    return _unpack_stored(raw).hash.hex()


def command_fields(raw: bytes) -> tuple[str, float] | None:
    """The command id and time a game stream entry's field ``e`` carries (None: a compact entry that takes them
    from the entry before)."""
    if raw[:1] == b"{":
        env = event_envelope_decoder.decode(raw)
        return env.command_id, env.recorded_at
    r = _unpack_stored(raw)
    if r.command_id is None:
        return None
    return (r.command_id.hex() if type(r.command_id) is bytes else r.command_id), r.recorded_at


def starts_command(raw: bytes) -> bool:
    """Whether a game stream entry's field ``e`` carries its command's fields (a JSON envelope, or a compact form
    with its command's id): the envelopes from it on decode without the entries before (``stored_envelopes``)."""
    return raw[:1] == b"{" or _unpack_stored(raw).command_id is not None


def stored_envelopes(game_id: str, entries: Iterable[tuple[bytes, bytes]], before: EventEnvelope | None = None,
                     commands: dict[int, Any] | None = None, game: str = "") -> list[EventEnvelope]:
    """The envelopes of a game stream's entries ``(entry id, field e)``, in order, from its first entry or from
    the one after ``before`` (the envelope of the entry before the first given; then ``game`` is the game's name).
    ``commands``, when given, gets the body (``stored_command``, for ``command_of``) of each command that has one,
    by its first event's seq."""
    out: list[EventEnvelope] = []
    tagged = _TAGGED + game.encode() + b"." if game else b""
    for entry_id, raw in entries:
        if raw[:1] == b"{":
            env = event_envelope_decoder.decode(raw)
            if env.type == _GAME_CREATED:
                tagged = _TAGGED + game_name(env).encode() + b"."
            if commands is not None and (body := _json_command(raw).command) is not None:
                commands[env.seq] = body
        else:
            r = _unpack_stored(raw)
            stored = r.payload
            if b"." in stored[:stored.find(b'"')]:  # the whole tag (written before 2026-11-23, or another game's)
                prefix = _TAGGED
            elif tagged:
                prefix = tagged
            else:
                raise ValueError(f"game {game_id}: entry {entry_id!r} needs the game's name (its first entry)")
            payload = prefix + stored
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
                                msgspec.Raw(prefix + r.public) if r.public else _NO_PUBLIC, r.commitment.hex())
            if commands is not None and r.command is not None:
                commands[env.seq] = r.command
        out.append(env)
        before = env
    return out
