"""`souk schema`: JSON Schema for the whole wire format, every game included."""

from __future__ import annotations

import json

from services.cli.main import main


def test_souk_schema_describes_every_command_event_and_view_of_every_game(tmp_path, capsys):
    out = tmp_path / "schema.json"
    main(["schema", "--out", str(out)])
    schema = json.loads(out.read_text())
    names = set(schema["properties"])
    for game in ("samarkand", "yspahan", "istanbul"):
        assert {f"{game}.Options", f"{game}.Command", f"{game}.Event", f"{game}.View"} <= names
    assert {"CommandEnvelope", "EventEnvelope", "Reply", "TableView", "HistoryPage"} <= names
    defs = schema["$defs"]
    assert defs["ChooseCard"]["properties"]["type"]["enum"] == ["samarkand.ChooseCard"]
    assert defs["ChooseCard"].get("additionalProperties") is False  # strict at the door
    options = defs[schema["properties"]["istanbul.Options"]["$ref"].rsplit("/", 1)[1]]
    # Istanbul has no options but the revision of its rules a game plays under (``rules``, 1 when not named)
    assert options["properties"] == {"rules": {"type": "integer", "default": 1}}
    assert options["additionalProperties"] is False
    assert "GameCreated" in defs and "seed_hash" in defs["GameCreated"]["properties"]
