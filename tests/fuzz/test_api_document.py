"""What the gateway says about itself (services/gateway/openapi.py, services/gateway/errors.py): what Schemathesis
found wrong, kept fixed (the OpenAPI document's errors, token and ranges, and the ``Allow`` header), and the
document typing what the API carries: every game's commands and views, every error each route may answer."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import httpx
import jsonschema_rs
import pytest

from contracts.table import TABLE_COMMANDS
from domain.kernel import games
from services.gateway import create_app
from services.gateway.openapi import served
from services.runtime.config import Settings


def test_the_document_gives_every_error_as_code_and_message_and_the_seat_routes_a_token(souk_url):
    document = httpx.get(f"{souk_url}/schema/openapi.json").json()
    error = {"$ref": "#/components/schemas/ApiErrorBody"}
    assert document["components"]["schemas"]["ApiErrorBody"]["required"] == ["code", "message"]
    assert document["components"]["securitySchemes"]["seatToken"] == {
        **document["components"]["securitySchemes"]["seatToken"], "type": "http", "scheme": "bearer"}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            errors = {int(status): r for status, r in operation["responses"].items() if int(status) >= 400}
            assert {400, 429, 431} <= set(errors), (method, path)  # Litestar documented its own 400 shape only
            assert all(r["content"]["application/json"]["schema"] == error for status, r in errors.items()
                       if (path, status) != ("/health", 503)), (method, path)  # /health's 503: below
            if "{seat}" in path and method == "get" and path.endswith(("/view", "/legal")):
                # no token with ?at= once the game is over (anyone's then, as the audit): optional
                assert operation["security"] == [{"seatToken": []}, {}] and 401 in errors, (method, path)
            elif "{seat}" in path:
                assert operation["security"] == [{"seatToken": []}] and 401 in errors, (method, path)
            for parameter in operation.get("parameters", []):
                if parameter["name"] in ("seat", "after", "min_version"):
                    assert (parameter["schema"]["minimum"], parameter["schema"]["maximum"]) == (0, 2**63 - 1)
    for before_the_end in ("/games/{game_id}/audit", "/games/{game_id}/record"):  # 409 game_not_over
        assert "409" in document["paths"][before_the_end]["get"]["responses"], before_the_end
    commands = document["paths"]["/games/{game_id}/seats/{seat}/commands"]["post"]["responses"]
    assert {"200", "400", "401", "404", "409", "413", "422", "504"} <= set(commands)
    history = document["paths"]["/games/{game_id}/history"]["get"]["parameters"]
    assert [(p["schema"]["minimum"], p["schema"]["maximum"]) for p in history if p["name"] == "limit"] == [(1, 1000)]


def test_a_method_a_path_does_not_serve_is_a_json_405_naming_those_it_serves(souk_url):
    r = httpx.request("PUT", f"{souk_url}/games")
    assert r.status_code == 405 and r.json()["code"] == "method_not_allowed"
    assert sorted(m.strip() for m in r.headers["allow"].split(",")) == ["GET", "OPTIONS", "POST"]


def test_options_names_every_method_of_a_path_served_by_several_handlers(souk_url):
    # Litestar's own OPTIONS handler named only the first handler's methods: GET, OPTIONS for /games.
    for path, methods in (("/games", ["GET", "OPTIONS", "POST"]), ("/health", ["GET", "OPTIONS"]),
                          ("/games/abc/seats/0/commands", ["OPTIONS", "POST"])):
        r = httpx.request("OPTIONS", f"{souk_url}{path}")
        assert r.status_code == 204, (path, r.text)
        assert sorted(m.strip() for m in r.headers["allow"].split(",")) == methods, path


# --- The document types what the API carries: every game's commands and views (services/gateway/openapi.typed) ---

@pytest.fixture(scope="module")
def document(redis_server_url) -> dict[str, Any]:
    """The document as /schema/openapi.json serves it, from the app itself (no request needed)."""
    return served(create_app(Settings(redis_url=redis_server_url)))


def resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].removeprefix("#/components/schemas/")]
    return schema


def tags(types) -> set[str]:
    return {t.__struct_config__.tag for t in types}


def test_a_commands_body_is_one_of_every_games_commands_named_by_their_tags(document):
    body = document["paths"]["/games/{game_id}/seats/{seat}/commands"]["post"]["requestBody"]
    command = resolve(document, resolve(document, body["content"]["application/json"]["schema"])["properties"]["command"])
    every = set().union(*(tags(game.command_types) for game in games().values()))
    assert every and set(command["discriminator"]["mapping"]) == every
    members = [resolve(document, member) for member in command["oneOf"]]
    assert sorted(m["properties"]["type"]["enum"][0] for m in members) == sorted(every)
    assert all(m["additionalProperties"] is False and "type" in m["required"] for m in members)
    assert not every & tags(TABLE_COMMANDS)  # the table's commands have routes of their own


def test_a_views_view_names_each_games_view_and_legal_its_commands(document):
    schemas = document["components"]["schemas"]
    view = schemas["TableView"]["properties"]["view"]
    assert view["oneOf"] == [{"$ref": f"#/components/schemas/{name}.View"} for name in sorted(games())] + [
        {"type": "null"}]
    for name, game in games().items():
        assert set(schemas[f"{name}.View"]["discriminator"]["mapping"]) == tags(game.view_types)
        assert set(schemas[f"{name}.Command"]["discriminator"]["mapping"]) == tags(game.command_types)
    for struct in ("TableView", "LegalCommands"):
        assert schemas[struct]["properties"]["legal"]["items"] == {"$ref": "#/components/schemas/SeatCommand"}
    assert schemas["Audit"]["properties"]["events"]["items"] == {"$ref": "#/components/schemas/EventEnvelope"}


def test_every_reference_in_the_document_names_a_schema_it_has(document):
    text = json.dumps(document)
    refs = set(re.findall(r'"#/components/schemas/([^"]+)"', text))
    assert refs and refs <= set(document["components"]["schemas"])


def test_every_operation_documents_a_failing_server_and_store_and_a_413_only_with_a_body(document):
    error = {"$ref": "#/components/schemas/ApiErrorBody"}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            responses = operation["responses"]
            assert {"500", "503"} <= set(responses), (method, path)
            assert ("413" in responses) == ("requestBody" in operation), (method, path)
            for status in ("429", "503"):
                assert "Retry-After" in responses[status]["headers"], (method, path, status)
            if path != "/health":
                assert responses["503"]["content"]["application/json"]["schema"] == error
    health = document["paths"]["/health"]["get"]["responses"]
    assert health["200"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/HealthReport"}
    assert health["503"]["content"]["application/json"]["schema"]["oneOf"] == [
        {"$ref": "#/components/schemas/HealthReport"}, error]


def test_what_a_game_answers_fits_the_document(souk_url):
    """A game of every title played with its seats' legal commands: each view, legal list, history page and command body is
    valid against the document's schemas (checked by jsonschema_rs, as Schemathesis does)."""
    served = httpx.get(f"{souk_url}/schema/openapi.json").json()

    def valid(instance: Any, name: str) -> None:
        schema = {"$ref": f"#/components/schemas/{name}", "components": served["components"]}
        errors = [e.message for e in jsonschema_rs.Draft202012Validator(schema).iter_errors(instance)]
        assert not errors, (name, errors[:3], instance)

    with httpx.Client(base_url=souk_url, timeout=30) as client:
        for game, seats in sorted((name, g.min_seats) for name, g in games().items()):  # Istanbul: solo
            game_id = client.post("/games", json={"game": game, "title": "typed", "seats": seats}).json()["game_id"]
            valid(client.get(f"/games/{game_id}/view").json(), "TableView")  # before the start: view is null
            tokens = [client.post(f"/games/{game_id}/seats", json={"name": f"p{s}"}).json()["token"]
                      for s in range(seats)]
            rng = random.Random(7)
            for n in range(12):
                view = client.get(f"/games/{game_id}/view").json()
                valid(view, "TableView")
                if view["status"] != "playing":
                    break
                seat = rng.choice(view["flow"]["awaiting"])
                auth = {"Authorization": f"Bearer {tokens[seat]}"}
                seat_view = client.get(f"/games/{game_id}/seats/{seat}/view", headers=auth).json()
                valid(seat_view, "TableView")
                assert seat_view["view"]["type"].startswith(f"{game}.")
                legal = client.get(f"/games/{game_id}/seats/{seat}/legal", headers=auth).json()
                valid(legal, "LegalCommands")
                body = {"command_id": f"c{n}", "command": rng.choice(legal["legal"])}
                valid(body, "CommandRequest")
                r = client.post(f"/games/{game_id}/seats/{seat}/commands", headers=auth, json=body)
                assert r.status_code == 200, r.text
                valid(r.json(), "Reply")
            valid(client.get(f"/games/{game_id}/history").json(), "HistoryPage")
        valid(client.get("/health").json(), "HealthReport")
