"""Bad input against the real server (issue #8, items 7 and 8): every refusal is a JSON ``{"code", "message"}``
with a stable 4xx code, it changes nothing, and no input gets a 5xx or a plain-text answer."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.e2e.support import bearer, started_game
from services.store import keys

pytestmark = pytest.mark.anyio

BIG = 2**63  # one past the largest signed 64-bit integer: Redis refuses it as an index


def refused(r: httpx.Response, status: int, code: str) -> None:
    assert r.status_code == status, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/json"), r.headers["content-type"]
    body = r.json()
    assert set(body) == {"code", "message"} and body["code"] == code and body["message"], body


async def a_started_game(client: httpx.AsyncClient, seats: int = 3) -> tuple[str, list[dict[str, str]]]:
    game_id, tokens = await started_game(client, "samarkand", seats, "bad input")
    return game_id, [bearer(t) for t in tokens]


async def queued(client: httpx.AsyncClient) -> str:
    """The id of the last command the gateway queued (the stream's length would not do: the engine trims the
    commands it has answered)."""
    return (await client.get("/health")).json()["streams"][keys.commands(0)]["last_id"]


async def test_integers_out_of_range_in_the_path_or_the_query_get_a_400_not_a_500(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_id, auth = await a_started_game(client)
        g = f"/games/{game_id}"
        for url, code in [
            (f"{g}/history?after={BIG}", "bad_page"),
            (f"{g}/history?after={BIG * 10}", "bad_page"),
            (f"{g}/history?after=-1", "bad_page"),
            (f"{g}/history?limit={BIG}", "bad_page"),
            (f"{g}/history?limit=0", "bad_page"),
            (f"{g}/history?after=abc", "bad_request"),
            (f"{g}/history?limit=1.5", "bad_request"),
            (f"{g}/history?after=" + "9" * 5000, "bad_request"),
            (f"{g}/seats/0/history?after={BIG}", "bad_page"),
            (f"{g}/seats/0/history?after={BIG - 1}&limit=1000", None),  # the last valid index: an empty page
            (f"{g}/view?min_version={BIG}", "bad_request"),
            (f"{g}/view?min_version=-1", "bad_request"),
            (f"{g}/seats/0/view?min_version={BIG}", "bad_request"),
            ("/games?limit=0", "bad_page"),
            ("/games?limit=-1", "bad_page"),
            (f"/games?limit={BIG}", "bad_page"),
            (f"{g}/seats/{BIG}/view", "bad_request"),
            (f"{g}/seats/-1/legal", "bad_request"),
            (f"{g}/seats/{BIG}/history", "bad_request"),
        ]:
            r = await client.get(url, headers=auth[0])
            if code is None:
                assert r.status_code == 200 and r.json()["entries"] == [], r.text
            else:
                refused(r, 400, code)
        before = await queued(client)
        r = await client.post(f"{g}/seats/{BIG}/commands", headers=auth[0],
                              json={"command_id": "big", "command": {"type": "samarkand.Pass"}})
        refused(r, 400, "bad_request")
        assert await queued(client) == before


async def test_a_body_nested_too_deep_is_refused_at_the_gateway_and_never_reaches_the_engine(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_id, auth = await a_started_game(client)
        url = f"/games/{game_id}/seats/0/commands"
        headers = {**auth[0], "content-type": "application/json"}
        version = (await client.get(f"/games/{game_id}/view")).json()["version"]
        before = await queued(client)
        for depth in (33, 977, 5000):
            nested = "[" * depth + "]" * depth
            body = '{"command_id": "deep", "command": {"type": "samarkand.Pass", "x": ' + nested + "}}"
            refused(await client.post(url, content=body, headers=headers), 400, "bad_request")
            options = '{"game": "samarkand", "title": "deep", "seats": 3, "options": {"a": ' + nested + "}}"
            refused(await client.post("/games", content=options, headers=headers), 400, "bad_request")
        refused(await client.post("/games", content="[" * 978 + "]" * 978, headers=headers), 400, "bad_request")
        brackets_in_a_string = '{"command_id": "deep", "command": {"type": "samarkand.Fly", "x": "' + "[" * 5000 + '"}}'
        refused(await client.post(url, content=brackets_in_a_string, headers=headers), 400, "bad_command")
        assert await queued(client) == before  # nothing was queued: the engine never saw them
        assert (await client.get(f"/games/{game_id}/view")).json()["version"] == version
        legal = (await client.get(f"/games/{game_id}/seats/0/legal", headers=auth[0])).json()["legal"]
        r = await client.post(url, headers=auth[0], json={"command_id": "after", "command": legal[0]})
        assert r.status_code == 200 and r.json()["status"] == "accepted", r.text  # the engine is alive


async def test_a_body_over_64_kib_gets_a_413_and_one_just_under_reaches_the_rules(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        def create(title: str) -> bytes:
            return json.dumps({"game": "samarkand", "title": title, "seats": 3}).encode()

        envelope = len(create(""))
        r = await client.post("/games", content=create("x" * (64 * 1024 - envelope)),
                              headers={"content-type": "application/json"})
        refused(r, 422, "bad_title")  # 64 KiB exactly: the gateway lets it through, the rules refuse the title
        r = await client.post("/games", content=create("x" * (64 * 1024 - envelope + 1)),
                              headers={"content-type": "application/json"})
        refused(r, 413, "body_too_large")
        r = await client.post("/games", content=create("x" * 10_000_000), headers={"content-type": "application/json"})
        refused(r, 413, "body_too_large")
        assert (await client.get("/games")).json() == []


async def test_a_body_that_is_not_utf8_or_not_json_gets_a_400(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        headers = {"content-type": "application/json"}
        for body in (b'{"game": "samarkand", "title": "\xff\xfe", "seats": 3}',
                     b'{"game": "samarkand", "title": "caf\xe9", "seats": 3}',  # Latin-1, not UTF-8
                     b'{"game": "samarkand", "title": "\xed\xa0\x80", "seats": 3}',  # an encoded surrogate
                     b'\xef\xbb\xbf{"game": "samarkand", "title": "bom", "seats": 3}',
                     b'{"game": "samarkand", "title": "\\ud800", "seats": 3}',  # a lone surrogate escape
                     b'{"game": "samarkand", "title": "x", "seats": 3',
                     b"", b"null", b"[]", b'"x"'):
            refused(await client.post("/games", content=body, headers=headers), 400, "bad_request")
        game_id, _ = await a_started_game(client, 3)
        r = await client.post(f"/games/{game_id}/seats", content=b'{"name": "\xc3"}', headers=headers)
        refused(r, 400, "bad_request")
        assert [g["game_id"] for g in (await client.get("/games")).json()] == [game_id]


async def test_bodies_are_decoded_strictly_with_no_coercion_and_no_unknown_field(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        for body in ({"game": "samarkand", "title": "x", "seats": "3"},
                     {"game": "samarkand", "title": "x", "seats": 3.0},
                     {"game": "samarkand", "title": "x", "seats": True},
                     {"game": "samarkand", "title": 5, "seats": 3},
                     {"game": "samarkand", "title": "x", "seats": 3, "options": []},
                     {"game": "samarkand", "title": "x", "seats": 3, "seed": 5},
                     {"game": "samarkand", "title": "x", "seats": 3, "colour": "red"},
                     {"game": "samarkand", "seats": 3}):
            refused(await client.post("/games", json=body), 400, "bad_request")
        assert (await client.get("/games")).json() == []

        game_id, auth = await a_started_game(client, 3)
        version = (await client.get(f"/games/{game_id}/view")).json()["version"]
        r = await client.post("/games", json={"game": "samarkand", "title": "open", "seats": 3})
        open_id = r.json()["game_id"]
        for body in ({"name": "x", "seat": "0"}, {"name": "x", "seat": 0.0}, {"name": 7}, {"name": "x", "x": 1}):
            refused(await client.post(f"/games/{open_id}/seats", json=body), 400, "bad_request")
        assert all(s["name"] is None for s in (await client.get(f"/games/{open_id}")).json()["seats"])

        url = f"/games/{game_id}/seats/0/commands"
        before = await queued(client)
        for body in ({"command_id": 5, "command": {"type": "samarkand.Pass"}},
                     {"command_id": "c", "command": [{"type": "samarkand.Pass"}]},
                     {"command_id": "c", "command": "samarkand.Pass"},
                     {"command_id": "c", "command": None},
                     {"command_id": "c"},
                     {"command_id": "c", "command": {"type": "samarkand.Pass"}, "colour": "red"}):
            refused(await client.post(url, headers=auth[0], json=body), 400, "bad_request")
        for command_id in ("", "x" * 101):
            r = await client.post(url, headers=auth[0], json={"command_id": command_id,
                                                               "command": {"type": "samarkand.Pass"}})
            refused(r, 400, "bad_command_id")
        legal = (await client.get(f"/games/{game_id}/seats/0/legal", headers=auth[0])).json()["legal"]
        loose = {k: str(v) if isinstance(v, int) and not isinstance(v, bool) else v for k, v in legal[0].items()}
        if loose != legal[0]:  # a command with an integer field sent as a string
            refused(await client.post(url, headers=auth[0], json={"command_id": "s", "command": loose}),
                    400, "bad_command")
        assert await queued(client) == before
        assert (await client.get(f"/games/{game_id}/view")).json()["version"] == version


async def test_names_and_titles_with_control_or_format_characters_are_refused_and_the_rest_stored_as_sent(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        for title in ("Friday\u202emarket", "Friday\x00", "a\u2066b\u2069", "\u200b", "tab\there"):
            refused(await client.post("/games", json={"game": "samarkand", "title": title, "seats": 3}),
                    422, "bad_title")
        assert (await client.get("/games")).json() == []
        r = await client.post("/games", json={"game": "samarkand", "title": " <b>Cafe\u0301</b> ", "seats": 3})
        game_id = r.json()["game_id"]
        for name in ("Ali\x00", "Ali\u202egnp.exe", "\u2067Bea", "Cyr\u200f", "\u3164", "Dan\r\nEve", " "):
            refused(await client.post(f"/games/{game_id}/seats", json={"name": name}), 422, "bad_name")
        for name in ("<script>alert(1)</script>", "Zoe\u0301", "می\u200cخواهم"):
            assert (await client.post(f"/games/{game_id}/seats", json={"name": name})).status_code == 201
        lobby = (await client.get(f"/games/{game_id}")).json()
        assert lobby["title"] == "<b>Café</b>"
        assert [s["name"] for s in lobby["seats"]] == ["<script>alert(1)</script>", "Zoé", "می\u200cخواهم"]
        view = (await client.get(f"/games/{game_id}/view")).json()
        assert view["seats"][0]["name"] == "<script>alert(1)</script>" and view["title"] == "<b>Café</b>"


def raw_request(url: str, head: bytes) -> tuple[int, dict[str, str], bytes]:
    """Sends ``head`` as it is on a new connection; returns the status, headers and body of the answer."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        try:
            sock.sendall(head)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before reading it all: the answer is still there to read
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
            if b"\r\n\r\n" in data:
                top, _, body = data.partition(b"\r\n\r\n")
                headers = dict(line.decode().lower().split(": ", 1) for line in top.split(b"\r\n")[1:])
                if len(body) >= int(headers.get("content-length", 10**9)):
                    break
    top, _, body = data.partition(b"\r\n\r\n")
    lines = top.decode().split("\r\n")
    headers = {k.lower(): v for k, v in (line.split(": ", 1) for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body[: int(headers.get("content-length", len(body)))]


@pytest.mark.parametrize("size", [9 * 1024, 40 * 1024, 200 * 1024, 2 * 1024 * 1024])
def test_huge_headers_get_a_json_431(souk_url, size):
    # under 64 KiB the app refuses them; over it, uvicorn's parser may (depending on how the bytes arrive)
    head = (f"GET /games/x/seats/0/view HTTP/1.1\r\nHost: souk\r\nAuthorization: Bearer {'a' * size}\r\n"
            "Connection: close\r\n\r\n").encode()
    status, headers, body = raw_request(souk_url, head)
    assert status == 431 and headers["content-type"].startswith("application/json"), (status, headers, body)
    assert json.loads(body)["code"] == "headers_too_large"


def test_headers_under_8_kib_are_served(souk_url):
    r = httpx.get(f"{souk_url}/games/x/seats/0/view", headers={"Authorization": "Bearer " + "a" * 7000}, timeout=10)
    refused(r, 404, "game_not_found")


def test_a_request_that_is_not_http_gets_a_json_400(souk_url):
    for head in (b"GET /health HTTP/1.1\r\nHost: souk\r\nBad Header\r\n\r\n",
                 b"GET /health HTTP/1.1\r\nHost: souk\r\nX-Nul: a\x00b\r\n\r\n",
                 b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n"):  # TLS spoken to a plain HTTP port
        status, headers, body = raw_request(souk_url, head)
        assert status == 400 and headers["content-type"].startswith("application/json"), (status, headers, body)
        assert json.loads(body)["code"] == "bad_request"


async def test_a_seat_that_is_not_an_integer_in_the_path_gets_a_400_as_the_readme_says(souk_url):
    """Issue #18 item 16: the README's "a path or query parameter that is not an integer" is a 400 ``bad_request``;
    ``/games/X/seats/abc/view`` answered 404 (no route took it)."""
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_id, auth = await a_started_game(client)
        g = f"/games/{game_id}"
        for method, url in [("GET", f"{g}/seats/abc/view"), ("GET", f"{g}/seats/1.5/legal"),
                            ("GET", f"{g}/seats/abc/history"), ("POST", f"{g}/seats/x/commands"),
                            ("POST", f"{g}/seats/abc/undo"), ("DELETE", f"{g}/seats/abc")]:
            r = await client.request(method, url, headers=auth[0], json={"command_id": "a", "command": {}})
            refused(r, 400, "bad_request")
            assert "seat" in r.json()["message"], r.text
        refused(await client.get(f"{g}/seats/0/nothing-here", headers=auth[0]), 404, "not_found")
        refused(await client.get(f"{g}/nothing-here/abc"), 404, "not_found")


def test_http_1_0_is_served_and_other_versions_get_a_json_400_as_the_readme_says(souk_url):
    """Issue #18 item 16: the README said a request that is not HTTP/1.1 is refused; HTTP/1.0 is served (load
    balancers' health checks speak it), and the README now says so."""
    status, headers, body = raw_request(souk_url, b"GET /catalog HTTP/1.0\r\nHost: souk\r\n\r\n")
    assert status == 200 and json.loads(body), (status, headers, body[:200])
    for head in (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", b"GET /catalog HTTP/3.0\r\nHost: souk\r\n\r\n",
                 b"GET /catalog HTTP/0.9\r\nHost: souk\r\n\r\n"):
        status, headers, body = raw_request(souk_url, head)
        assert status == 400 and headers["content-type"].startswith("application/json"), (head, status, body)
        assert json.loads(body)["code"] == "bad_request"
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert "HTTP/1.0 and HTTP/1.1 are served" in readme
