"""1001 Karawane end to end over HTTP against a real `souk serve` and Redis (issue #12).

Three seats play a whole game through the gateway, every seat and a spectator following their WebSocket. Each
command is the game's own bot's choice (``domain.kernel.bot_command``: random legal play almost never ends this
game), made on the game as the test folds it from the event store, and it must be one of the legal commands the
seat's view lists. At the end: the record verifies (``POST /verify``), the audit and the spectator's history
verify, and everything each audience received (views at many versions, every pushed frame, history pages) is
exactly what the rules let it see: the leak scan's own check (``tests.fuzz.test_leak_scan.scan``), which here
covers the desert's hidden hexes, the looks only their seat may read, and the hands.
"""

from __future__ import annotations

import asyncio
import json
import random

import httpx
import msgspec
import pytest
import redis.asyncio as aioredis

from domain import table as tbl
from domain.kernel import bot_command
from services.history.audit import verify_audit
from services.store.codec import encoder, fold_stream
from services.store.events import RedisEventStore
from tests.e2e.support import bearer, started_game
from tests.fuzz.test_leak_scan import Received, follow, read_history, scan

pytestmark = pytest.mark.anyio


async def test_a_game_of_karawane_is_played_to_the_end_over_http_and_nobody_learns_a_hex_it_did_not_see(
        souk_url, redis_url):
    rng = random.Random(2026)
    events = aioredis.Redis.from_url(redis_url)
    store = RedisEventStore(events)
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_id, tokens = await started_game(client, "karawane", 3, "caravans", seed="ca" * 32, unfair=True)
        received = Received()
        auth = {s: bearer(t) for s, t in enumerate(tokens)}
        sockets = [asyncio.create_task(follow(f"{souk_url}/games/{game_id}/seats/{s}/ws?token={t}", client, s,
                                              received)) for s, t in enumerate(tokens)]
        sockets.append(asyncio.create_task(follow(f"{souk_url}/games/{game_id}/ws", client, None, received)))
        commands = 0
        try:
            for commands in range(1, 20_001):
                table = fold_stream(await store.read(game_id))
                if table.status != tbl.PLAYING:
                    break
                seat = rng.choice(tbl.flow(table).awaiting)
                r = await client.get(f"/games/{game_id}/seats/{seat}/view", headers=auth[seat],
                                     params={"min_version": table.version})
                view = r.json()
                assert r.status_code == 200 and view["version"] == table.version, r.text
                received.views.append((seat, "view", view))
                command = json.loads(encoder.encode(bot_command(tbl.game_of(table), table.state, seat, rng)))
                assert command in view["legal"], (command, view["legal"][:5])
                r = await client.post(f"/games/{game_id}/seats/{seat}/commands", headers=auth[seat],
                                      json={"command_id": f"k{commands}", "command": command,
                                            "expected_version": table.version})
                assert r.status_code == 200, r.text
                if rng.random() < 0.05:  # the spectator's view now and then
                    received.views.append((None, "view", (await client.get(f"/games/{game_id}/view")).json()))
            else:
                raise AssertionError("the game did not end in 20,000 commands")
            await asyncio.wait_for(asyncio.gather(*sockets), 60)
        finally:
            for task in sockets:
                task.cancel()
            await store.aclose()
            await events.aclose()

        final = (await client.get(f"/games/{game_id}/view")).json()
        assert final["status"] == "over" and final["result"]["winners"], final["result"]
        histories = {seat: await read_history(client, game_id, seat, auth.get(seat, {}), rng, received)
                     for seat in (*range(3), None)}
        audit = (await client.get(f"/games/{game_id}/audit")).json()
        assert verify_audit(audit) == []
        assert len(histories[None]) == len(audit["events"]) == final["version"]
        record = await client.get(f"/games/{game_id}/record")
        verdict = (await client.post("/verify", content=record.content)).json()
        assert verdict["ok"] is True and verdict["commands"] == commands - 1 + 4, verdict  # + create and 3 joins

    leaks, digests = scan(game_id, received, audit)
    assert not leaks, "\n".join(leaks[:20])
    assert digests >= 4 * len(audit["events"]) and received.frames > 100
    assert msgspec.json.decode(record.content)["header"]["game"] == "karawane"
