"""Clocks over HTTP against real Redis (issue #19 section 3): `souk serve` runs the clock worker beside the engine,
the projector and the gateway. A seat that does nothing times out and the table's policy decides (a bot plays
that decision, or the seat forfeits); a seat resigns; a move makes its deadline moot; clients may not send the
platform's commands; /catalog describes the table's options. One `souk serve` for the module."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator

import httpx
import pytest
import redis

from services.client import SoukClient, SoukError
from services.store import keys
from tests.e2e.support import FAST_CLOCK, bearer, serve_on_databases, started_game

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def souk_url(redis_server_url: str, tmp_path_factory) -> Iterator[str]:
    """Databases 2 (events) and 3 (views) of the test Redis: the other tests flush database 0 as they go."""
    with serve_on_databases(redis_server_url, 2, 3, tmp_path_factory.mktemp("clocks"), FAST_CLOCK) as url:
        yield url


@pytest.fixture
def events_redis(redis_server_url: str):
    client = redis.Redis.from_url(redis_server_url.rsplit("/", 1)[0] + "/2")
    yield client
    client.close()


@pytest.fixture
async def client(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as http:
        yield http


async def history(client: httpx.AsyncClient, game_id: str) -> list[dict]:
    entries, after = [], 0
    while True:
        page = (await client.get(f"/games/{game_id}/history", params={"after": after, "limit": 200})).json()
        entries += page["entries"]
        if not page["entries"]:
            return entries
        after = page["next_after"]


async def until(client: httpx.AsyncClient, game_id: str, done: Callable[[list[dict]], bool],
                timeout: float = 20.0) -> list[dict]:
    """The game's history (as a spectator sees it) once ``done`` holds for it."""
    deadline = time.monotonic() + timeout
    while True:
        entries = await history(client, game_id)
        if done(entries):
            return entries
        assert time.monotonic() < deadline, [e["type"] for e in entries]
        await asyncio.sleep(0.1)


def of(entries: list[dict], kind: str) -> list[dict]:
    return [e["event"] for e in entries if e["type"] == kind]


async def awaited(client: httpx.AsyncClient, game_id: str) -> tuple[int, ...]:
    return tuple((await client.get(f"/games/{game_id}/view")).json()["flow"]["awaiting"])


async def test_a_seat_that_does_nothing_times_out_and_the_takeover_bot_plays_that_decision(client):
    game_id, tokens = await started_game(client, "yspahan", 2, "clocked",
                                         options={"clock": {"per_decision": 1.0, "on_timeout": "bot"}})
    [seat] = await awaited(client, game_id)
    view = (await client.get(f"/games/{game_id}/seats/{seat}/view", headers=bearer(tokens[seat]))).json()
    clock = view["clock"]
    assert clock["options"]["per_decision"] == 1.0 and clock["options"]["on_timeout"] == "bot"
    assert clock["seats"][seat]["deadline"] == pytest.approx(clock["at"] + 1.0, abs=1e-6)
    entries = await until(client, game_id, lambda es: of(es, "table.BotMoved"))
    [timed_out] = of(entries, "table.SeatTimedOut")[:1]
    assert timed_out["seat"] == seat and timed_out["deadline"] == clock["seats"][seat]["deadline"]
    moved = next(i for i, e in enumerate(entries) if e["type"] == "table.BotMoved")
    assert entries[moved]["event"] == {"type": "table.BotMoved", "seat": seat, "strategy": "greedy"}
    assert entries[moved]["seat"] is None and entries[moved]["command_id"].startswith("clock:")
    assert entries[moved + 1]["type"].startswith("yspahan.")  # the bot's move, for that seat
    timeout_at = next(e for e in entries if e["type"] == "table.SeatTimedOut")["recorded_at"]
    assert timeout_at >= timed_out["deadline"]  # the engine's clock decides: never before the deadline


