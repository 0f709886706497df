"""Encoders and decoders, built once per game (msgspec perf tips): commands strict, events evolvable."""

from __future__ import annotations

from functools import cache
from typing import Any, Union

import msgspec

from contracts.envelope import CommandEnvelope, EventEnvelope, Reply
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
