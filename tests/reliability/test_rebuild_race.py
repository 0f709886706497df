"""A bug found by `souk chaos` (read_store_flush under load), fixed: the read store rebuilt by a running projector
while its own batch handler writes lost games' lobby entries, seat tokens and the beginning of their history.

``Workers.watch_read_store`` runs ``Projector.initialise`` -> ``rebuild`` beside the batch handler. ``rebuild``
used to drop the read models key by key (a SCAN per pattern), then project every game from the position it read:
a batch the handler wrote between the two was partly deleted, its position survived, and the rebuild skipped the
game for good. `souk chaos --minutes 3` hit it in 2 games of 194 (seed 1094794702). Now each game's read models
are replaced whole in one atomic call, unless a projector already wrote it further.

The test forces the interleaving: the handler's batch is projected in the middle of the rebuild.
"""

from __future__ import annotations

import asyncio
import hashlib

import msgspec
import pytest
import redis.asyncio as aioredis

from contracts.envelope import CommandEnvelope
from contracts.table import CreateGame, JoinSeat
from domain import table as tbl
from domain.kernel import get_game
from services.store import keys
from services.store.codec import encoder
from services.engine.service import Engine
from services.projector.service import Projector
from services.embedded.redis import RedisServer
from services.store.events import RedisEventStore

pytestmark = pytest.mark.anyio


def _command(game_id: str, body, seat: int | None = None, token: str | None = None, cid: str = "") -> CommandEnvelope:
    return CommandEnvelope(cid, game_id, msgspec.Raw(encoder.encode(body)), seat=seat, token_hash=token)


def _token_hash(seat: int) -> str:
    return hashlib.sha256(f"token-{seat}".encode()).hexdigest()


async def _read_models(redis: aioredis.Redis, game_id: str) -> dict:
    return {"position": await redis.get(keys.position(game_id)),
            "views": await redis.hgetall(keys.views(game_id)),
            "history": await redis.lrange(keys.history(game_id), 0, -1),
            "seat tokens": await redis.hgetall(keys.seat_tokens(game_id)),
            "lobby": await redis.hget(keys.game_lobby(game_id), game_id)}


async def test_a_batch_projected_during_a_rebuild_keeps_its_games_lobby_entry_seat_tokens_and_history(tmp_path):
    server = RedisServer(tmp_path / "redis", appendonly=False).start()
    events = aioredis.Redis.from_url(server.url)
    views = aioredis.Redis.from_url(server.url.rsplit("/", 1)[0] + "/1")
    scratch = aioredis.Redis.from_url(server.url.rsplit("/", 1)[0] + "/2")
    store = RedisEventStore(events)
    projector = Projector(views, store)
    reference = Projector(scratch, store)
    try:
        engine = Engine(events, store)
        await engine.handle([_command("X", CreateGame("samarkand", "race", 3), cid="create")]
                            + [_command("X", JoinSeat(f"p{s}", _token_hash(s), s), seat=s, cid=f"join-{s}")
                               for s in range(3)])
        projected = [fields for _, fields in await events.xrange(keys.events(0))]
        await projector.handle(projected)
        table = (await engine.load("X")).table
        seat = tbl.flow(table).awaiting[0]
        play = get_game("samarkand").legal_commands(table.state, seat)[0]
        [reply] = await engine.handle([_command("X", play, seat=seat, token=_token_hash(seat), cid="play")])
        assert reply.status == "accepted"
        batch = [fields for _, fields in await events.xrange(keys.events(0))][len(projected):]

        await views.flushdb()  # the read store is lost; the running projector rebuilds it
        handler: list[asyncio.Task] = []

        async def handle_now() -> None:
            if not handler:
                handler.append(asyncio.create_task(projector.handle(batch)))
                await asyncio.wait(handler, timeout=2.0)

        # The handler's batch comes in the middle of the rebuild: while it reads the game, or (as the rebuild of
        # 2026-11-23 did, the bug) while it drops the read models, just before the history's keys.
        read, scan = store.read, views.scan_iter

        async def read_then_handle(game_id, after=0):
            envelopes = await read(game_id, after)
            await handle_now()
            return envelopes

        def scan_iter(match=None, **kw):
            async def entries():
                if match == "souk:history:*":
                    await handle_now()
                async for key in scan(match=match, **kw):
                    yield key
            return entries()

        store.read, views.scan_iter = read_then_handle, scan_iter
        await asyncio.wait_for(projector.rebuild(), 20)
        await asyncio.wait_for(handler[0], 20)
        store.read, views.scan_iter = read, scan
        # the game goes on: one more command, projected by the handler
        table = (await engine.load("X")).table
        seat = tbl.flow(table).awaiting[0]
        play = get_game("samarkand").legal_commands(table.state, seat)[0]
        [reply] = await engine.handle([_command("X", play, seat=seat, token=_token_hash(seat), cid="play-2")])
        assert reply.status == "accepted"
        await projector.handle([fields for _, fields in await events.xrange(keys.events(0))][len(projected) + len(batch):])

        await reference.rebuild()
        live, rebuilt = await _read_models(views, "X"), await _read_models(scratch, "X")
        assert live["position"] == rebuilt["position"] == str(reply.version).encode()
        assert live["views"] == rebuilt["views"]
        assert live["lobby"] == rebuilt["lobby"] is not None, "the game's lobby entry was lost"
        assert live["seat tokens"] == rebuilt["seat tokens"], "the game's seat tokens were lost"
        assert len(live["history"]) == len(rebuilt["history"]) == reply.version, "the history lost its beginning"
        assert live["history"] == rebuilt["history"]
    finally:
        for p in (projector, reference):
            await p.aclose()
        await store.aclose()
        for client in (events, views, scratch):
            await client.aclose()
        server.stop()