async def test_a_seat_that_does_nothing_forfeits_and_a_two_seat_game_ends_with_the_other_the_winner(client):
    game_id, _ = await started_game(client, "yspahan", 2, "forfeit",
                                    options={"clock": {"per_decision": 0.3, "on_timeout": "forfeit"}})
    [seat] = await awaited(client, game_id)
    entries = await until(client, game_id, lambda es: of(es, "table.GameEnded"))
    assert of(entries, "table.SeatOut") == [{"type": "table.SeatOut", "seat": seat, "reason": "forfeited"}]
    assert len(of(entries, "table.SeatTimedOut")) == 1
    [ended] = of(entries, "table.GameEnded")
    assert ended["winners"] == [1 - seat] and ended["details"]["ended_by"] == "forfeit"
    assert ended["details"]["out"] == {str(seat): "forfeited"}
    view = (await client.get(f"/games/{game_id}/view")).json()
    assert view["status"] == "over"


async def test_a_resignation_ends_a_two_seat_game_and_a_bot_plays_for_the_resigned_seat_of_a_bigger_one(
        client, souk_url):
    game_id, tokens = await started_game(client, "yspahan", 2, "resign")
    r = await client.post(f"/games/{game_id}/seats/1/resign", json={"command_id": "r1"}, headers=bearer(tokens[1]))
    assert r.status_code == 200 and r.json()["status"] == "accepted", r.text
    again = await client.post(f"/games/{game_id}/seats/1/resign", json={"command_id": "r1"}, headers=bearer(tokens[1]))
    assert again.json() == r.json()  # a resend: its first answer
    entries = await history(client, game_id)
    assert of(entries, "table.SeatOut") == [{"type": "table.SeatOut", "seat": 1, "reason": "resigned"}]
    [ended] = of(entries, "table.GameEnded")
    assert ended["winners"] == [0] and ended["details"]["ended_by"] == "resignation"
    no_token = await client.post(f"/games/{game_id}/seats/0/resign", json={"command_id": "r2"})
    assert no_token.status_code == 401

    # three seats, through the SDK: the game goes on, a bot plays the resigned seat's decisions
    async with SoukClient(souk_url) as souk:
        created = await souk.create("yspahan", "resign 3", 3)
        seats = [await souk.join(created.game_id, f"p{s}") for s in range(3)]
        [turn] = await awaited(client, created.game_id)
        reply = await seats[turn].resign()
        assert reply.status == "accepted"
        entries = await until(client, created.game_id, lambda es: of(es, "table.BotMoved"))
        assert of(entries, "table.SeatOut") == [{"type": "table.SeatOut", "seat": turn, "reason": "resigned"}]
        assert of(entries, "table.BotMoved")[0]["seat"] == turn and not of(entries, "table.GameEnded")
        with pytest.raises(SoukError) as refused:
            await seats[turn].resign()  # out already
        assert refused.value.status == 422


async def test_a_move_makes_its_deadline_moot(client, events_redis):
    game_id, tokens = await started_game(client, "yspahan", 2, "moot",
                                         options={"clock": {"per_decision": 2.0, "on_timeout": "forfeit"}})
    [seat] = await awaited(client, game_id)
    first = (await client.get(f"/games/{game_id}/seats/{seat}/view", headers=bearer(tokens[seat]))).json()
    deadline = first["clock"]["seats"][seat]["deadline"]
    assert events_redis.zscore(keys.deadlines(0), game_id) == pytest.approx(deadline, abs=1e-6)
    legal = first["legal"]
    r = await client.post(f"/games/{game_id}/seats/{seat}/commands", headers=bearer(tokens[seat]),
                          json={"command_id": "m1", "command": legal[0]})
    assert r.status_code == 200, r.text
    assert events_redis.zscore(keys.deadlines(0), game_id) > deadline  # the next seat's, or the same seat's next
    await asyncio.sleep(max(0.0, deadline - time.time()) + 0.5)  # past the old deadline, with the clock polling
    entries = await history(client, game_id)
    assert all(e["deadline"] != deadline for e in of(entries, "table.SeatTimedOut"))


