"""Limits a gateway puts on its clients (issue #8 item 15): request rates per client and per seat token, and the
number of open games a client may have created.

Rates use GCRA (the generic cell rate algorithm, as redis-cell and many API gateways do) in one Lua call on the
read store, so every gateway of a deployment shares one budget per client and per token (``keys.client_rate``,
``keys.token_rate``: each in a slot of its own, the client's open games beside its rate). Over it: 429
``rate_limited`` with ``Retry-After``. A client is its connection's address, or, from a proxy named in
``SOUK_TRUSTED_PROXIES``, the address that proxy forwarded (``protocols.uvicorn_config``)."""

from __future__ import annotations

import asyncio
import hashlib
import math
from dataclasses import dataclass

import msgspec
import redis.asyncio as aioredis
from litestar import Request
from litestar.connection import ASGIConnection

from services.gateway.errors import ApiError
from services.store import keys
from services.store.resp import Resp

_GCRA = """
-- KEYS[1]: the budget's state. ARGV: emission interval (ms a request costs), tolerance (ms of burst).
-- Returns {allowed, retry after ms}.
local key, interval, tolerance = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tat = tonumber(redis.call('GET', key)) or now
if tat < now then tat = now end
local new_tat = tat + interval
if new_tat - now > tolerance then return {0, new_tat - tolerance - now} end
redis.call('SET', key, new_tat, 'PX', math.ceil(new_tat - now) + 1)
return {1, 0}
"""


@dataclass(frozen=True)
class Rate:
    """``per_s`` requests a second, sustained, with bursts of up to ``burst``; 0 per second: no limit."""

    per_s: float
    burst: int

    @property
    def on(self) -> bool:
        return self.per_s > 0


_GCRA_SHA = hashlib.sha1(_GCRA.encode()).hexdigest()


class Limits:
    """``redis``: the read store; ``hot``: a lean connection to it (``Stores.hot_views``), which every request's
    rate check goes through (two budgets, one round trip)."""

    def __init__(self, redis: aioredis.Redis, per_client: Rate, per_token: Rate, open_games: int,
                 hot: Resp | None = None) -> None:
        self.redis = redis
        self.hot = hot if hot is not None else Resp.like(redis)
        self.per_client = per_client
        self.per_token = per_token
        self.open_games = open_games

    async def _take(self, key: str, rate: Rate, what: str) -> ApiError | None:
        interval = 1000.0 / rate.per_s
        try:
            allowed, retry_ms = await self.hot.evalsha(_GCRA_SHA, _GCRA, (key,), interval,
                                                       interval * max(rate.burst - 1, 0))
        except aioredis.ConnectionError:  # the connection was lost under it (Redis restarted): once more
            allowed, retry_ms = await self.hot.evalsha(_GCRA_SHA, _GCRA, (key,), interval,
                                                       interval * max(rate.burst - 1, 0))
        if allowed:
            return None
        retry = max(1, math.ceil(int(retry_ms) / 1000))
        return ApiError(429, "rate_limited", f"too many requests from this {what}; retry in {retry} s",
                        headers={"Retry-After": str(retry)})

    async def check_request(self, request: ASGIConnection) -> None:
        """Every HTTP request and WebSocket handshake takes from its client's budget, and one with a seat token
        from the token's."""
        takes = []
        if self.per_client.on:
            takes.append(self._take(keys.client_rate(client_of(request)), self.per_client, "client"))
        if self.per_token.on:
            token = _token(request)
            if token:
                digest = hashlib.sha256(token.encode()).hexdigest()[:32]
                takes.append(self._take(keys.token_rate(digest), self.per_token, "seat token"))
        for refused in await asyncio.gather(*takes):
            if refused is not None:
                raise refused

    async def reserve_open_game(self, request: Request, game_id: str) -> bool:
        """Takes one of the client's ``open_games`` places for ``game_id``, or refuses with 429
        ``too_many_open_games``: the count and the place in one Lua call, so creates sent at once cannot all pass
        one count. True: the place is new (give it back with ``release_open_game`` if the create is refused);
        False: none taken (no quota, or a resent create of a game the client already has).

        The script touches the client's games only (its slot): which of them are still open is read before, from
        their partitions' lobbies, and handed to it. A game that closed meanwhile counts once more as open (the
        next create drops it); one added meanwhile (a create sent at once) is not in that list and counts as
        waiting, as a game not yet in the lobby does."""
        if self.open_games <= 0:
            return False
        client = keys.client_games(client_of(request))
        ids = [g.decode() for g in await self.redis.zrange(client, 0, -1)]
        states: list[str] = []
        if ids and game_id not in ids:
            by_partition: dict[int, list[str]] = {}
            for g in ids:
                by_partition.setdefault(keys.partition(g), []).append(g)
            pipe = self.redis.pipeline(transaction=False)
            for p, games in by_partition.items():
                pipe.hmget(keys.lobby(p), games)
            for games, raws in zip(by_partition.values(), await pipe.execute()):
                for g, raw in zip(games, raws):
                    if raw is not None:  # in the lobby: open, or done (not in it yet: the script's wait decides)
                        states += (g, "open" if _status.decode(raw).status == "open" else "done")
        allowed, count = await self.redis.eval(_RESERVE, 1, client, game_id, self.open_games, PENDING_S,
                                               CLIENT_GAMES_TTL_S, *states)
        if not allowed:
            raise ApiError(429, "too_many_open_games",
                           f"this client has {count} games waiting for players; at most "
                           f"{self.open_games}: fill or wait for one first", headers={"Retry-After": "60"})
        return bool(count)  # allowed: 1 place taken now, 0 the game had it

    async def release_open_game(self, request: Request, game_id: str) -> None:
        await self.redis.zrem(keys.client_games(client_of(request)), game_id)


class _Status(msgspec.Struct):
    status: str


_status = msgspec.json.Decoder(_Status)
PENDING_S = 600  # a place taken for a game that never appeared in the lobby is given back after this long
CLIENT_GAMES_TTL_S = 2 * 86_400

_RESERVE = """
-- KEYS[1]: the client's games (sorted set: game id -> when its place was taken).
-- ARGV: game id, places, seconds a place waits for its game to appear in the lobby, the set's TTL, then pairs
-- (game id, 'open' or 'done') of the client's games found in the lobby (read just before, from their partitions).
-- Returns {1, 1}: taken; {1, 0}: the game has its place already; {0, n}: refused, n games wait for players.
local games = KEYS[1]
local game, places, pending, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if redis.call('ZSCORE', games, game) then return {1, 0} end
local listed = {}
for i = 5, #ARGV, 2 do listed[ARGV[i]] = ARGV[i + 1] end
local t = redis.call('TIME')
local now = tonumber(t[1])
local ids = redis.call('ZRANGE', games, 0, -1, 'WITHSCORES')
local waiting = 0
for i = 1, #ids, 2 do
  local state = listed[ids[i]]
  local open
  if state then open = state == 'open' else open = now - tonumber(ids[i + 1]) < pending end
  if open then waiting = waiting + 1 else redis.call('ZREM', games, ids[i]) end
end
if waiting >= places then return {0, waiting} end
redis.call('ZADD', games, now, game)
redis.call('EXPIRE', games, ttl)
return {1, 1}
"""


def client_of(request: ASGIConnection) -> str:
    return request.client.host if request.client else "unknown"


def _token(request: ASGIConnection) -> str | None:
    """The seat token: ``Authorization: Bearer``; on a WebSocket handshake, ``?token=`` (a browser's WebSocket
    cannot set headers)."""
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.query_params.get("token") if request.scope["type"] == "websocket" else None
