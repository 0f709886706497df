"""The SDK's resends and errors, against a scripted server (httpx.MockTransport): what it sends, how often, and
what it raises. The real server is in tests/e2e/test_client.py."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from contracts import samarkand
from contracts.api import Joined
from services.client import Seat, SoukClient, SoukError

pytestmark = pytest.mark.anyio

VIEW = {"game_id": "g1", "game": "samarkand", "title": "t", "version": 12, "status": "playing", "seat": 0,
        "seats": [{"seat": 0, "name": "a"}], "flow": {"phase": "choose", "awaiting": [0]},
        "legal": [{"type": "samarkand.ChooseCard", "value": 3}, {"type": "samarkand.Pass"}], "view": None}


def scripted(*answers):
    """A client whose server answers ``answers`` in turn (an httpx.Response, or an exception to raise), and the
    requests it received."""
    received: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        received.append(request)
        answer = answers[len(received) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer

    http = httpx.AsyncClient(base_url="http://souk.test", transport=httpx.MockTransport(handle))
    return SoukClient(http=http, retries=3), received


def error(status: int, code: str, **headers: str) -> httpx.Response:
    return httpx.Response(status, json={"code": code, "message": code.replace("_", " ")}, headers=headers)


def a_seat(souk: SoukClient) -> Seat:
    return Seat(souk, "samarkand", Joined("g1", 0, "secret", 1))


async def test_a_command_is_resent_with_the_same_id_after_a_timeout_a_lost_connection_and_a_5xx():
    accepted = {"command_id": "x", "game_id": "g1", "status": "accepted", "version": 13, "events": 1, "seat": 0}
    souk, received = scripted(httpx.Response(200, json=VIEW), httpx.ReadTimeout("slow"),
                              httpx.ConnectError("refused"), error(504, "engine_timeout"),
                              httpx.Response(200, json=accepted))
    seat = a_seat(souk)
    view = await seat.view()
    assert view.legal == (samarkand.ChooseCard(3), samarkand.Pass())  # typed on the game's contracts
    reply = await seat.send(view.legal[0])
    assert reply.status == "accepted" and reply.version == 13
    bodies = [json.loads(r.content) for r in received[1:]]
    assert len(bodies) == 4 and all(b == bodies[0] for b in bodies)  # one command id, resent as it was
    assert bodies[0]["command"] == {"type": "samarkand.ChooseCard", "value": 3}
    assert bodies[0]["expected_version"] == 12  # the version of the view it was decided on
    assert all(r.headers["authorization"] == "Bearer secret" for r in received)


async def test_a_refusal_is_raised_at_once_with_its_status_and_code():
    souk, received = scripted(error(409, "stale"), error(422, "not_your_turn"))
    seat = a_seat(souk)
    with pytest.raises(SoukError) as stale:
        await seat.send(samarkand.Pass(), expected_version=5)
    assert (stale.value.status, stale.value.code, stale.value.message) == (409, "stale", "stale")
    with pytest.raises(SoukError) as refused:
        await seat.send({"type": "samarkand.Pass"}, expected_version=None)
    assert refused.value.code == "not_your_turn" and "expected_version" not in json.loads(received[1].content)
    assert len(received) == 2


async def test_429_waits_for_retry_after_and_views_not_built_yet_are_asked_again():
    souk, received = scripted(error(429, "rate_limited", **{"Retry-After": "0.3"}), error(503, "view_not_ready"),
                              error(503, "not_projected"), httpx.Response(200, json={**VIEW, "seat": None}))
    started = time.monotonic()
    view = await souk.view("g1")
    assert view.seat is None and len(received) == 4 and time.monotonic() - started >= 0.3


async def test_a_create_and_a_join_are_resent_with_the_same_request_id():
    souk, received = scripted(httpx.ReadTimeout("slow"), httpx.Response(201, json={"game_id": "g1", "version": 1}),
                              error(500, "internal_error"),
                              httpx.Response(201, json={"game_id": "g1", "seat": 2, "token": "t", "version": 3}))
    created = await souk.create("samarkand", "t", 3, {"hidden_goods": True})
    seat = await souk.join(created.game_id, "ali")
    assert (seat.game, seat.seat, seat.token) == ("samarkand", 2, "t")
    creates, joins = [json.loads(r.content) for r in received[:2]], [json.loads(r.content) for r in received[2:]]
    assert creates[0] == creates[1] and len(creates[0]["request_id"]) >= 16
    assert creates[0]["options"] == {"hidden_goods": True}
    assert joins[0] == joins[1] and joins[0]["request_id"] != creates[0]["request_id"]


async def test_a_join_gives_fresh_entropy_unless_told_and_a_chosen_seed_says_unfair():
    joined = httpx.Response(201, json={"game_id": "g1", "seat": 0, "token": "t", "version": 2})
    created = httpx.Response(201, json={"game_id": "g1", "version": 1})
    souk, received = scripted(created, joined, joined, joined, created)
    await souk.create("samarkand", "t", 3)
    for given in (None, None, ""):
        await souk.join("g1", "ali", entropy=given)
    await souk.create("samarkand", "t", 3, seed="ab" * 32, unfair=True)
    bodies = [json.loads(r.content) for r in received]
    drawn = [bodies[1]["entropy"], bodies[2]["entropy"]]
    assert all(len(e) == 64 and bytes.fromhex(e) for e in drawn) and drawn[0] != drawn[1]  # secrets, each join
    assert bodies[3]["entropy"] == "" and "unfair" not in bodies[0]
    assert (bodies[4]["seed"], bodies[4]["unfair"]) == ("ab" * 32, True)


async def test_a_history_entry_stored_in_an_older_shape_is_typed_in_todays():
    entry = {"seq": 1, "type": "table.GameCreated", "seat": None, "command_id": "c", "recorded_at": 1.0,
             "hash": "h", "prev_hash": "p", "event": {"type": "table.GameCreated", "game": "samarkand", "title": "t",
                                                     "seats": 3, "options": {}, "seed_hash": "s", "seed_chosen": True}}
    page = {"game_id": "g1", "seat": None, "entries": [entry], "next_after": 1, "version": 1}
    souk, _ = scripted(httpx.Response(200, json=page))
    souk._games["g1"] = "samarkand"  # as after create, join or game(): the client knows the game's name
    [read] = (await souk.history("g1")).entries
    assert read.event.unfair is True and read.event.schema == 2


async def test_when_every_resend_fails_the_error_says_so_and_others_are_not_resent():
    souk, received = scripted(*[httpx.ConnectError("refused")] * 4)
    with pytest.raises(SoukError) as unreachable:
        await souk.catalog()
    assert (unreachable.value.status, unreachable.value.code) == (0, "unreachable") and len(received) == 4
    souk, received = scripted(error(429, "too_many_open_games", **{"Retry-After": "60"}))
    with pytest.raises(SoukError) as limited:
        await souk.create("samarkand", "t", 3)
    assert limited.value.code == "too_many_open_games" and limited.value.retry_after == 60 and len(received) == 1


async def test_fill_bots_posts_the_seats_and_strategy_and_is_resent_with_the_same_request_id():
    seated = {"game_id": "g1", "version": 4, "seats": [1, 2], "strategy": "mcts"}
    souk, received = scripted(httpx.ReadTimeout("slow"), error(503, "store_unavailable", **{"Retry-After": "0"}),
                              httpx.Response(201, json=seated))
    answer = await souk.fill_bots("g1", [1, 2], "mcts", invite="code")
    assert (answer.game_id, answer.version, answer.seats, answer.strategy) == ("g1", 4, (1, 2), "mcts")
    bodies = [json.loads(r.content) for r in received]
    assert [r.url.path for r in received] == ["/games/g1/bots"] * 3 and all(b == bodies[0] for b in bodies)
    assert bodies[0]["seats"] == [1, 2] and bodies[0]["strategy"] == "mcts" and bodies[0]["invite"] == "code"
    assert len(bodies[0]["request_id"]) >= 16
    souk, received = scripted(error(409, "game_started"))
    with pytest.raises(SoukError) as info:
        await souk.fill_bots("g1")  # every free seat, the server's strategy
    assert info.value.code == "game_started" and len(received) == 1
    assert json.loads(received[0].content)["seats"] is None and json.loads(received[0].content)["strategy"] is None