async def test_clients_may_not_send_the_platforms_commands(client):
    game_id, tokens = await started_game(client, "yspahan", 2, "platform",
                                         options={"clock": {"per_decision": 60}})
    [seat] = await awaited(client, game_id)
    for command in ({"type": "table.Timeout", "seat": seat, "deadline": 0},
                    {"type": "table.Tick", "key": "k", "due": 0},
                    {"type": "table.PlayFor", "seat": seat, "strategy": "random", "command": {}}):
        r = await client.post(f"/games/{game_id}/seats/{seat}/commands", headers=bearer(tokens[seat]),
                              json={"command_id": command["type"], "command": command})
        assert r.status_code == 403 and r.json()["code"] == "platform_command", r.text
    r = await client.post(f"/games/{game_id}/seats/{seat}/commands", headers=bearer(tokens[seat]),
                          json={"command_id": "resign", "command": {"type": "table.Resign"}})
    assert r.status_code == 400 and r.json()["code"] == "bad_command" and "/resign" in r.json()["message"]
    assert not of(await history(client, game_id), "table.SeatTimedOut")


async def test_a_clock_that_is_not_valid_is_refused_at_creation(client):
    r = await client.post("/games", json={"game": "yspahan", "title": "bad", "seats": 2,
                                          "options": {"clock": {"per_decision": -1}}})
    assert r.status_code == 422 and r.json()["code"] == "bad_clock", r.text


async def test_the_catalog_describes_the_tables_options_beside_each_games(client):
    catalog = (await client.get("/catalog")).json()
    assert catalog
    for info in catalog:
        assert info["table"] == {
            "clock": {"defaults": {"per_decision": 0.0, "reserve": 0.0, "increment": 0.0, "on_timeout": "bot"},
                      "policies": ["bot", "absent", "forfeit"]},
            "undo": {"default": "own_turn", "policies": ["none", "own_turn", "with_consent"]}}
        assert info["options"]["undo"] == "own_turn"


async def test_giving_a_seat_back_after_the_start_resigns_it(client):
    game_id, tokens = await started_game(client, "yspahan", 2, "leave")
    r = await client.delete(f"/games/{game_id}/seats/0", headers=bearer(tokens[0]))
    assert r.status_code == 200, r.text
    entries = await history(client, game_id)
    assert of(entries, "table.SeatOut") == [{"type": "table.SeatOut", "seat": 0, "reason": "resigned"}]
    assert of(entries, "table.GameEnded")[0]["winners"] == [1]


async def test_a_rematch_keeps_the_tables_clock_and_undo_policy(client):
    clock = {"per_decision": 0.3, "reserve": 0.0, "increment": 0.0, "on_timeout": "forfeit"}
    game_id, tokens = await started_game(client, "yspahan", 2, "rematch me",
                                         options={"clock": clock, "undo": "with_consent"})
    await until(client, game_id, lambda es: of(es, "table.GameEnded"))
    seats = []
    for seat in (0, 1):
        r = await client.post(f"/games/{game_id}/seats/{seat}/rematch", headers=bearer(tokens[seat]))
        assert r.status_code == 201, r.text
        seats.append(r.json())
    view = (await client.get(f"/games/{seats[0]['game_id']}/view")).json()
    assert view["clock"]["options"] == clock and view["undo"]["policy"] == "with_consent"


async def test_the_record_of_a_game_its_clocks_and_bots_played_verifies(client):
    """Timeouts and bots' moves are commands like any other: the record re-runs each at its recorded instant."""
    game_id, tokens = await started_game(client, "yspahan", 2, "on the record",
                                         options={"clock": {"per_decision": 0.2, "on_timeout": "bot"}})
    await until(client, game_id, lambda es: len(of(es, "table.BotMoved")) >= 4)
    r = await client.post(f"/games/{game_id}/seats/0/resign", json={"command_id": "bye"}, headers=bearer(tokens[0]))
    assert r.status_code == 200, r.text
    record = await client.get(f"/games/{game_id}/record")
    assert record.status_code == 200, record.text
    kinds = {e["type"] for e in record.json()["events"]}
    assert {"table.SeatTimedOut", "table.BotMoved", "table.ClocksSet", "table.SeatOut", "table.GameEnded"} <= kinds
    verdict = (await client.post("/verify", content=record.content)).json()
    assert verdict["ok"], verdict
