"""What Schemathesis found wrong in what the gateway says about itself, kept fixed (services/gateway/openapi.py,
services/gateway/errors.py): the OpenAPI document's errors, token and ranges, and the ``Allow`` header."""

from __future__ import annotations

import httpx


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
            assert all(r["content"]["application/json"]["schema"] == error for r in errors.values()), (method, path)
            if "{seat}" in path:
                assert operation["security"] == [{"seatToken": []}] and 401 in errors, (method, path)
            for parameter in operation.get("parameters", []):
                if parameter["name"] in ("seat", "after", "min_version"):
                    assert (parameter["schema"]["minimum"], parameter["schema"]["maximum"]) == (0, 2**63 - 1)
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
