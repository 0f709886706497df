"""Webhooks (issue #19 section 5): a game's or a seat's URL gets signed POSTs when it becomes a seat's turn, an undo is
asked of it, the game ends (and a clock runs low: tests/services/test_webhook_notices.py); delivered at least once
from the outbox, with retries, to a local receiver that refuses, times out and recovers; never to a private address
unless the operator allows it. The gateway and every worker run in this process against the test Redis, the tally
game played over HTTP."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from services.cli.workers import EVERY_ROLE, Workers
from services.gateway import create_app
from services.runtime.config import Settings
from services.store import keys
from services.webhooks import outbox, signing
from services.webhooks.outbox import Delivery
from tests.services.webhook_receiver import Receiver, Running

pytestmark = pytest.mark.anyio

# An hour of a receiver's failure, compressed: retries from 50 ms, doubling to at most 200 ms (an hour's backoff
# capped at 15 minutes, scaled), each attempt timed out after 300 ms.
FAST = dict(webhooks_allow_private=True, webhooks_allow_http=True, webhooks_retry_s=0.05, webhooks_retry_max_s=0.2,
            webhooks_timeout_s=0.3, webhooks_poll_s=0.02, webhooks_give_up_s=60.0, rate_per_client=0,
            rate_per_token=0, open_games_per_client=0, connections_per_client=0)


def settings(redis_url: str, **more: Any) -> Settings:
    return Settings(redis_url=redis_url, views_redis_url=redis_url.rsplit("/", 1)[0] + "/1",
                    **{**FAST, **more})


class Play:
    """A tally game over HTTP: each seat's token and webhook secret, and what each command changed."""

    def __init__(self, client: AsyncTestClient) -> None:
        self.client = client
        self.game_id = ""
        self.tokens: dict[int, str] = {}
        self.secrets: dict[str, str] = {}  # "game" / "seat:N" -> secret
        self.creator_token = ""
        self.commands = 0

    async def create(self, webhook: str | None, **body: Any) -> None:
        r = await self.client.post("/games", json={"game": "tally", "title": "hooked", "seats": 2,
                                                   **({"webhook": webhook} if webhook else {}), **body})

        assert r.status_code == 201, r.text
        self.game_id = r.json()["game_id"]
        self.creator_token = r.json()["creator_token"]
        if webhook:
            self.secrets["game"] = r.json()["webhook_secret"]
        else:
            assert r.json()["webhook_secret"] is None

    async def join(self, seat: int, webhook: str | None) -> None:
        r = await self.client.post(f"/games/{self.game_id}/seats",
                                   json={"name": f"p{seat}", "seat": seat, **({"webhook": webhook} if webhook else {})})
        assert r.status_code == 201, r.text
        self.tokens[seat] = r.json()["token"]
        if webhook:
            self.secrets[f"seat:{seat}"] = r.json()["webhook_secret"]

    async def view(self) -> dict[str, Any]:
        return (await self.client.get(f"/games/{self.game_id}/view")).json()

    async def post(self, seat: int, route: str, body: dict[str, Any]) -> dict[str, Any]:
        self.commands += 1
        r = await self.client.post(f"/games/{self.game_id}/seats/{seat}/{route}",
                                   headers={"Authorization": f"Bearer {self.tokens[seat]}"},
                                   json={"command_id": f"c{self.commands}", **body})
        assert r.status_code == 200, r.text
        return r.json()

    async def add(self, seat: int, amount: int) -> dict[str, Any]:
        return await self.post(seat, "commands", {"command": {"type": "tally.Add", "amount": amount}})

    async def settled(self, version: int) -> dict[str, Any]:
        for _ in range(500):
            view = await self.view()
            if view["version"] >= version:
                return view
            await asyncio.sleep(0.01)
        raise AssertionError(f"the views never reached version {version}")


async def eventually(check, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            check()
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.05)


def verified(receiver: Receiver, path: str, secret: str) -> list[dict[str, Any]]:
    """The notices the receiver accepted at ``path``, each signature checked with ``secret`` (README's way)."""
    out = []
    for r in receiver.accepted(path):
        headers = {k.lower(): v for k, v in r.headers.items()}
        assert signing.verify(secret, headers["souk-timestamp"], r.body, headers["souk-signature"], time.time())
        notice = r.notice
        assert headers["idempotency-key"] == notice["key"]
        out.append(notice)
    return out


