"""The gateway's stores and what it reads from them.

``events`` is the event store's Redis (commands in, replies back, the audit's events, a game's first events);
``views`` is the read store's (views, history, lobby, seat token hashes, update notifications, presence). They may
be the same Redis. The gateway writes nothing itself but the commands it queues, its rate limits' counters and its
seats' presence (``services.gateway.presence``).
"""

from __future__ import annotations

import time

import msgspec
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from contracts.api import MAX_INT
from contracts.readmodels import HistoryPage, LobbyEntry, TableView
from contracts.table import GameStarted, GameCreated, SeatJoined, SeatLeft
from domain import table as tbl
from services.gateway.errors import ApiError
from services.gateway.inputs import in_range
from services.gateway.listeners import Updates
from services.gateway.presence import Presence, bot_seats, decoded, seats_in, with_bots, with_presence
from services.history import travel
from services.history.archive import archived
from services.projector.history import read_history
from services.runtime.config import Settings
from services.store import clients, keys
from services.store.codec import event_envelope_decoder, table_event_decoder
from services.store.events import RedisEventStore
from services.store.lru import Lru
from services.store.resp import Resp

_lobby_decoder = msgspec.json.Decoder(LobbyEntry)


def pooled(url: str) -> aioredis.Redis:
    """A bounded pool where a burst waits for a connection: redis-py's default pool raises "Too many
    connections" past 100 in use, which 100 clients waiting on one game used to reach (issue #8 item 12).
    A command that finds its pooled connection closed (Redis restarted) is sent once more on a new one.
    On a Redis Cluster (``services.store.clients``): redis-py's cluster client, whose pool per node does not wait
    (it raises past its size), so it is sized for bursts; it retries by itself, learning the slots again."""
    if clients.is_cluster(url):
        return clients.async_client(url, max_connections=1000)
    return aioredis.Redis.from_pool(aioredis.BlockingConnectionPool.from_url(
        url, max_connections=64, timeout=5, retry=Retry(NoBackoff(), 1)))


class Stores:
    """The two Redis pools and the event store on the first."""

    def __init__(self, settings: Settings) -> None:
        self.events = pooled(settings.redis_url)
        self.views = pooled(settings.views_url)
        self.event_store = RedisEventStore(self.events)
        # The read store's per-command reads (a seat's token hash, a view): one auto-pipelined connection, a few
        # µs of Python a read where redis-py's pool spends ~100 (issue #9 item 12)
        self.hot_views = Resp.like(self.views)

    async def aclose(self) -> None:
        await self.hot_views.aclose()
        await self.event_store.aclose()
        await self.views.aclose()
        await self.events.aclose()


