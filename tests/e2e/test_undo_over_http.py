"""Undo over HTTP, rule by rule (issue #10 section 2; docs/rules-decisions.md, Undo): given a game played through
the gateway, when a seat posts ``/undo`` (or another ``/undo/accept``, ``/undo/decline``), then this answer, and
these views, history and pushes. One ``souk serve`` for the module: each test plays its own games."""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema_rs
import pytest
from httpx_ws import aconnect_ws

from domain import table as tbl
from services.client import SoukClient, SoukError
from services.gateway.errors import raise_if_rejected
from services.gateway.openapi import ERRORS
from services.history.audit import verify_history
from contracts.envelope import Reply
from tests.e2e.support import NO_LIMITS, bearer, serve_on_databases, started_game

pytestmark = pytest.mark.anyio
SEED = "0d" * 32


@pytest.fixture(scope="module")
def souk_url(redis_server_url: str, tmp_path_factory) -> Iterator[str]:
    """Databases 2 (events) and 3 (views) of the test Redis: the other tests flush database 0 as they go."""
    with serve_on_databases(redis_server_url, 2, 3, tmp_path_factory.mktemp("undo"), NO_LIMITS) as url:
        yield url


@pytest.fixture
async def client(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as http:
        yield http


class Table:
    """One game over HTTP, with every seat's token."""

    def __init__(self, client: httpx.AsyncClient, game_id: str, tokens: list[str]) -> None:
        self.client, self.game_id, self.tokens = client, game_id, tokens
        self.ids = 0

    def path(self, seat: int, route: str) -> str:
        return f"/games/{self.game_id}/seats/{seat}/{route}"

    async def view(self, seat: int | None) -> dict[str, Any]:
        if seat is None:
            return (await self.client.get(f"/games/{self.game_id}/view")).json()
        r = await self.client.get(self.path(seat, "view"), headers=bearer(self.tokens[seat]))
        assert r.status_code == 200, r.text
        return r.json()

    async def history(self, seat: int | None = None) -> list[dict[str, Any]]:
        path = f"/games/{self.game_id}/history" if seat is None else self.path(seat, "history")
        headers = {} if seat is None else bearer(self.tokens[seat])
        r = await self.client.get(path, params={"limit": 1000}, headers=headers)
        assert r.status_code == 200, r.text
        return r.json()["entries"]

    async def post(self, seat: int, route: str, body: dict[str, Any], command_id: str | None = None
                   ) -> httpx.Response:
        self.ids += 1
        return await self.client.post(self.path(seat, route), headers=bearer(self.tokens[seat]),
                                      json={"command_id": f"c{self.ids}" if command_id is None else command_id, **body})

    async def play(self, seat: int, command: dict[str, Any]) -> dict[str, Any]:
        r = await self.post(seat, "commands", {"command": command})
        assert r.status_code == 200, r.text
        return r.json()

    async def undo(self, seat: int, to_version: int, **body: Any) -> httpx.Response:
        return await self.post(seat, "undo", {"to_version": to_version, **body})

    async def answer(self, seat: int, route: str, **body: Any) -> httpx.Response:
        return await self.post(seat, f"undo/{route}", body)


async def new_table(client: httpx.AsyncClient, game: str, seats: int, undo: str) -> Table:
    game_id, tokens = await started_game(client, game, seats, title=f"undo {undo}", seed=SEED, unfair=True,
                                         options={"undo": undo})
    return Table(client, game_id, tokens)


def refused(r: httpx.Response, status: int, code: str) -> None:
    assert (r.status_code, r.json()["code"]) == (status, code), r.text


async def yspahan_rolled(client, undo: str) -> tuple[Table, int, int]:
    """Yspahan, 3 seats: the first player rolled the dice (a barrier). Returns the table, that seat and the
    version before the roll."""
    table = await new_table(client, "yspahan", 3, undo)
    spectator = await table.view(None)
    [seat] = spectator["flow"]["awaiting"]
    await table.play(seat, {"type": "yspahan.RollDice", "yellow": 0})
    return table, seat, spectator["version"]


def plain_dice(view: dict[str, Any]) -> dict[str, Any]:
    """A dice group taken for camels or gold, no card discarded: no barrier."""
    return next(c for c in view["legal"] if c["type"] == "yspahan.SelectDice" and c["action"] == "floor"
                and c["floor"] in ("camels", "gold") and not c.get("discard"))


async def samarkand_chosen(client, undo: str, seats: int = 3, choosers: int | None = None
                           ) -> tuple[Table, list[int]]:
    """Samarkand: seats 0, 1... (every seat but the last, unless ``choosers``) chose a card face down (no
    barrier); the versions before each."""
    table = await new_table(client, "samarkand", seats, undo)
    before = []
    for seat in range(seats - 1 if choosers is None else choosers):
        view = await table.view(seat)
        before.append(view["version"])
        await table.play(seat, view["legal"][0])
    return table, before


# --- own turn --------------------------------------------------------------------------------------------------


async def test_play_undo_and_every_reader_sees_the_game_as_it_was(client, souk_url):
    """The end-to-end one: a move taken back at once; views, legal commands, history and the WebSocket."""
    table, seat, _ = await yspahan_rolled(client, "own_turn")
    before = await table.view(seat)
    spectator_before = await table.view(None)
    pushed: list[dict[str, Any]] = []
    connected = asyncio.Event()

    async def follow() -> None:
        async with aconnect_ws(f"{souk_url}{table.path(seat, 'ws')}?token={table.tokens[seat]}", client) as ws:
            while True:
                pushed.append(json.loads(await ws.receive_text()))
                connected.set()

    follower = asyncio.create_task(follow())
    try:
        await asyncio.wait_for(connected.wait(), 10)
        moved = await table.play(seat, plain_dice(before))
        after = await table.view(seat)
        assert after["undo"]["to_versions"][-1] == before["version"]

        # when: the seat takes its move back
        r = await table.undo(seat, before["version"])

        # then: accepted at once, with one event (UndoApplied)
        assert r.status_code == 200, r.text
        reply = r.json()
        assert reply["status"] == "accepted" and reply["version"] == moved["version"] + 1 and reply["events"] == 1
        now = await table.view(seat)
        assert now["version"] == reply["version"]
        assert (now["view"], now["legal"], now["flow"]) == (before["view"], before["legal"], before["flow"])
        undone = {"first": before["version"] + 1, "last": moved["version"], "by_seat": seat}
        assert now["undo"]["undone"] == [undone] and now["undo"]["request"] is None
        spectator = await table.view(None)
        assert spectator["view"] == spectator_before["view"] and spectator["undo"]["undone"] == [undone]
        for other in range(3):
            assert (await table.view(other))["undo"]["undone"] == [undone]
        legal = (await client.get(table.path(seat, "legal"), headers=bearer(table.tokens[seat]))).json()
        assert legal["legal"] == before["legal"] and legal["version"] == reply["version"]

        # the WebSocket pushed the rolled-back view
        for _ in range(100):
            if pushed and pushed[-1]["version"] == reply["version"]:
                break
            await asyncio.sleep(0.05)
        assert pushed[-1]["version"] == reply["version"] and pushed[-1]["view"] == before["view"]
        assert pushed[-1]["undo"]["undone"] == [undone]
    finally:
        follower.cancel()
        await asyncio.gather(follower, return_exceptions=True)

    # the history keeps every event, tells the undone ones, and its chain still holds
    for reader in (None, seat):
        entries = await table.history(reader)
        assert [e["seq"] for e in entries] == list(range(1, reply["version"] + 1))
        assert [e["seq"] for e in entries if e["undone"]] == list(range(before["version"] + 1, moved["version"] + 1))
        assert entries[-1]["type"] == "table.UndoApplied" and not entries[-1]["undone"]
        assert entries[-1]["event"] == {"type": "table.UndoApplied", "to_version": before["version"],
                                        "by_seat": seat}
        assert verify_history(table.game_id, await table.history(None)) == []

    # and the game goes on from there: the seat moves again
    again = await table.play(seat, plain_dice(now))
    assert again["version"] == reply["version"] + len(range(before["version"] + 1, moved["version"] + 1))


async def test_own_turn_refuses_to_take_back_a_move_another_seat_answered(client):
    table, before = await samarkand_chosen(client, "own_turn")
    view = await table.view(0)
    assert view["undo"]["policy"] == "own_turn" and view["undo"]["to_versions"] == []
    refused(await table.undo(0, before[0]), 422, "undo_not_allowed")  # seat 1 chose since
    assert (await table.view(1))["undo"]["to_versions"] == [before[1]]
    r = await table.undo(1, before[1])
    assert r.status_code == 200 and r.json()["events"] == 1, r.text


async def test_a_seat_may_not_take_back_another_seats_move_nor_go_to_a_version_that_is_no_command_end(client):
    table, before = await samarkand_chosen(client, "with_consent")
    refused(await table.undo(0, before[1]), 422, "undo_not_allowed")  # seat 1's choice
    version = (await table.view(0))["version"]
    refused(await table.undo(0, version), 422, "bad_undo_version")  # nothing after it
    refused(await table.undo(0, before[0] + 1_000), 422, "bad_undo_version")
    refused(await table.undo(0, -1), 400, "bad_request")
    refused(await table.undo(0, 2**63), 400, "bad_request")
    assert (await table.view(0))["version"] == version  # refusals change nothing


async def test_policy_none_refuses_every_undo(client):
    table, seat, _ = await yspahan_rolled(client, "none")
    view = await table.view(seat)
    await table.play(seat, plain_dice(view))
    after = await table.view(seat)
    assert after["undo"] == {"policy": "none", "undone": [], "request": None, "to_versions": []}
    refused(await table.undo(seat, view["version"]), 422, "undo_not_allowed")


async def test_a_bad_undo_policy_is_refused_at_creation(client):
    r = await client.post("/games", json={"game": "samarkand", "title": "t", "seats": 3,
                                          "options": {"undo": "always"}})
    refused(r, 422, "bad_undo_policy")


# --- with consent ----------------------------------------------------------------------------------------------


async def test_with_consent_the_other_seats_are_asked_then_accept_and_the_undo_applies(client):
    table, before = await samarkand_chosen(client, "with_consent")
    state = await table.view(0)

    r = await table.undo(0, before[0])
    assert r.status_code == 200 and r.json()["events"] == 1, r.text  # UndoRequested
    request = {"seat": 0, "to_version": before[0], "asked": [1, 2], "accepted": []}
    for reader in (None, 0, 1, 2):
        view = await table.view(reader)
        assert view["undo"]["request"] == request and view["undo"]["to_versions"] == []
    refused(await table.answer(0, "accept"), 422, "not_asked")  # the requester does not answer
    refused(await table.undo(1, before[1]), 409, "undo_pending")

    assert (await table.answer(1, "accept")).json()["events"] == 1
    assert (await table.view(2))["undo"]["request"]["accepted"] == [1]
    refused(await table.answer(1, "accept"), 422, "already_answered")
    r = await table.answer(2, "accept")
    assert r.status_code == 200 and r.json()["events"] == 2, r.text  # UndoAccepted, UndoApplied

    view = await table.view(0)
    assert view["undo"]["request"] is None
    assert view["undo"]["undone"] == [{"first": before[0] + 1, "last": r.json()["version"] - 1, "by_seat": 0}]
    assert view["legal"] and view["view"] != state["view"]  # seat 0 chooses again
    assert (await table.view(1))["legal"]  # and so does seat 1: its choice was taken back too
    types = [(e["type"], e["undone"]) for e in (await table.history())[before[0]:]]
    assert types[-4:] == [("table.UndoRequested", True), ("table.UndoAccepted", True),
                          ("table.UndoAccepted", True), ("table.UndoApplied", False)]
    assert all(undone for _, undone in types[:-1])


async def test_a_decline_ends_the_request_and_changes_nothing(client):
    table, before = await samarkand_chosen(client, "with_consent")
    view = await table.view(1)
    await table.undo(0, before[0])
    await table.answer(1, "accept")
    r = await table.answer(2, "decline")
    assert r.status_code == 200 and r.json()["events"] == 1, r.text
    now = await table.view(1)
    assert now["undo"]["request"] is None and now["undo"]["undone"] == []
    assert now["view"] == view["view"] and now["version"] == view["version"] + 3
    refused(await table.answer(1, "accept"), 422, "no_undo_request")
    assert not any(e["undone"] for e in await table.history())


async def test_the_requester_withdraws_its_request_with_a_decline(client):
    table, before = await samarkand_chosen(client, "with_consent")
    await table.undo(0, before[0])
    assert (await table.answer(0, "decline")).status_code == 200
    assert (await table.view(None))["undo"]["request"] is None


async def test_any_new_command_ends_the_request(client):
    table, before = await samarkand_chosen(client, "with_consent", seats=4, choosers=2)
    assert (await table.undo(0, before[0])).status_code == 200
    view = await table.view(2)
    await table.play(2, view["legal"][0])  # seat 2 chooses: no barrier, the request ends all the same
    assert (await table.view(None))["undo"]["request"] is None
    refused(await table.answer(1, "accept"), 422, "no_undo_request")


# --- barriers --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("undo", ["own_turn", "with_consent"])
async def test_yspahan_the_dice_rolled_are_a_barrier_whatever_the_policy(client, undo):
    table, seat, before_roll = await yspahan_rolled(client, undo)
    view = await table.view(seat)
    await table.play(seat, plain_dice(view))
    refused(await table.undo(seat, before_roll), 422, "undo_not_allowed")
    assert all(v >= view["version"] for v in (await table.view(seat))["undo"]["to_versions"])


async def test_yspahan_a_card_drawn_cannot_be_taken_back(client):
    table, seat, _ = await yspahan_rolled(client, "with_consent")
    view = await table.view(seat)
    draw = next(c for c in view["legal"] if c["type"] == "yspahan.SelectDice" and c["action"] == "card")
    await table.play(seat, draw)
    refused(await table.undo(seat, view["version"]), 422, "undo_not_allowed")


async def test_samarkand_the_last_choice_reveals_every_card_and_nobody_may_undo_over_it(client):
    table, before = await samarkand_chosen(client, "with_consent")
    view = await table.view(2)
    await table.play(2, view["legal"][0])  # CardsRevealed
    for seat in range(3):
        assert (await table.view(seat))["undo"]["to_versions"] == []
        refused(await table.undo(seat, before[0] if seat != 2 else view["version"]), 422, "undo_not_allowed")


# --- the routes ------------------------------------------------------------------------------------------------


async def test_an_undo_is_answered_once_per_command_id_and_checks_the_expected_version(client):
    table, seat, _ = await yspahan_rolled(client, "own_turn")
    view = await table.view(seat)
    moved = await table.play(seat, plain_dice(view))
    refused(await table.undo(seat, view["version"], expected_version=view["version"]), 409, "stale")
    first = await table.post(seat, "undo", {"to_version": view["version"]}, command_id="u1")
    again = await table.post(seat, "undo", {"to_version": view["version"]}, command_id="u1")
    assert first.status_code == again.status_code == 200 and first.json() == again.json()
    assert (await table.view(None))["version"] == moved["version"] + 1  # applied once


async def test_the_undo_routes_take_the_seats_token_and_a_strict_body(client):
    table, seat, _ = await yspahan_rolled(client, "own_turn")
    other = (seat + 1) % 3
    r = await client.post(table.path(seat, "undo"), headers=bearer(table.tokens[other]),
                          json={"command_id": "x", "to_version": 1})
    refused(r, 401, "bad_token")
    r = await client.post(table.path(seat, "undo"), json={"command_id": "x", "to_version": 1})
    refused(r, 401, "missing_token")
    r = await table.post(seat, "undo", {"to_version": "3"})
    refused(r, 400, "bad_request")
    r = await table.post(seat, "undo/accept", {"to_version": 3})
    refused(r, 400, "bad_request")
    refused(await table.post(seat, "undo", {"to_version": 3}, command_id=""), 400, "bad_command_id")
    r = await client.post("/games/nosuchgame/seats/0/undo/decline", headers=bearer(table.tokens[0]),
                          json={"command_id": "x"})
    assert r.status_code in (401, 404), r.text


async def test_the_generic_command_route_refuses_undo_commands(client):
    table, seat, before_roll = await yspahan_rolled(client, "own_turn")
    view = await table.view(seat)
    await table.play(seat, plain_dice(view))
    for command in ({"type": "table.RequestUndo", "to_version": view["version"]}, {"type": "table.AcceptUndo"},
                    {"type": "table.DeclineUndo"}):
        r = await table.post(seat, "commands", {"command": command})
        refused(r, 400, "bad_command")
        assert "undo" in r.json()["message"]
    assert (await table.view(seat))["undo"]["undone"] == []


def test_every_code_the_undo_path_raises_maps_to_a_documented_status():
    source = "".join(inspect.getsource(f) for f in (tbl.decide, tbl._undo, tbl._request_undo, tbl._check_token))
    codes = set(re.findall(r'RuleViolation\(\s*"([a-z_]+)"', source)) | {"stale", "game_not_found"}
    assert {"undo_pending", "undo_not_allowed", "bad_undo_version", "no_undo_request", "not_asked",
            "already_answered"} <= codes
    for code in codes - {"no_such_seat", "bad_token"}:  # the gateway checks the token before queueing (401)
        try:
            raise_if_rejected(Reply("c", "g", "rejected", code=code, message="m"))
        except Exception as exc:  # noqa: BLE001
            status = exc.status_code
        assert re.search(rf"\b{code}\b", ERRORS[status]), (code, status, ERRORS[status])


async def test_undo_answers_and_views_fit_the_api_document(client):
    served = (await client.get("/schema/openapi.json")).json()
    paths = served["paths"]
    for route in ("undo", "undo/accept", "undo/decline"):
        operation = paths[f"/games/{{game_id}}/seats/{{seat}}/{route}"]["post"]
        assert {"200", "401", "404", "409", "422"} <= set(operation["responses"]), route
        assert operation["security"] == [{"seatToken": []}]

    def valid(instance: Any, name: str) -> None:
        schema = {"$ref": f"#/components/schemas/{name}", "components": served["components"]}
        errors = [e.message for e in jsonschema_rs.Draft202012Validator(schema).iter_errors(instance)]
        assert not errors, (name, errors[:3], instance)

    table, before = await samarkand_chosen(client, "with_consent")
    body = {"command_id": "u", "to_version": before[0]}
    valid(body, "UndoCommandRequest")
    r = await table.post(0, "undo", {"to_version": before[0]}, command_id="u")
    valid(r.json(), "Reply")
    valid(await table.view(1), "TableView")
    valid({"command_id": "a"}, "UndoAnswerRequest")
    valid((await table.answer(1, "accept")).json(), "Reply")
    valid((await table.answer(2, "accept")).json(), "Reply")
    valid(await table.view(None), "TableView")
    history = (await client.get(f"/games/{table.game_id}/history")).json()
    valid(history, "HistoryPage")
    assert any(e["undone"] for e in history["entries"])
    refusal = await table.answer(1, "accept")
    valid(refusal.json(), "ApiErrorBody")


async def test_the_python_sdk_undoes_accepts_and_declines(client):
    async with SoukClient(http=client) as souk:
        created = await souk.create("samarkand", "sdk undo", 3, {"undo": "with_consent"})
        seats = [await souk.join(created.game_id, f"p{s}") for s in range(3)]
        views = [await s.view() for s in seats]
        await seats[0].send(views[0].legal[0], expected_version=None)
        await seats[1].send(views[1].legal[0], expected_version=None)
        to = views[0].version
        assert (await seats[0].undo(to, expected_version=None)).status == "accepted"
        for s in seats[1:]:
            assert (await s.view()).undo.request.to_version == to
        with pytest.raises(SoukError) as info:
            await seats[1].undo(views[1].version)
        assert (info.value.status, info.value.code) == (409, "undo_pending")
        await seats[1].accept_undo()  # on the newest view it saw (expected_version)
        await seats[2].decline_undo(expected_version=None)
        view = await seats[0].view()
        assert view.undo.request is None and view.undo.undone == ()
        await seats[0].undo(to)
        await seats[1].accept_undo(expected_version=None)
        applied = await seats[2].accept_undo(expected_version=None)
        view = await seats[0].view()
        assert view.version == applied.version and view.undo.undone[0].first == to + 1
        flags = [e.undone for e in (await seats[0].history()).entries]
        assert flags[to:] == [True] * (applied.version - to - 1) + [False] and not any(flags[:to])


def test_the_readmes_undo_walkthrough_runs_with_curl(souk_url):
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = re.search(r"<!-- undo -->\s*```bash\n(.*?)```\s*<!-- /undo -->", text, re.S)
    assert block, "the README lost its undo walkthrough markers"
    done = subprocess.run(["bash", "-c", "set -euo pipefail\n" + block.group(1)], env={**os.environ, "S": souk_url},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "'to_versions': [" in out and '"command_id":"bea-undo"' in out and '"status":"accepted"' in out
    assert "'asked': [1, 2]" in out and out.count('"command_id":"accept-') == 2
    lines = out.strip().splitlines()
    undone, history = ast.literal_eval(lines[-2]), ast.literal_eval(lines[-1])
    assert [r["by_seat"] for r in undone] == [0]  # the latest undo (Bea's first is in the history: flagged)
    assert history[-1][1:] == ("table.UndoApplied", False) and all(u for _, _, u in history[:-1])


async def test_the_catalog_names_the_undo_policy_and_its_default_among_every_games_options(client):
    """The option undo is the table's (every game takes it, with own_turn when it is not given): the catalog, which
    lists each game's options with their defaults, names it too."""
    catalog = (await client.get("/catalog")).json()
    assert catalog and all(g["options"]["undo"] == "own_turn" for g in catalog), catalog