async def test_a_receiver_that_fails_for_an_hour_then_recovers_gets_every_notice_once_by_its_key(redis_url):
    """The receiver refuses (500), then hangs past the timeout, then answers: every notice of the game (every turn,
    the end) reaches the game's URL and each seat's URL exactly once accepted, signed, in spite of the failed
    attempts; and the commands were answered at once all along."""
    with Running(mode="refuse", hang_s=0.6) as receiver:
        async with AsyncTestClient(create_app(settings(redis_url), Workers(settings(redis_url), roles=EVERY_ROLE))
                                   ) as client:
            play = Play(client)
            await play.create(receiver.url("/game"))
            await play.join(0, receiver.url("/seat0"))
            await play.join(1, receiver.url("/seat1"))
            view = await play.settled(5)
            expected_turns = [(view["version"], view["flow"]["awaiting"][0])]

            def refused() -> None:
                assert [r for r in receiver.all() if r.status == 500]

            await eventually(refused)
            while view["status"] == "playing":
                seat = view["flow"]["awaiting"][0]
                answered = time.monotonic()
                reply = await play.add(seat, 3)
                assert time.monotonic() - answered < 1.0  # a receiver down never slows a command
                view = await play.settled(reply["version"])
                if view["status"] == "playing":
                    expected_turns.append((reply["version"], view["flow"]["awaiting"][0]))
                if play.commands == 2:
                    receiver.mode = "hang"
            end_version = view["version"]
            await asyncio.sleep(1.0)  # refused, then timed out, for a while ("an hour")
            assert receiver.all() and not receiver.accepted()
            receiver.mode = "ok"

            def every_notice_arrived() -> None:
                game = verified(receiver, "/game", play.secrets["game"])
                turns = sorted((n["version"], n["seat"]) for n in game if n["kind"] == "turn")
                assert turns == sorted(expected_turns)
                assert [(n["kind"], n["seat"]) for n in game if n["kind"] == "game_ended"] == [("game_ended", None)]
                for seat in (0, 1):
                    mine = verified(receiver, f"/seat{seat}", play.secrets[f"seat:{seat}"])
                    assert sorted((n["version"], n["seat"]) for n in mine if n["kind"] == "turn") == sorted(
                        t for t in expected_turns if t[1] == seat)
                    assert [(n["kind"], n["seat"], n["version"]) for n in mine if n["kind"] == "game_ended"] == [
                        ("game_ended", seat, end_version)]

            await eventually(every_notice_arrived)
            await asyncio.sleep(0.3)  # nothing more comes
            once = Counter((r.path, json.loads(r.body)["key"]) for r in receiver.accepted())
            assert set(once.values()) == {1}, once
            assert {r.status for r in receiver.all()} == {500, 0, 204}  # refused, timed out, accepted
    assert not await _redis_outbox(redis_url)


async def _redis_outbox(redis_url: str) -> list[bytes]:
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(redis_url)
    try:
        return await client.zrange(keys.webhook_outbox(0), 0, -1)
    finally:
        await client.aclose()


async def test_the_seats_asked_to_consent_to_an_undo_are_told_and_the_requester_is_not(redis_url):
    """Samarkand, 3 seats, undo with consent: seats 0 and 1 choose a card, seat 0 asks to take its choice back;
    each asked seat's URL (and the game's, for each) gets ``undo_requested``, seat 0's does not."""
    with Running() as receiver:
        async with AsyncTestClient(create_app(settings(redis_url), Workers(settings(redis_url), roles=EVERY_ROLE))
                                   ) as client:
            play = Play(client)
            await play.create(receiver.url("/game"), game="samarkand", seats=3, options={"undo": "with_consent"},
                              seed="0d" * 32, unfair=True)
            for seat in range(3):
                await play.join(seat, receiver.url(f"/seat{seat}"))
            for seat in (0, 1):
                legal = (await client.get(f"/games/{play.game_id}/seats/{seat}/legal",
                                          headers={"Authorization": f"Bearer {play.tokens[seat]}"})).json()
                await play.settled((await play.post(seat, "commands", {"command": legal["legal"][0]}))["version"])
            r = await client.get(f"/games/{play.game_id}/seats/0/view",
                                 headers={"Authorization": f"Bearer {play.tokens[0]}"})
            to_version = r.json()["undo"]["to_versions"][0]
            asked = await play.post(0, "undo", {"to_version": to_version})
            request = (await play.settled(asked["version"]))["undo"]["request"]
            assert request["seat"] == 0 and request["asked"]

            def told() -> None:
                for seat in request["asked"]:
                    notices = verified(receiver, f"/seat{seat}", play.secrets[f"seat:{seat}"])
                    undo = [n for n in notices if n["kind"] == "undo_requested"]
                    assert [(n["seat"], n["by_seat"], n["to_version"], n["version"]) for n in undo] == [
                        (seat, 0, to_version, asked["version"])]
                game = verified(receiver, "/game", play.secrets["game"])
                assert sorted(n["seat"] for n in game if n["kind"] == "undo_requested") == request["asked"]

            await eventually(told)
            await asyncio.sleep(0.2)
            mine = verified(receiver, "/seat0", play.secrets["seat:0"])
            assert not [n for n in mine if n["kind"] == "undo_requested"]


