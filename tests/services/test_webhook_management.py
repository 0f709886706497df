"""Webhooks managed after creation (issue #19; README, Webhooks): a seat's webhook read, changed and removed with its
token (``GET/PUT/DELETE /games/{id}/seats/{seat}/webhook``), the game's with the creator token
(``/games/{id}/webhook``); a change rotates the secret; a rematch carries each seat's webhook over (the same
player) and the game's (the same creator, whose token manages the rematch's), a fork carries none. The gateway and every worker run in this process against the test Redis, the tally
game played over HTTP."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis
from litestar.testing import AsyncTestClient

from services.cli.workers import EVERY_ROLE, Workers
from services.gateway import create_app
from services.store import keys
from tests.services.test_webhooks import Play, eventually, settings, verified
from tests.services.webhook_receiver import Running

pytestmark = pytest.mark.anyio


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def play_to_the_end(play: Play) -> dict:
    view = await play.view()
    while view["status"] == "playing":
        reply = await play.add(view["flow"]["awaiting"][0], 3)
        view = await play.settled(reply["version"])
    return view


async def test_a_seats_webhook_is_set_later_changed_with_a_new_secret_and_removed(redis_url):
    with Running() as receiver:
        async with AsyncTestClient(create_app(settings(redis_url), Workers(settings(redis_url), roles=EVERY_ROLE))
                                   ) as client:
            play = Play(client)
            await play.create(None)
            await play.join(0, None)
            await play.join(1, None)
            view = await play.settled(4)
            seat = view["flow"]["awaiting"][0]
            route = f"/games/{play.game_id}/seats/{seat}/webhook"
            r = await client.get(route, headers=auth(play.tokens[seat]))
            assert (r.status_code, r.json()["code"]) == (404, "no_webhook")
            # the other seat's token, none, a URL Souk does not post to: refused, nothing registered
            assert (await client.get(route, headers=auth(play.tokens[1 - seat]))).status_code == 401
            assert (await client.put(route, json={"url": receiver.url("/a")})).status_code == 401
            r = await client.put(route, json={"url": "ftp://example.com/x"}, headers=auth(play.tokens[seat]))
            assert (r.status_code, r.json()["code"]) == (422, "bad_webhook")
            # set it late, while it is already this seat's turn: only what happens from now on is posted
            r = await client.put(route, json={"url": receiver.url("/a")}, headers=auth(play.tokens[seat]))
            assert r.status_code == 200, r.text
            first = r.json()
            assert first["url"] == receiver.url("/a") and first["seat"] == seat and first["secret"]
            assert (await client.get(route, headers=auth(play.tokens[seat]))).json() == {**first, "secret": None}
            view = await play.settled((await play.add(seat, 1))["version"])  # the other seat's turn
            view = await play.settled((await play.add(1 - seat, 1))["version"])  # this seat's again
            turn_a = view["version"]

            def told_once_at_a() -> None:
                notices = verified(receiver, "/a", first["secret"])
                assert [(n["kind"], n["version"]) for n in notices] == [("turn", turn_a)]

            await eventually(told_once_at_a)  # not the turn it already had when the URL was set
            # a change: another URL and a new secret; the old URL hears nothing more
            r = await client.put(route, json={"url": receiver.url("/b")}, headers=auth(play.tokens[seat]))
            second = r.json()
            assert r.status_code == 200 and second["secret"] and second["secret"] != first["secret"]
            view = await play.settled((await play.add(seat, 1))["version"])
            view = await play.settled((await play.add(1 - seat, 1))["version"])
            turn_b = view["version"]

            def told_at_b_with_the_new_secret() -> None:
                notices = verified(receiver, "/b", second["secret"])
                assert [(n["kind"], n["version"]) for n in notices] == [("turn", turn_b)]

            await eventually(told_at_b_with_the_new_secret)
            assert len(receiver.accepted("/a")) == 1
            r = await client.delete(route, headers=auth(play.tokens[seat]))
            assert r.status_code == 200 and r.json() == {**second, "secret": None}
            r = await client.delete(route, headers=auth(play.tokens[seat]))
            assert (r.status_code, r.json()["code"]) == (404, "no_webhook")
            await play_to_the_end(play)
            await asyncio.sleep(0.5)
            assert len(receiver.all()) == 2  # removed: neither the later turns nor the end were posted


async def test_a_put_resent_with_its_request_id_answers_the_same_secret(redis_url):
    with Running() as receiver:
        async with AsyncTestClient(create_app(settings(redis_url), Workers(settings(redis_url)))) as client:
            play = Play(client)
            await play.create(None)
            await play.join(0, None)
            route = f"/games/{play.game_id}/seats/0/webhook"
            body = {"url": receiver.url("/a"), "request_id": "a-webhook-change-000001"}
            first = (await client.put(route, json=body, headers=auth(play.tokens[0]))).json()
            again = (await client.put(route, json=body, headers=auth(play.tokens[0]))).json()
            assert first["secret"] and again == first
            other = (await client.put(route, json={**body, "request_id": "a-webhook-change-000002"},
                                      headers=auth(play.tokens[0]))).json()
            assert other["secret"] != first["secret"]


async def test_the_games_webhook_is_managed_with_the_creator_token(redis_url):
    with Running() as receiver:
        async with AsyncTestClient(create_app(settings(redis_url), Workers(settings(redis_url), roles=EVERY_ROLE))
                                   ) as client:
            r = await client.post("/games", json={"game": "tally", "title": "t", "seats": 2,
                                                  "webhook": receiver.url("/old")})
            created = r.json()
            game_id, creator = created["game_id"], created["creator_token"]
            route = f"/games/{game_id}/webhook"
            r = await client.get(route)
            assert (r.status_code, r.json()["code"]) == (401, "missing_token")
            r = await client.get(route, headers=auth("not-the-creator"))
            assert (r.status_code, r.json()["code"]) == (401, "bad_token")
            r = await client.put(route, json={"url": receiver.url("/x")}, headers=auth("not-the-creator"))
            assert r.status_code == 401
            r = await client.get("/games/nosuchgame/webhook", headers=auth(creator))
            assert (r.status_code, r.json()["code"]) == (404, "game_not_found")
            assert (await client.get(route, headers=auth(creator))).json() == {
                "game_id": game_id, "seat": None, "url": receiver.url("/old"), "secret": None}
            r = await client.put(route, json={"url": receiver.url("/new")}, headers=auth(creator))
            changed = r.json()
            assert r.status_code == 200 and changed["secret"] not in (None, created["webhook_secret"])
            play = Play(client)
            play.game_id = game_id
            await play.join(0, None)
            await play.join(1, None)
            view = await play_to_the_end(play)

            def ended_at_new() -> None:
                notices = verified(receiver, "/new", changed["secret"])
                assert ("game_ended", view["version"]) in [(n["kind"], n["version"]) for n in notices]

            await eventually(ended_at_new)
            assert not receiver.accepted("/old")
            r = await client.delete(route, headers=auth(creator))
            assert r.status_code == 200 and r.json()["url"] == receiver.url("/new")
            assert (await client.get(route, headers=auth(creator))).status_code == 404


async def test_a_rematch_carries_each_seats_and_the_games_webhook_over_and_a_fork_carries_none(redis_url):
    with Running() as receiver:
        async with AsyncTestClient(create_app(settings(redis_url), Workers(settings(redis_url), roles=EVERY_ROLE))
                                   ) as client:
            play = Play(client)
            await play.create(receiver.url("/game"))
            await play.join(0, receiver.url("/seat0"))
            await play.join(1, None)
            view = await play_to_the_end(play)
            r = await client.post(f"/games/{play.game_id}/seats/0/rematch", headers=auth(play.tokens[0]))
            assert r.status_code == 201, r.text
            rematch, token0 = r.json()["game_id"], r.json()["token"]
            r = await client.post(f"/games/{play.game_id}/seats/1/rematch", headers=auth(play.tokens[1]))
            token1 = r.json()["token"]
            r = await client.get(f"/games/{rematch}/seats/0/webhook", headers=auth(token0))
            assert r.status_code == 200 and r.json()["url"] == receiver.url("/seat0")
            assert (await client.get(f"/games/{rematch}/seats/1/webhook", headers=auth(token1))).status_code == 404
            events = aioredis.Redis.from_url(redis_url)
            try:
                source = await events.hgetall(keys.webhooks(play.game_id))
                copied = await events.hgetall(keys.webhooks(rematch))
            finally:
                await events.aclose()
            assert len(copied) == 2 and copied[b"game"] == source[b"game"]  # the seat's, and the game's
            assert [v for f, v in copied.items() if f != b"game"] == [v for f, v in source.items() if f != b"game"]
            # the rematch's game webhook is the creator's to manage, with the game's creator token (the rematch
            # answered no creator token of its own); the seats' tokens are not the creator's
            route = f"/games/{rematch}/webhook"
            r = await client.get(route, headers=auth(play.creator_token))
            assert r.status_code == 200 and r.json()["url"] == receiver.url("/game"), r.text
            assert (await client.get(route, headers=auth(token0))).status_code == 401
            # a player's later rematch call does not register the game's webhook again over the creator's change
            r = await client.put(route, json={"url": receiver.url("/game2")}, headers=auth(play.creator_token))
            assert r.status_code == 200 and r.json()["secret"] != play.secrets["game"]
            changed = r.json()["secret"]
            r = await client.post(f"/games/{play.game_id}/seats/1/rematch", headers=auth(play.tokens[1]))
            assert r.status_code == 201 and r.json()["game_id"] == rematch
            assert (await client.get(route, headers=auth(play.creator_token))).json()["url"] == receiver.url("/game2")
            # its notices are signed with the seat's secret, as before
            again = Play(client)
            again.game_id, again.tokens = rematch, {0: token0, 1: token1}
            await play_to_the_end(again)

            def rematch_told() -> None:
                mine = [n for n in verified(receiver, "/seat0", play.secrets["seat:0"]) if n["game_id"] == rematch]
                assert ("game_ended", 0) in [(n["kind"], n["seat"]) for n in mine]
                # the rematch's end, at the URL its creator set, signed with the secret of that change
                assert "game_ended" in [n["kind"] for n in verified(receiver, "/game2", changed)
                                        if n["game_id"] == rematch]

            await eventually(rematch_told)
            assert {n["game_id"] for n in verified(receiver, "/game", play.secrets["game"])} <= {play.game_id, rematch}
            r = await client.post(f"/games/{play.game_id}/fork", json={"version": view["version"] - 1,
                                                                       "seats": ["a", "b"]})
            assert r.status_code == 201, r.text
            fork = r.json()
            for seat in fork["seats"]:
                r = await client.get(f"/games/{fork['game_id']}/seats/{seat['seat']}/webhook",
                                     headers=auth(seat["token"]))
                assert (r.status_code, r.json()["code"]) == (404, "no_webhook")
            r = await client.get(f"/games/{fork['game_id']}/webhook", headers=auth(fork["creator_token"]))
            assert (r.status_code, r.json()["code"]) == (404, "no_webhook")
