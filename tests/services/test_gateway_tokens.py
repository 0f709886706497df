"""The gateway keeps a started game's seat token hashes (``Auth.learn``, ``Reads.started_seats``): a seat's token
is then checked without reading the read store, and a token that no longer holds its seat (given back before the
start) never authorizes it again."""

from __future__ import annotations

import pytest
from litestar.testing import AsyncTestClient

from services.cli.workers import EVERY_ROLE, Workers
from services.gateway import create_app
from services.gateway.stores import Reads
from tests.services.test_webhooks import Play, settings

pytestmark = pytest.mark.anyio


async def test_a_started_games_tokens_are_checked_without_a_read_and_a_seat_given_back_is_never_authorized(
        redis_url, monkeypatch):
    reads: list[tuple[str, int]] = []
    original = Reads.seat_token_hash

    async def counted(self, game_id: str, seat: int):
        reads.append((game_id, seat))
        return await original(self, game_id, seat)

    monkeypatch.setattr(Reads, "seat_token_hash", counted)
    config = settings(redis_url)
    async with AsyncTestClient(create_app(config, Workers(config, roles=EVERY_ROLE))) as client:
        play = Play(client)
        await play.create(None)
        await play.join(0, None)
        given_back = play.tokens[0]
        left = await client.delete(f"/games/{play.game_id}/seats/0",
                                   headers={"Authorization": f"Bearer {given_back}"})
        assert left.status_code == 200, left.text  # accepted before the start: nothing may be kept yet
        await play.join(0, None)
        await play.join(1, None)
        assert play.tokens[0] != given_back
        view = await play.settled(6)
        seat = view["flow"]["awaiting"][0]
        await play.add(seat, 1)  # accepted: the game has started, its tokens are kept from now on

        async def status(seat: int, token: str) -> tuple[int, str]:
            r = await client.get(f"/games/{play.game_id}/seats/{seat}/view",
                                 headers={"Authorization": f"Bearer {token}"})
            return r.status_code, r.json().get("code", "") if r.status_code != 200 else ""

        reads.clear()
        assert await status(0, play.tokens[0]) == (200, "")
        assert await status(1, play.tokens[1]) == (200, "")
        assert await status(0, given_back) == (401, "bad_token")  # the seat's first holder gave it back
        assert await status(1, play.tokens[0]) == (401, "bad_token")
        assert await status(2, play.tokens[0]) == (401, "bad_token")  # no such seat
        moved = await play.add((await play.view())["flow"]["awaiting"][0], 1)
        assert moved["status"] == "accepted"
        assert reads == []  # every check above without a read of the seat's token hash
