"""GET /asyncapi.json describes the WebSockets a client opens (services/gateway/asyncapi.py): an AsyncAPI 3.0
document of the spectator's and a seat's sockets, their query (?token=, ?since=, ?from=), close codes and the views they
push, typed from contracts/; and it names no internal host (it used to be FastStream's document of the Redis
channels, naming the Redis host and port)."""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any
from urllib.parse import urlsplit

import httpx
import jsonschema_rs
import pytest
from faststream.specification.asyncapi.v3_0_0.schema import ApplicationSchema
from httpx_ws import aconnect_ws

from domain.kernel import games
from tests.e2e.support import join_all
from tests.npm import npm_install

pytestmark = pytest.mark.anyio

PARSE = """
import { Parser } from "@asyncapi/parser";
import { readFileSync } from "node:fs";
const { document, diagnostics } = await new Parser().parse(readFileSync(process.argv[2], "utf8"));
console.log(JSON.stringify({ parsed: document !== undefined, diagnostics: diagnostics.map(
  (d) => ({ severity: d.severity, code: d.code, message: d.message, path: d.path.join("/") })) }));
"""


@pytest.fixture(scope="module")
def asyncapi_parser(tmp_path_factory) -> str:
    """The official AsyncAPI parser (@asyncapi/parser, from the npm registry: a few seconds): a script that parses
    the file it is given and prints its diagnostics as JSON. Skipped without node and npm."""
    where = tmp_path_factory.mktemp("asyncapi-parser")
    npm_install(where, "@asyncapi/parser@3")
    (where / "parse.mjs").write_text(PARSE)
    return str(where / "parse.mjs")


