"""``souk schema``: JSON Schema for every command, event and read model of the wire format."""

from __future__ import annotations

from typing import Any, Union

import msgspec

from contracts import api, envelope, readmodels
from contracts.table import TABLE_COMMANDS, TABLE_EVENTS
from domain.kernel import games


def schema() -> dict[str, Any]:
    types: dict[str, Any] = {
        "CommandEnvelope": envelope.CommandEnvelope,
        "EventEnvelope": without_raw_defaults(envelope.EventEnvelope),
        "Reply": envelope.Reply,
        "TableView": readmodels.TableView,
        "LobbyEntry": readmodels.LobbyEntry,
        "ViewsUpdated": readmodels.ViewsUpdated,
        "HistoryPage": readmodels.HistoryPage,
        "ViewPatch": readmodels.ViewPatch,
        "CreateGameRequest": api.CreateGameRequest,
        "JoinRequest": api.JoinRequest,
        "CommandRequest": api.CommandRequest,
        "TableCommand": Union[TABLE_COMMANDS],
        "TableEvent": Union[TABLE_EVENTS],
    }
    for name, game in sorted(games().items()):
        types[f"{name}.Options"] = game.options_type
        types[f"{name}.Command"] = Union[tuple(game.command_types)]
        types[f"{name}.Event"] = Union[tuple(game.event_types)]
        types[f"{name}.View"] = Union[tuple(game.view_types)]
    names = list(types)
    schemas, components = msgspec.json.schema_components([types[n] for n in names],
                                                         ref_template="#/$defs/{name}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Souk wire format",
        "properties": dict(zip(names, schemas)),
        "$defs": components,
    }


def without_raw_defaults(cls: type) -> type:
    """The same struct for the schema, with a Raw default shown as absent (msgspec cannot write a Raw default;
    the field is omitted from the JSON when it holds it)."""
    spec = []
    for f in msgspec.structs.fields(cls):
        if f.required:
            spec.append((f.name, f.type))
        elif isinstance(f.default, msgspec.Raw):
            spec.append((f.name, Any, msgspec.field(default_factory=lambda: None)))
        else:
            spec.append((f.name, f.type, f.default))
    return msgspec.defstruct(cls.__name__, spec, frozen=True)


def write(path: str | None) -> str:
    text = msgspec.json.format(msgspec.json.encode(schema()), indent=2).decode()
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")
    return text