class Reads:
    """The read paths the routes share: the lobby, views, history, and a game's first events."""

    def __init__(self, stores: Stores, updates: Updates, presence: Presence | None = None) -> None:
        self.stores = stores
        self.events = stores.events
        self.views = stores.views
        self.hot = stores.hot_views
        self.updates = updates
        self.presence = presence
        self._names: Lru[str, str] = Lru(10_000)  # game id -> its game's name, which never changes

    async def lobby_entry(self, game_id: str, present: bool = False) -> LobbyEntry:
        """The game's lobby entry; ``present``: with its seats' presence (what GET /games/{id} serves)."""
        raw = await self.views.hget(keys.game_lobby(game_id), game_id)
        if raw is None:
            if await self.events.exists(keys.game_stream(game_id)):  # the read store lags or was lost
                raise ApiError(503, "not_projected", "this game's read models are not built yet; retry shortly")
            raise await self._not_found(game_id)
        entry = _lobby_decoder.decode(raw)
        if present and self.presence is not None:
            present = await self.presence.of(game_id, len(entry.seats))
            entry = msgspec.structs.replace(entry, presence=with_bots(present, bot_seats(entry.seats)))
        return entry

    async def with_presence(self, entries: list[LobbyEntry]) -> list[LobbyEntry]:
        """Lobby entries with their seats' presence (one round trip for all of them)."""
        if self.presence is None or not entries:
            return entries
        found = await self.presence.of_many([e.game_id for e in entries], [len(e.seats) for e in entries])
        return [msgspec.structs.replace(e, presence=with_bots(decoded(p), bot_seats(e.seats)))
                for e, p in zip(entries, found)]

    async def seats_of(self, game_id: str) -> tuple[str, dict[int, str]]:
        """The game's name and its seats' token hashes, from its first events in the event store: what a lost or
        lagging read store cannot take away (the game's name, and each SeatJoined, come before GameStarted)."""
        game, hashes, _ = await self._first_events(game_id)
        return game, hashes

    async def started_seats(self, game_id: str) -> dict[int, str] | None:
        """The seats' token hashes of a game that has started, from its first events in the event store; None when
        its stream shows no ``GameStarted`` (not started yet, or its first events are gone). A started game's token
        hashes never change again: a seat is taken (``SeatJoined``) or given back (``SeatLeft``) only before the
        start, and nothing after it (resigning, a bot playing for an absent seat, a rematch: a new game) names
        another token (``domain.table``)."""
        _, hashes, started = await self._first_events(game_id)
        return hashes if started else None

    async def _first_events(self, game_id: str) -> tuple[str, dict[int, str], bool]:
        game, hashes, after = "", {}, "-"
        while True:
            entries = await self.events.xrange(keys.game_stream(game_id), min=after, count=16)
            for _, fields in entries:
                env = event_envelope_decoder.decode(fields[b"e"])
                if not env.type.startswith("table."):
                    return game, hashes, False  # the game's own events: every seat is taken
                event = table_event_decoder.decode(env.payload)
                if isinstance(event, GameCreated):
                    game = event.game
                elif isinstance(event, SeatJoined):
                    hashes[event.seat] = event.token_hash
                elif isinstance(event, SeatLeft):
                    hashes.pop(event.seat, None)
                elif isinstance(event, GameStarted):
                    return game, hashes, True
            if len(entries) < 16:
                if not game:
                    raise await self._not_found(game_id)
                return game, hashes, False
            after = "(" + entries[-1][0].decode()

    async def game_name(self, game_id: str) -> str:
        name = self._names.get(game_id)
        if name is None:
            raw = await self.hot.call_again_if_lost("HGET", keys.game_lobby(game_id), game_id)
            name = _lobby_decoder.decode(raw).game if raw is not None else (await self.seats_of(game_id))[0]
            self._names.put(game_id, name)
        return name

    async def seat_token_hash(self, game_id: str, seat: int) -> bytes | None:
        """The token hash the read store keeps for the seat (None: not projected yet, or the store was lost)."""
        return await self.hot.call_again_if_lost("HGET", keys.seat_tokens(game_id), str(seat))

    async def wait_projected(self, game_id: str, version: int, timeout: float = 3.0) -> None:
        """Until the read models of ``game_id`` reach ``version`` (bounded: a slow projector is not an error).
        Every caller waiting on one game shares one read of its position and the update notices."""
        await self.updates.wait_for(game_id, version, timeout)

    async def view_bytes(self, game_id: str, seat: int | None) -> bytes:
        """The audience's view as stored, with the seats' presence now (read in the same round trip)."""
        presence = self.presence
        known = presence.cached(game_id, time.time()) if presence is not None else None
        if presence is None or known is not None:
            raw = await self.hot.call_again_if_lost("HGET", keys.views(game_id), keys.audience(seat))
            if raw is not None and known is not None:
                return with_presence(raw, known)
        else:
            generation = presence.generation
            raw, flat = await self.hot.calls(("HGET", keys.views(game_id), keys.audience(seat)),
                                             ("HGETALL", keys.presence(game_id)))
            if raw is not None:
                return with_presence(raw, presence.present(game_id, flat, seats_in(raw), generation)[0])
        if raw is None:
            await self.lobby_entry(game_id)  # 404 when the game does not exist
            raise ApiError(503, "view_not_ready", "the game's views are not projected yet; retry shortly",
                           headers={"Retry-After": "1"})
        return raw

    async def history(self, game_id: str, seat: int | None, after: int, limit: int) -> HistoryPage:
        in_range(after, "after", 0, MAX_INT, "bad_page")
        in_range(limit, "limit", 1, 1000, "bad_page")
        await self.lobby_entry(game_id)
        # the read model while it is kept; a finished game's, once it expired, derived from its game stream
        return await read_history(self.events, self.views, game_id, seat, after, limit, self.stores.event_store)

    async def table_at(self, game_id: str, version: int) -> travel.At:
        """The game's table at ``version`` (``?at=``): the nearest snapshot plus the events after it
        (``services.history.travel``). 404 / 410 for a game that does not exist (or was archived), 400
        ``bad_version`` for a version it does not have (1 to its current version)."""
        in_range(version, "at", 1, MAX_INT, "bad_version")
        try:
            at = await travel.table_at(self.events, self.views, game_id, version)
        except travel.BadVersion as exc:
            raise ApiError(400, "bad_version", str(exc)) from None
        if at.length == 0:
            raise await self._not_found(game_id)
        return at

    async def view_at(self, game_id: str, seat: int | None, version: int) -> tuple[TableView, bool]:
        """What ``seat`` (None: a spectator) saw at ``version``, and whether the game is over now (then anyone may
        read any seat's views: the caller checks the seat's token otherwise)."""
        at = await self.table_at(game_id, version)
        views = tbl.views(at.table, game_id)
        if seat not in views:
            in_range(seat, "seat")
            raise ApiError(404, "no_such_seat", f"this game's seats are numbered 0 to {at.table.seats - 1}")
        return views[seat], at.over

    async def _not_found(self, game_id: str) -> ApiError:
        """404 ``game_not_found``, or 410 ``archived`` (naming its record) for a game archived by `souk archive`."""
        gone = await archived(self.events, game_id)
        if gone is not None:
            return ApiError(410, gone.code, gone.message)
        return ApiError(404, "game_not_found", f"there is no game {game_id!r}")
