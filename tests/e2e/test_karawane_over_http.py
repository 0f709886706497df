"""1001 Karawane end to end over HTTP against a real `souk serve` and Redis (issue #12).

Three seats play a whole game through the gateway, every seat and a spectator following their WebSocket, as the
leak scan plays it (``tests.fuzz.test_leak_scan.play``): each command is the game's own bot's choice
(``domain.kernel.bot_command``: random legal play almost never ends this game), made on the game folded from the
event store, and it must be one of the legal commands the seat is offered. At the end: the record verifies
(``POST /verify``) with every command re-run, the audit and the spectator's history verify, and everything each
audience received (views at many versions, every pushed frame, history pages) is exactly what the rules let it
see (``scan``), which here covers the desert's hidden hexes, the looks only their seat may read, and the hands.
"""

from __future__ import annotations

import random

import httpx
import msgspec
import pytest
import redis.asyncio as aioredis

from services.store.events import RedisEventStore
from tests.fuzz.test_leak_scan import play, scan

pytestmark = pytest.mark.anyio


async def test_a_game_of_karawane_is_played_to_the_end_over_http_and_nobody_learns_a_hex_it_did_not_see(
        souk_url, redis_url):
    store = RedisEventStore(aioredis.Redis.from_url(redis_url))
    try:
        async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
            game_id, received, audit = await play(client, souk_url, "karawane", 3, {}, random.Random(2026), store)
            final = (await client.get(f"/games/{game_id}/view")).json()
            record = await client.get(f"/games/{game_id}/record")
            verdict = (await client.post("/verify", content=record.content)).json()
    finally:
        await store.aclose()
    assert final["status"] == "over" and final["result"]["winners"], final["result"]
    commands = msgspec.json.decode(record.content)["commands"]
    assert verdict["ok"] is True and verdict["commands"] == len(commands) > 4, verdict  # create, 3 joins, moves
    leaks, digests = scan(game_id, received, audit)
    assert not leaks, "\n".join(leaks[:20])
    assert digests >= 4 * len(audit["events"]) and received.frames > 100
    assert msgspec.json.decode(record.content)["header"]["game"] == "karawane"