async def test_a_notice_undelivered_past_the_limit_goes_to_the_dead_letters(redis_url):
    """A receiver that never answers 2xx: its notices are tried again until ``webhooks_give_up_s`` after they were
    due, then kept in the dead letters (with the last error) for operators, and out of the outbox."""
    tight = settings(redis_url, webhooks_give_up_s=0.5)
    with Running(mode="refuse") as receiver:
        async with AsyncTestClient(create_app(tight, Workers(tight, roles=EVERY_ROLE))) as client:
            play = Play(client)
            await play.create(None)
            await play.join(0, receiver.url("/seat0"))
            await play.join(1, receiver.url("/seat1"))
            await play.settled(5)  # one seat's turn
            import redis.asyncio as aioredis

            events = aioredis.Redis.from_url(redis_url)
            try:
                async def dead() -> list[tuple[Delivery, str]]:
                    for _ in range(200):
                        letters = await outbox.dead_letters(events)
                        if letters:
                            return letters
                        await asyncio.sleep(0.05)
                    raise AssertionError("nothing in the dead letters")

                [(delivery, reason)] = await dead()
                assert reason == "HTTP 500" and delivery.attempts >= 3 and delivery.field.startswith("seat:")
                assert delivery.notice.kind == "turn" and delivery.notice.version == 5
                assert not await events.zrange(keys.webhook_outbox(0), 0, -1)
                assert len(receiver.all()) == delivery.attempts
                health = (await client.get("/health")).json()
                assert health["webhooks"]["dead"] == 1 and health["webhooks"]["overdue"] == 0
                assert [w for w in health["warnings"] if "webhook" in w] == [
                    "1 webhook notices were given up on (their receivers failed for SOUK_WEBHOOKS_GIVE_UP_S): souk "
                    "webhooks --dead lists them"]
            finally:
                await events.aclose()


async def test_a_url_souk_does_not_post_to_is_refused_and_registers_nothing(redis_url):
    """By default (no operator setting): https only, public addresses only; a refused URL creates no game and takes
    no seat."""
    strict = Settings(redis_url=redis_url, views_redis_url=redis_url.rsplit("/", 1)[0] + "/1", rate_per_client=0,
                      rate_per_token=0, open_games_per_client=0)
    async with AsyncTestClient(create_app(strict, Workers(strict))) as client:
        for url, code in (("http://hooks.example.com/x", "bad_webhook"), ("https://127.0.0.1/x", "webhook_not_public"),
                          ("https://10.0.0.8/x", "webhook_not_public"), ("not a url", "bad_webhook")):
            r = await client.post("/games", json={"game": "tally", "title": "t", "seats": 2, "webhook": url})
            assert (r.status_code, r.json()["code"]) == (422, code), r.text
        r = await client.post("/games", json={"game": "tally", "title": "t", "seats": 2})
        game_id = r.json()["game_id"]
        r = await client.post(f"/games/{game_id}/seats", json={"name": "p0", "webhook": "https://[::1]/x"})
        assert (r.status_code, r.json()["code"]) == (422, "webhook_not_public")
        import redis.asyncio as aioredis

        events = aioredis.Redis.from_url(redis_url)
        try:
            assert await events.keys(keys.webhook_outbox(0).replace("outbox", "*")) == []
            assert await events.xlen(keys.game_stream(game_id)) == 1  # created; nobody joined
        finally:
            await events.aclose()


async def test_the_url_stays_out_of_the_event_log_and_a_resent_request_gets_the_same_secret(redis_url):
    with Running() as receiver:
        async with AsyncTestClient(create_app(settings(redis_url), Workers(settings(redis_url)))) as client:
            body = {"game": "tally", "title": "t", "seats": 2, "webhook": receiver.url("/game"),
                    "request_id": "a-request-of-the-creator-0001"}
            first = (await client.post("/games", json=body)).json()
            again = (await client.post("/games", json=body)).json()
            assert first["webhook_secret"] and again == first
            game_id = first["game_id"]
            join = {"name": "p0", "webhook": receiver.url("/seat"), "request_id": "a-request-of-seat-0-0001"}
            joined = (await client.post(f"/games/{game_id}/seats", json=join)).json()
            assert (await client.post(f"/games/{game_id}/seats", json=join)).json() == joined
            assert joined["webhook_secret"] not in (None, first["webhook_secret"])
            r = await client.post(f"/games/{game_id}/seats", json={"name": "p9", "seat": 0,
                                                                    "webhook": receiver.url("/late")})
            assert r.json()["code"] == "seat_taken"  # refused: its registration goes with it
            history = await client.get(f"/games/{game_id}/history")
            import redis.asyncio as aioredis

            events = aioredis.Redis.from_url(redis_url)
            try:
                stream = await events.xrange(keys.game_stream(game_id))
                registered = await events.hgetall(keys.webhooks(game_id))
            finally:
                await events.aclose()
            assert str(receiver.port) not in repr(stream) and str(receiver.port) not in history.text
            assert joined["webhook_secret"] not in repr(stream)
            assert len(registered) == 2 and b"game" in registered  # the creator's and seat 0's
            assert keys.webhooks(game_id) in keys.game_keys(game_id)  # archived with the game


