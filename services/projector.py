"""Projectors: events in, read models out (each seat's view and the spectator's, each game's history as each
seat may see it, the lobby, the seats' token hashes for the gateway).

``Projector.handle`` takes a batch of ``souk:events`` entries. For each game it folds the new events (those
past the game's recorded position) into its cached table, then writes every read model *and* the new position
in one MULTI/EXEC, so a redelivered event changes nothing. After the transaction it announces the new version
on ``souk:updates:{game}`` (the gateway pushes views to WebSockets from there).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import redis.asyncio as aioredis
from redis.exceptions import WatchError
import structlog

from contracts.envelope import EventEnvelope
from contracts.readmodels import HistoryEntry, HistoryRecord, LobbyEntry
from contracts.table import TABLE_EVENTS, GameCreated, SeatJoined
from domain import table as tbl
from services import keys
from services.codec import encoder, event_decoder, event_envelope_decoder
from services.store import EventStore

log = structlog.get_logger("souk.projector")
MAX_ATTEMPTS = 10
REBUILD_LOCK = "souk:projection:rebuilding"


@dataclass(slots=True)
class Projected:
    table: tbl.Table
    created_at: float


class Projector:
    """``redis`` is the read store (views, history, lobby, positions); ``store`` is the event store."""

    def __init__(self, redis: aioredis.Redis, store: EventStore, cache_size: int = 20_000) -> None:
        self.redis = redis
        self.store = store
        self.cache: OrderedDict[str, Projected] = OrderedDict()
        self.cache_size = cache_size

    async def handle(self, entries: Sequence[dict[bytes, bytes]]) -> None:
        by_game: dict[str, list[EventEnvelope]] = {}
        for fields in entries:
            env = event_envelope_decoder.decode(fields[b"e"])
            by_game.setdefault(env.game_id, []).append(env)
        await self.project(by_game)

    async def project(self, by_game: dict[str, list[EventEnvelope]]) -> None:
        """Writes the read models of these events and the games' new positions in one transaction, guarded by
        WATCH on the positions: if another projector (or a rebuild) moved one meanwhile, nothing is written
        and the batch is projected again from the positions as they now are."""
        game_ids = list(by_game)
        position_keys = [keys.position(g) for g in game_ids]
        for _ in range(MAX_ATTEMPTS):
            async with self.redis.pipeline(transaction=True) as pipe:
                await pipe.watch(*position_keys)
                positions = await pipe.mget(position_keys)
                pipe.multi()
                committed = False
                try:
                    updated = False
                    for game_id, raw_pos in zip(game_ids, positions):
                        updated |= await self._project_game(pipe, game_id, int(raw_pos or 0), by_game[game_id])
                    if updated:
                        await pipe.execute()
                    committed = True
                    return
                except WatchError:
                    log.info("projection_conflict", games=len(game_ids))
                finally:
                    if not committed:  # the cached tables ran ahead of what was written
                        for game_id in game_ids:
                            self.cache.pop(game_id, None)
        raise RuntimeError(f"projection conflicted {MAX_ATTEMPTS} times; the batch stays pending")

    async def _project_game(self, pipe, game_id: str, position: int, envelopes: list[EventEnvelope]) -> bool:
        envelopes = [e for e in envelopes if e.seq > position]
        if not envelopes:
            return False  # redelivered: already projected
        if envelopes[0].seq != position + 1:  # a gap (trimmed events stream, a batch lost): read the store
            envelopes = [e for e in await self.store.read(game_id, after=position) if e.seq <= envelopes[-1].seq]
        projected = await self._load(game_id, position)
        self._write(pipe, game_id, projected, envelopes)
        return True

    async def _load(self, game_id: str, position: int) -> Projected:
        """The table as projected up to ``position`` (from the cache, else folded from the store)."""
        cached = self.cache.get(game_id)
        if cached is not None and cached.table.version == position:
            self.cache.move_to_end(game_id)
            return cached
        table, created_at = tbl.EMPTY, 0.0
        if position:
            envelopes = (await self.store.read(game_id))[:position]
            decode = event_decoder(_game_name(envelopes[0])).decode
            table = tbl.fold([decode(e.payload) for e in envelopes])
            created_at = envelopes[0].recorded_at
        return Projected(table, created_at)

    def _write(self, pipe, game_id: str, projected: Projected, envelopes: list[EventEnvelope]) -> None:
        table = projected.table
        history: list[bytes] = []
        lobby_changed = False
        for env in envelopes:
            decode = event_decoder(table.game if table.exists else _game_name(env)).decode
            if not table.exists:
                projected.created_at = env.recorded_at
            event = decode(env.payload)
            table = tbl.evolve(table, event)
            if isinstance(event, TABLE_EVENTS):
                lobby_changed = True
                if isinstance(event, SeatJoined):
                    pipe.hset(keys.seat_tokens(game_id), str(event.seat), event.token_hash)
            # Most events hide nothing: they are stored once. One that hides something from someone is stored
            # as one variant per audience, so that each reader is served only what it may see.
            variants = {keys.audience(seat): tbl.redact(table, event, seat) for seat in tbl.audiences(table)}
            first = next(iter(variants.values()))
            if all(v is first for v in variants.values()):
                record = HistoryRecord(shared=self._entry(env, first))
            else:
                record = HistoryRecord(by_audience={a: self._entry(env, v) for a, v in variants.items()})
            history.append(encoder.encode(record))
        views = tbl.views(table, game_id)
        pipe.hset(keys.views(game_id), mapping={keys.audience(s): encoder.encode(v) for s, v in views.items()})
        pipe.rpush(keys.history(game_id), *history)
        if lobby_changed:
            lobby = LobbyEntry(game_id, table.game, table.title, tbl.seats_of(table), table.status,
                               projected.created_at)
            pipe.hset(keys.LOBBY, game_id, encoder.encode(lobby))
            pipe.zadd(keys.LOBBY_ORDER, {game_id: projected.created_at}, nx=True)
        pipe.set(keys.position(game_id), table.version)
        pipe.publish(keys.view_updates(game_id), str(table.version))  # sent when the transaction commits
        projected.table = table
        self.cache[game_id] = projected
        self.cache.move_to_end(game_id)
        while len(self.cache) > self.cache_size:
            self.cache.popitem(last=False)

    @staticmethod
    def _entry(env: EventEnvelope, event: Any) -> HistoryEntry:
        return HistoryEntry(env.seq, env.type, env.seat, env.command_id, env.recorded_at, event, env.hash,
                            env.prev_hash)

    async def rebuild(self) -> int:
        """Drop every read model and project each game again from its first event. Returns the games rebuilt.

        Run it with the projector workers stopped (``souk projections rebuild``)."""
        await self._drop_read_models()
        self.cache.clear()
        count = 0
        async for game_id in self.store.game_ids():
            envelopes = await self.store.read(game_id)
            for start in range(0, len(envelopes), 500):
                await self.project({game_id: envelopes[start:start + 500]})
            count += 1
        await self.redis.set(keys.READ_STORE_MARK, "1")
        return count

    async def initialise(self) -> int | None:
        """A projector facing an empty read store (a fresh or restarted views Redis) rebuilds it first: its
        consumer group has acknowledged the old events, so they would not come again. Returns the games
        rebuilt, or None when the read store was already initialised."""
        if await self.redis.exists(keys.READ_STORE_MARK):
            return None
        if not await self.redis.set(REBUILD_LOCK, "1", nx=True, ex=3600):  # another projector is at it
            while not await self.redis.exists(keys.READ_STORE_MARK):
                await asyncio.sleep(0.2)
            return None
        try:
            return await self.rebuild()
        finally:
            await self.redis.delete(REBUILD_LOCK)

    async def _drop_read_models(self) -> None:
        for pattern in ("souk:position:*", "souk:views:*", "souk:history:*", "souk:seats:*"):
            async for key in self.redis.scan_iter(match=pattern, count=1000):
                await self.redis.delete(key)
        await self.redis.delete(keys.LOBBY, keys.LOBBY_ORDER, keys.READ_STORE_MARK)


_table_events = msgspec.json.Decoder(GameCreated)


def _game_name(env: EventEnvelope) -> str:
    return _table_events.decode(env.payload).game