def pointer(document: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = document
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


async def test_the_asyncapi_document_describes_the_client_websockets_typed_and_names_no_internal_host(
        souk_url, redis_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        r = await client.get("/asyncapi.json")
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
        document = r.json()
        text = r.text
        # No store named: neither a redis:// address nor the Redis host and port the gateway uses.
        redis = urlsplit(redis_url)
        assert "redis" not in text.lower() and f"{redis.hostname}:{redis.port}" not in text
        assert document["asyncapi"] == "3.0.0"
        ApplicationSchema.model_validate(document)  # FastStream's model of AsyncAPI 3.0 reads it
        assert document["servers"]["gateway"]["host"] == urlsplit(souk_url).netloc
        # Every reference resolves; every address parameter is declared; operations name their channel's messages.
        for ref in set(re.findall(r'"\$ref":\s*"([^"]+)"', text)):
            pointer(document, ref)
        channels = document["channels"]
        assert {c["address"] for c in channels.values()} == {"/games/{game_id}/ws", "/games/{game_id}/seats/{seat}/ws"}
        for channel in channels.values():
            assert set(re.findall(r"\{(\w+)\}", channel["address"])) == set(channel["parameters"])
            assert {"4401", "4404"} <= set(channel["x-close-codes"])
            assert {"since", "from", "patch"} <= set(channel["bindings"]["ws"]["query"]["properties"])
            assert set(channel["messages"]) == {"missed", "view", "patch", "command", "commandAnswer"}
        assert channels["seatView"]["bindings"]["ws"]["query"]["required"] == ["token"]
        operations = document["operations"]
        assert {name: o["action"] for name, o in operations.items()} == {
            "sendSpectatorView": "send", "sendSeatView": "send", "receiveSeatCommand": "receive"}
        reply = operations["receiveSeatCommand"]["reply"]  # a seat's command is answered on its socket
        assert reply["channel"]["$ref"] == "#/channels/seatView"
        assert reply["messages"] == [{"$ref": "#/channels/seatView/messages/commandAnswer"}]
        for operation in operations.values():
            channel = operation["channel"]["$ref"]
            pointer(document, channel)
            assert operation["messages"] and all(m["$ref"].startswith(f"{channel}/messages/")
                                                 for m in operation["messages"])  # AsyncAPI 3: its channel's
        # The payload: a TableView, its view one of each game's views, its legal commands the games' commands.
        schemas = document["components"]["schemas"]
        payload = pointer(document, document["components"]["messages"]["view"]["payload"]["$ref"])
        assert payload is schemas["TableView"] or payload == schemas["TableView"]
        assert {v.get("$ref") for v in payload["properties"]["view"]["oneOf"]} == {
            f"#/components/schemas/{name}.View" for name in games()} | {None}
        assert payload["properties"]["legal"]["items"] == {"$ref": "#/components/schemas/SeatCommand"}

        # What a socket really pushes fits the payload's schema.
        game_id = (await client.post("/games", json={"game": "samarkand", "title": "ws", "seats": 3})).json()["game_id"]
        tokens = await join_all(client, game_id, 3)
        validator = jsonschema_rs.Draft202012Validator({**payload, "components": document["components"]})
        for path in (f"/games/{game_id}/ws", f"/games/{game_id}/seats/1/ws?token={tokens[1]}&since=-1"):
            async with aconnect_ws(f"{souk_url}{path}", client) as ws:
                frame = json.loads(await ws.receive_text())
            errors = [e.message for e in validator.iter_errors(frame)]
            assert not errors and frame["status"] == "playing", (path, errors[:3])
        # ?from=: the history entries missed first, as a HistoryPage, then the view
        missed = pointer(document, document["components"]["messages"]["missed"]["payload"]["$ref"])
        pages = jsonschema_rs.Draft202012Validator({**missed, "components": document["components"]})
        async with aconnect_ws(f"{souk_url}/games/{game_id}/seats/1/ws?token={tokens[1]}&from=1", client) as ws:
            page, frame = json.loads(await ws.receive_text()), json.loads(await ws.receive_text())
        assert not list(pages.iter_errors(page)) and page["entries"] and not list(validator.iter_errors(frame))
        # ?patch=1: after the whole view, a ViewPatch
        patch = pointer(document, document["components"]["messages"]["patch"]["payload"]["$ref"])
        patches = jsonschema_rs.Draft202012Validator({**patch, "components": document["components"]})
        async with aconnect_ws(f"{souk_url}/games/{game_id}/ws?patch=1", client) as ws:
            first = json.loads(await ws.receive_text())
            seat = first["flow"]["awaiting"][0]
            auth = {"Authorization": f"Bearer {tokens[seat]}"}
            legal = (await client.get(f"/games/{game_id}/seats/{seat}/legal", headers=auth)).json()["legal"]
            r = await client.post(f"/games/{game_id}/seats/{seat}/commands", headers=auth,
                                  json={"command_id": "asyncapi-patch", "command": legal[0]})
            assert r.status_code == 200, r.text
            frame = json.loads(await ws.receive_text())
        assert "patch" in frame and frame["from"] == first["version"], frame
        assert not list(patches.iter_errors(frame))
        # a command on the seat's socket, its answer, and a bad frame's answer fit theirs
        messages = document["components"]["messages"]
        commands, answers = (jsonschema_rs.Draft202012Validator(
            {**pointer(document, messages[m]["payload"]["$ref"]), "components": document["components"]})
            for m in ("command", "commandAnswer"))
        view = (await client.get(f"/games/{game_id}/view")).json()
        seat = view["flow"]["awaiting"][0]
        async with aconnect_ws(f"{souk_url}/games/{game_id}/seats/{seat}/ws?token={tokens[seat]}", client) as ws:
            mine = json.loads(await ws.receive_text())
            sent = {"type": "souk.Command", "command_id": "asyncapi-ws", "command": mine["legal"][0],
                    "expected_version": mine["version"]}
            assert not list(commands.iter_errors(sent))
            assert list(commands.iter_errors({**sent, "type": "souk.Nope"}))
            got = []
            for raw in (json.dumps(sent), "nonsense"):
                await ws.send_text(raw)
                while (frame := json.loads(await ws.receive_text())).get("type") != "souk.CommandAnswer":
                    pass
                got.append(frame)
        assert got[0]["status"] == 200 and got[1]["error"]["code"] == "bad_frame"
        assert all(not list(answers.iter_errors(frame)) for frame in got), got


async def test_the_official_asyncapi_parser_reads_the_document_without_an_error_or_a_warning(souk_url, asyncapi_parser,
                                                                                            tmp_path):
    """Issue #18 item 14: @asyncapi/parser refused the document (74 errors, all from the OpenAPI-style
    ``discriminator`` objects: AsyncAPI's Schema Object wants the property's name, a string)."""
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        r = await client.get("/asyncapi.json")
    (tmp_path / "asyncapi.json").write_text(r.text)
    done = subprocess.run(["node", asyncapi_parser, str(tmp_path / "asyncapi.json")], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    serious = [d for d in verdict["diagnostics"] if d["severity"] <= 1]  # 0 error, 1 warning (2 info, 3 hint)
    assert verdict["parsed"] and serious == [], serious[:5]