async def test_a_clock_running_low_is_told_before_its_deadline_and_not_once_the_seat_moved(redis_url):
    """Two tally games, 2 s a decision (the clock worker and the engine's clock running): in the first, the seat
    awaited at the start does nothing and hears ``clock_low`` 0.4 s (20%) before its deadline; in the second, it
    moves at once, and the clock_low made for that deadline is cancelled: never sent."""
    with Running() as receiver:
        async with AsyncTestClient(create_app(settings(redis_url), Workers(settings(redis_url), roles=EVERY_ROLE))
                                   ) as client:
            idle, quick = Play(client), Play(client)
            for play in (idle, quick):
                await play.create(receiver.url(f"/{id(play)}"), options={"clock": {"per_decision": 2.0}})
                await play.join(0, None)
                await play.join(1, None)
            views = [await play.settled(6) for play in (idle, quick)]  # started, secrets drawn, clocks set
            moved = views[1]["flow"]["awaiting"][0]
            first_deadline = views[1]["clock"]["seats"][moved]["deadline"]
            await quick.add(moved, 1)
            seat = views[0]["flow"]["awaiting"][0]
            deadline = views[0]["clock"]["seats"][seat]["deadline"]

            def low() -> None:
                notices = verified(receiver, f"/{id(idle)}", idle.secrets["game"])
                assert [(n["seat"], n["deadline"]) for n in notices if n["kind"] == "clock_low"][:1] == [
                    (seat, deadline)]

            await eventually(low, timeout=10)
            arrived = next(r for r in receiver.accepted(f"/{id(idle)}") if r.notice["kind"] == "clock_low")
            assert int(arrived.headers["Souk-Timestamp"]) <= deadline  # before the deadline
            await asyncio.sleep(max(0.0, first_deadline - time.time()) + 0.3)
            notices = verified(receiver, f"/{id(quick)}", quick.secrets["game"])
            assert (moved, first_deadline) not in [(n["seat"], n["deadline"]) for n in notices
                                                   if n["kind"] == "clock_low"]


async def test_the_python_sdk_registers_webhooks_and_hands_back_their_secrets(redis_url):
    from services.client import SoukClient

    with Running() as receiver:
        async with AsyncTestClient(create_app(settings(redis_url), Workers(settings(redis_url), roles=EVERY_ROLE))
                                   ) as client:
            souk = SoukClient(http=client, retries=1)
            created = await souk.create("tally", "sdk", 2, webhook=receiver.url("/game"))
            seats = [await souk.join(created.game_id, f"p{s}", s, webhook=receiver.url(f"/seat{s}")) for s in (0, 1)]
            assert created.webhook_secret and all(seat.webhook_secret for seat in seats)
            turn = (await souk.view(created.game_id, min_version=5)).flow.awaiting[0]

            def told() -> None:
                assert [n["seat"] for n in verified(receiver, f"/seat{turn}", seats[turn].webhook_secret)] == [turn]
                assert [n["seat"] for n in verified(receiver, "/game", created.webhook_secret)] == [turn]

            await eventually(told)


async def test_a_notice_due_now_is_posted_at_once_not_at_the_next_poll(redis_url):
    """The worker that puts a turn notice in the outbox wakes its own delivery loop: with a 5 s poll, the POST
    still follows the command by far less than a second (it waited for the poll before: 0.5 s by default)."""
    slow_poll = settings(redis_url, webhooks_poll_s=5.0)
    with Running() as receiver:
        async with AsyncTestClient(create_app(slow_poll, Workers(slow_poll, roles=EVERY_ROLE))) as client:
            play = Play(client)
            await play.create(receiver.url("/game"))
            await play.join(0, None)
            await play.join(1, None)
            view = await play.settled(5)
            await asyncio.sleep(0.5)
            seat = view["flow"]["awaiting"][0]
            answered = time.monotonic()
            reply = await play.add(seat, 1)

            def told() -> None:
                assert [n for n in verified(receiver, "/game", play.secrets["game"]) if n["version"] == reply["version"]]

            await eventually(told, timeout=10)
            assert time.monotonic() - answered < 1.0
