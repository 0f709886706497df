"""The gateway: HTTP and WebSocket for frontends (Litestar, msgspec bodies, OpenAPI at /schema).

It writes nothing itself: commands go to ``souk:commands`` and the engine's reply comes back on this gateway's
reply channel; reads come from the projectors' read models. Seat tokens are checked against the token hashes
the projector keeps (``souk:seats:{game}``); the raw token never leaves the client and this process.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import secrets
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import redis.asyncio as aioredis
import structlog
from litestar import Litestar, MediaType, Request, Response, WebSocket, delete, get, post, websocket
from litestar.exceptions import HTTPException, NotFoundException, ValidationException, WebSocketDisconnect
from litestar.config.cors import CORSConfig
from litestar.openapi import OpenAPIConfig
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from contracts.api import (
    MAX_BODY_BYTES,
    MAX_INT,
    REQUEST_ID_LENGTH,
    Audit,
    Cancelled,
    CommandRequest,
    Created,
    CreateGameRequest,
    GameInfo,
    Joined,
    JoinRequest,
    LegalCommands,
    Left,
    Rematch,
)
from contracts.envelope import CommandEnvelope, Reply
from contracts.readmodels import HistoryPage, HistoryRecord, LobbyEntry, TableView
from contracts.table import (
    TABLE_COMMANDS,
    CancelGame,
    CreateGame,
    GameCreated,
    GameStarted,
    JoinSeat,
    LeaveSeat,
    SeatJoined,
    SeatLeft,
)
from domain.kernel import games
from services.store import keys
from services.runtime import metrics
from services.runtime import tracing
from services.store.codec import command_decoder, encoder, event_decoder, event_envelope_decoder, table_event_decoder
from services.runtime.config import Settings
from services.gateway import openapi
from services.gateway.errors import (
    ApiError,
    on_api_error,
    on_crash,
    on_http,
    on_validation,
    raise_if_rejected,
)
from services.gateway.inputs import check_headers, in_range, strict
from services.gateway.limits import Limits, Rate
from services.gateway.listeners import Replies, Updates
from services.projector.service import Partition
from services.store.events import RedisEventStore
from services.store.streams import idle_consumers, stream_backlog

log = structlog.get_logger("souk.gateway")
_lobby_decoder = msgspec.json.Decoder(LobbyEntry)
_view_decoder = msgspec.json.Decoder(TableView)
_history_decoder = msgspec.json.Decoder(HistoryRecord)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Gateway:
    """The gateway's state and the read/write paths its routes share.

    ``events`` is the event store's Redis (commands in, replies back, the audit's events); ``redis`` is the
    read store's (views, history, lobby, seat token hashes, update notifications)."""

    def __init__(self, events: aioredis.Redis, views: aioredis.Redis, settings: Settings) -> None:
        self.events = events
        self.redis = views
        self.settings = settings
        self.replies = Replies(events, settings.reply_timeout)
        self.updates = Updates(views)
        self.store = RedisEventStore(events)
        self._secret: bytes | None = None  # derives the tokens of joins that carry a request id

    async def lobby_entry(self, game_id: str) -> LobbyEntry:
        raw = await self.redis.hget(keys.LOBBY, game_id)
        if raw is None:
            if await self.events.exists(keys.game_stream(game_id)):  # the read store lags or was lost
                raise ApiError(503, "not_projected", "this game's read models are not built yet; retry shortly")
            raise ApiError(404, "game_not_found", f"there is no game {game_id!r}")
        return _lobby_decoder.decode(raw)

    async def seats_of(self, game_id: str) -> tuple[str, dict[int, str]]:
        """The game's name and its seats' token hashes, from its first events in the event store: what a lost or
        lagging read store cannot take away (the game's name, and each SeatJoined, come before GameStarted)."""
        game, hashes, after = "", {}, "-"
        while True:
            entries = await self.events.xrange(keys.game_stream(game_id), min=after, count=16)
            for _, fields in entries:
                env = event_envelope_decoder.decode(fields[b"e"])
                if not env.type.startswith("table."):
                    return game, hashes  # the game's own events: every seat is taken
                event = table_event_decoder.decode(env.payload)
                if isinstance(event, GameCreated):
                    game = event.game
                elif isinstance(event, SeatJoined):
                    hashes[event.seat] = event.token_hash
                elif isinstance(event, SeatLeft):
                    hashes.pop(event.seat, None)
                elif isinstance(event, GameStarted):
                    return game, hashes
            if len(entries) < 16:
                if not game:
                    raise ApiError(404, "game_not_found", f"there is no game {game_id!r}")
                return game, hashes
            after = "(" + entries[-1][0].decode()

    async def game_for_request(self, request_id: str) -> str:
        """The game id a create request gets: the same for every resend of one ``request_id`` (kept a week)."""
        key = keys.request(f"create:{_digest(request_id)}")
        await self.events.set(key, uuid.uuid4().hex[:12], nx=True, ex=REQUEST_TTL_S)
        return (await self.events.get(key)).decode()

    async def token_for_request(self, game_id: str, request_id: str) -> str:
        """The seat token a join request gets: derived from the request id and the platform's secret, so every
        resend answers the same token, and the store keeps only its hash, as for any other token."""
        return await self.derived(f"join:{game_id}:{request_id}")

    async def derived(self, what: str) -> str:
        """A secret derived from ``what`` and the platform's secret (the same for every gateway)."""
        if self._secret is None:
            await self.events.set(keys.TOKEN_SECRET, secrets.token_bytes(32), nx=True)
            self._secret = await self.events.get(keys.TOKEN_SECRET)
        mac = hmac.new(self._secret, what.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac[:24]).decode()

    async def game_name(self, game_id: str) -> str:
        raw = await self.redis.hget(keys.LOBBY, game_id)
        if raw is not None:
            return _lobby_decoder.decode(raw).game
        return (await self.seats_of(game_id))[0]

    async def authorize(self, game_id: str, seat: int, token: str | None) -> str:
        """Checks the seat's token; returns its hash (what commands carry)."""
        in_range(seat, "seat")
        if not token:
            raise ApiError(401, "missing_token", "send the seat token as 'Authorization: Bearer <token>'")
        raw = await self.redis.hget(keys.seat_tokens(game_id), str(seat))
        if raw is not None:
            expected = raw.decode()
        else:  # not projected yet, or the read store was lost: the events hold the token hashes
            expected = (await self.seats_of(game_id))[1].get(seat)
            if expected is None:
                raise ApiError(401, "bad_token", "the seat token is not valid for this seat")
        hashed = token_hash(token)
        if not secrets.compare_digest(expected, hashed):
            raise ApiError(401, "bad_token", "the seat token is not valid for this seat")
        return hashed

    async def wait_projected(self, game_id: str, version: int, timeout: float = 3.0) -> None:
        """Until the read models of ``game_id`` reach ``version`` (bounded: a slow projector is not an error).
        Every caller waiting on one game shares one read of its position and the update notices."""
        await self.updates.wait_for(game_id, version, timeout)

    async def view_bytes(self, game_id: str, seat: int | None) -> bytes:
        raw = await self.redis.hget(keys.views(game_id), keys.audience(seat))
        if raw is None:
            await self.lobby_entry(game_id)  # 404 when the game does not exist
            raise ApiError(503, "view_not_ready", "the game's views are not projected yet; retry shortly",
                           headers={"Retry-After": "1"})
        return raw

    async def submit(self, env: CommandEnvelope) -> Reply:
        """Queues the command, waits for the engine's answer and, if accepted, for the views to catch up. The
        command carries the request's ``traceparent`` (``services.runtime.tracing``): the engine and the projector log
        its ``trace_id`` too."""
        if not env.traceparent:
            env = msgspec.structs.replace(env, traceparent=tracing.current.get())
        with structlog.contextvars.bound_contextvars(game_id=env.game_id, seat=env.seat, command_id=env.command_id):
            reply = await self.replies.send(env)
            log.debug("command_answered", status=reply.status, code=reply.code, version=reply.version)
            if reply.status == "accepted":
                await self.wait_projected(env.game_id, reply.version)
        return reply

    async def history(self, game_id: str, seat: int | None, after: int, limit: int) -> HistoryPage:
        in_range(after, "after", 0, MAX_INT, "bad_page")
        in_range(limit, "limit", 1, 1000, "bad_page")
        await self.lobby_entry(game_id)
        pipe = self.redis.pipeline(transaction=True)
        pipe.lrange(keys.history(game_id), after, min(after + limit - 1, MAX_INT))
        pipe.get(keys.position(game_id))
        raw, position = await pipe.execute()
        audience = keys.audience(seat)
        entries = tuple(_history_decoder.decode(r).for_audience(audience) for r in raw)
        return HistoryPage(game_id, seat, entries, after + len(entries), int(position or 0))


REQUEST_TTL_S = 7 * 86_400  # how long a create's request id keeps its game id


def _check_request_id(request_id: str) -> bool:
    low, high = REQUEST_ID_LENGTH
    if not low <= len(request_id) <= high:
        raise ApiError(400, "bad_request_id", f"a request_id has {low} to {high} characters: make it random")
    return True


def _digest(request_id: str) -> str:
    """What the store and the command ids hold of a request id: never the id itself (a join's derives a token)."""
    return hashlib.sha256(request_id.encode()).hexdigest()[:32]


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.query_params.get("token")


def _json(raw: bytes) -> Response:
    return Response(content=raw, media_type=MediaType.JSON)


def create_app(settings: Settings, workers: Any = None) -> Litestar:
    """The ASGI app. ``workers`` (a ``services.runtime.workers.Workers``) are started and stopped with it when given."""
    def pooled(url: str) -> aioredis.Redis:
        """A bounded pool where a burst waits for a connection: redis-py's default pool raises "Too many
        connections" past 100 in use, which 100 clients waiting on one game used to reach (issue #8 item 12).
        A command that finds its pooled connection closed (Redis restarted) is sent once more on a new one."""
        return aioredis.Redis.from_pool(aioredis.BlockingConnectionPool.from_url(
            url, max_connections=64, timeout=5, retry=Retry(NoBackoff(), 1)))

    events, client = pooled(settings.redis_url), pooled(settings.views_url)
    gw = Gateway(events, client, settings)
    limits = Limits(client, Rate(settings.rate_per_client, settings.burst_per_client),
                    Rate(settings.rate_per_token, settings.burst_per_token), settings.open_games_per_client)

    async def before_request(request: Request) -> None:
        await check_headers(request)
        if request.scope["path"] != "/metrics":  # a scraper is no player: never rate limited
            await limits.check_request(request)

    @contextlib.asynccontextmanager
    async def lifespan(_: Litestar) -> AsyncIterator[None]:
        if workers is not None:
            await workers.start()
        await gw.replies.start()
        await gw.updates.start()
        try:
            yield
        finally:
            await gw.updates.stop()
            await gw.replies.stop()
            if workers is not None:
                await workers.stop()
            await gw.store.aclose()
            await client.aclose()
            await events.aclose()

    @get("/health", tags=["platform"])
    async def health() -> Response[dict[str, Any]]:
        """Checks both stores (the event store's Redis and the read store's, which may be the same), and shows
        the commands and events streams (length, last id) with each consumer group's backlog (``pending``:
        delivered, not yet acknowledged; ``last_delivered_id``; ``lag``: not yet delivered, Redis 7+).
        ``warnings`` names projector partitions that never ran. ``listeners``: the state of the gateway's pub/sub
        listeners (engine replies, view updates); one that lost its connection makes the answer a 503 while it
        reconnects (``status``: ``listener_down``). ``parked``: the commands the engine could neither decide nor
        answer (``souk:parked``, newest first). ``idle_consumers``: consumers that have not read for a minute, a
        worker that stopped reading or is gone (the engine drops those idle ten minutes with nothing pending)."""
        for name, redis in (("event store", events), ("read store", client)):
            try:
                await redis.ping()
            except Exception as exc:  # noqa: BLE001 - any failure is "unhealthy"
                raise ApiError(503, "redis_unavailable", f"the {name} Redis does not answer: {exc}") from None
        streams = {stream: await stream_backlog(events, stream) for stream in (keys.COMMANDS, keys.EVENTS)}
        warnings = [f"projector partition {p} has never run: its games' views are not kept"
                    for p in Partition.missing(streams[keys.EVENTS]["groups"])]
        listeners = {lst.name: lst.state for lst in (gw.replies, gw.updates)}
        down = [name for name, state in listeners.items() if not state.connected]
        warnings += [f"the {name} listener has no Redis connection since {listeners[name].since}: "
                     f"{listeners[name].last_error}; it reconnects by itself" for name in down]
        parked = {"count": await events.xlen(keys.PARKED),
                  "newest": [{"id": i.decode(), "reason": f[b"reason"].decode(), "detail": f[b"detail"].decode()}
                             for i, f in await events.xrevrange(keys.PARKED, count=5)]}
        if parked["count"]:
            warnings.append(f"{parked['count']} commands are parked in {keys.PARKED}: the engine could not decide "
                            "them (see 'parked')")
        idle = [c for stream in (keys.COMMANDS, keys.EVENTS)
                for c in await idle_consumers(events, stream, settings.idle_consumer_ms)]
        warnings += [f"consumer {c['consumer']} of group {c['group']} has not read for {c['idle_ms'] // 1000} s "
                     f"({c['pending']} entries pending)" for c in idle]
        body = {"status": "listener_down" if down else "ok", "event_store": "ok", "read_store": "ok",
                "streams": streams, "listeners": {name: msgspec.to_builtins(s) for name, s in listeners.items()},
                "parked": parked, "idle_consumers": idle, "warnings": warnings}
        return Response(body, status_code=503 if down else 200)

    @get("/catalog", tags=["platform"])
    async def catalog() -> list[GameInfo]:
        """The games this server plays, with their seat counts and default options."""
        return [GameInfo(g.name, g.title, g.min_seats, g.max_seats, msgspec.to_builtins(g.options_type()))
                for g in games().values()]

    @get("/games", tags=["lobby"])
    async def list_games(status: str | None = None, game: str | None = None, limit: int = 100,
                         cursor: str | None = None) -> Response[list[LobbyEntry]]:
        """The lobby, newest first; filter by ``status`` (open / playing / over / cancelled) and ``game`` (a name
        from /catalog). At most ``limit`` (1 to 200) games; when there are more, the ``X-Next-Cursor`` header
        holds the ``cursor`` of the next page. Reads one page of an index, whatever the number of games."""
        in_range(limit, "limit", 1, 200, "bad_page")
        if status is not None and status not in keys.LOBBY_STATUSES:
            raise ApiError(400, "bad_filter", f"status is one of {', '.join(keys.LOBBY_STATUSES)}, not {status!r}")
        if game is not None and game not in games():
            raise ApiError(400, "bad_filter", f"game is one of {', '.join(games())}, not {game!r}")
        top, after = "+inf", None
        if cursor is not None:
            try:
                score, after = cursor.split(":", 1)
                top = repr(float(score))
            except ValueError:
                raise ApiError(400, "bad_page", "cursor is the X-Next-Cursor of an earlier page") from None
        index = keys.lobby_index(status, game)
        found: list[tuple[bytes, float]] = []
        while len(found) <= limit:
            batch = await client.zrevrangebyscore(index, top, "-inf", start=0, num=limit + 16, withscores=True)
            if after is not None:  # the games listed up to the cursor share its score: skip them
                batch = [(g, sc) for g, sc in batch if not (repr(sc) == top and g.decode() >= after)]
            found += batch
            if len(batch) < limit + 16 or not batch:
                break
            top, after = repr(batch[-1][1]), batch[-1][0].decode()
        page = found[:limit]
        entries = [_lobby_decoder.decode(raw) for raw in await client.hmget(keys.LOBBY, [g for g, _ in page]) or []
                   if raw is not None] if page else []
        headers = {}
        if len(found) > limit:
            last_id, last_score = page[-1]
            headers["X-Next-Cursor"] = f"{last_score!r}:{last_id.decode()}"
        return Response(entries, headers=headers)

    @post("/games", tags=["lobby"], dto=strict(CreateGameRequest), return_dto=None)
    async def create_game(request: Request, data: CreateGameRequest) -> Created:
        """Create a game; then each player joins a seat. ``seed`` (64 hex digits) makes the game reproducible,
        and says so to everyone. With a ``request_id``, a resent request answers the same game."""
        if data.seed is not None:
            try:
                bytes.fromhex(data.seed)
            except ValueError:
                raise ApiError(400, "bad_seed", "seed must be hexadecimal") from None
        if data.request_id is None:
            game_id, command_id = uuid.uuid4().hex[:12], uuid.uuid4().hex
        elif _check_request_id(data.request_id):
            game_id, command_id = await gw.game_for_request(data.request_id), f"create-{_digest(data.request_id)}"
        await limits.check_open_games(request, keys.LOBBY)
        # The creator's token (and a private game's invite code) are derived from the game id and the platform's
        # secret: a resend of the same request answers the same ones, and the store keeps only their hashes.
        creator_token = await gw.derived(f"creator:{game_id}")
        invite = (await gw.derived(f"invite:{game_id}"))[:12] if data.private else None
        body = CreateGame(data.game, data.title, data.seats, data.options, data.seed,
                          creator_hash=token_hash(creator_token), invite_hash=token_hash(invite) if invite else "")
        reply = await gw.submit(CommandEnvelope(command_id, game_id, msgspec.Raw(encoder.encode(body))))
        raise_if_rejected(reply)
        await limits.created(request, game_id, time.time())
        return Created(game_id, reply.version, creator_token, invite)

    @get("/games/{game_id:str}", tags=["lobby"])
    async def get_game(game_id: str) -> LobbyEntry:
        return await gw.lobby_entry(game_id)

    @post("/games/{game_id:str}/seats", tags=["lobby"], dto=strict(JoinRequest), return_dto=None)
    async def join(game_id: str, data: JoinRequest) -> Joined:
        """Take a seat (the lowest free one unless ``seat`` is given). Keep the returned token secret. With a
        ``request_id``, a resent request answers the same seat and token instead of taking another seat."""
        if data.request_id is None:
            token, command_id = secrets.token_urlsafe(24), uuid.uuid4().hex
        elif _check_request_id(data.request_id):
            token, command_id = await gw.token_for_request(game_id, data.request_id), f"join-{_digest(data.request_id)}"
        await gw.game_name(game_id)  # 404 for a game that does not exist: nothing is queued for it
        body = JoinSeat(data.name, token_hash(token), data.seat,
                        invite_hash=token_hash(data.invite) if data.invite else "")
        # The engine picks the lowest free seat when none is named, on the game as it is: no seat_taken race.
        reply = await gw.submit(CommandEnvelope(command_id, game_id, msgspec.Raw(encoder.encode(body))))
        raise_if_rejected(reply)
        return Joined(game_id, reply.seat, token, reply.version)

    @delete("/games/{game_id:str}/seats/{seat:int}", tags=["lobby"], status_code=200)
    async def leave(request: Request, game_id: str, seat: int) -> Left:
        """Give the seat back before the game starts (its token stops working); someone else may take it."""
        hashed = await gw.authorize(game_id, seat, _bearer(request))
        reply = await gw.submit(CommandEnvelope(uuid.uuid4().hex, game_id, msgspec.Raw(encoder.encode(LeaveSeat())),
                                                seat=seat, token_hash=hashed))
        raise_if_rejected(reply)
        return Left(game_id, seat, reply.version)

    @delete("/games/{game_id:str}", tags=["lobby"], status_code=200)
    async def cancel(request: Request, game_id: str) -> Cancelled:
        """Cancel a game before it starts, with the ``creator_token`` its creation answered."""
        token = _bearer(request)
        if not token:
            raise ApiError(401, "missing_token", "send the creator token as 'Authorization: Bearer <token>'")
        await gw.game_name(game_id)
        reply = await gw.submit(CommandEnvelope(uuid.uuid4().hex, game_id,
                                                msgspec.Raw(encoder.encode(CancelGame("cancelled"))),
                                                token_hash=token_hash(token)))
        if reply.code == "not_allowed":
            raise ApiError(401, "bad_token", "this is not the creator token of this game")
        raise_if_rejected(reply)
        return Cancelled(game_id, reply.version)

    @post("/games/{game_id:str}/seats/{seat:int}/rematch", tags=["lobby"], status_code=201)
    async def rematch(request: Request, game_id: str, seat: int) -> Rematch:
        """A new game of a finished one, with the same title, options and players: each player calls this with
        its seat token and gets its own seat (the one it had) and token in the same rematch; the last one in
        starts it."""
        hashed = await gw.authorize(game_id, seat, _bearer(request))
        entry = await gw.lobby_entry(game_id)
        if entry.status != "over":
            raise ApiError(409, "game_not_over", "a rematch follows a finished game")
        [(_, fields)] = await gw.events.xrange(keys.game_stream(game_id), count=1)
        first = table_event_decoder.decode(event_envelope_decoder.decode(fields[b"e"]).payload)
        new_id = await gw.game_for_request(f"rematch:{game_id}")  # one rematch per game, whoever asks first
        body = CreateGame(first.game, entry.title, first.seats, first.options, rematch_of=game_id)
        reply = await gw.submit(CommandEnvelope(f"rematch-{game_id}", new_id, msgspec.Raw(encoder.encode(body))))
        if reply.status != "accepted" and reply.code != "game_exists":
            raise_if_rejected(reply)
        token = await gw.derived(f"rematch:{new_id}:{seat}:{hashed}")
        name = entry.seats[seat].name or f"player {seat}"
        join = JoinSeat(name, token_hash(token), seat)
        reply = await gw.submit(CommandEnvelope(f"rematch-join-{seat}", new_id, msgspec.Raw(encoder.encode(join))))
        raise_if_rejected(reply)
        return Rematch(new_id, seat, token, reply.version)

    @get("/games/{game_id:str}/view", tags=["spectator"])
    async def spectator_view(game_id: str, min_version: int = 0) -> Response[TableView]:
        """What a spectator sees; ``min_version`` waits (up to 3 s) for the projection to reach it."""
        if in_range(min_version, "min_version"):
            await gw.wait_projected(game_id, min_version)
        return _json(await gw.view_bytes(game_id, None))

    @get("/games/{game_id:str}/history", tags=["spectator"])
    async def spectator_history(game_id: str, after: int = 0, limit: int = 100) -> HistoryPage:
        """The history as a spectator may see it, paged: pass ``next_after`` as ``after``."""
        return await gw.history(game_id, None, after, limit)

    @get("/games/{game_id:str}/audit", tags=["spectator"])
    async def audit(game_id: str) -> Audit:
        """Once the game is over: every event unredacted with its hashes, and the seed behind ``seed_hash``."""
        entry = await gw.lobby_entry(game_id)
        if entry.status != "over":
            raise ApiError(409, "game_not_over", "the full history and the seed are published when the game ends")
        envelopes = await gw.store.read(game_id)
        decode = event_decoder(entry.game).decode
        created, ended = decode(envelopes[0].payload), decode(envelopes[-1].payload)
        return Audit(game_id, ended.seed, created.seed_hash, tuple(envelopes))

    @get("/games/{game_id:str}/seats/{seat:int}/view", tags=["seat"])
    async def seat_view(request: Request, game_id: str, seat: int, min_version: int = 0) -> Response[TableView]:
        """What this seat sees now (its secrets included), with the commands it may send."""
        in_range(min_version, "min_version")
        await gw.authorize(game_id, seat, _bearer(request))
        if min_version:
            await gw.wait_projected(game_id, min_version)
        return _json(await gw.view_bytes(game_id, seat))

    @get("/games/{game_id:str}/seats/{seat:int}/legal", tags=["seat"])
    async def seat_legal(request: Request, game_id: str, seat: int) -> LegalCommands:
        """The commands this seat may send now; post any of them back as ``command``."""
        await gw.authorize(game_id, seat, _bearer(request))
        view = _view_decoder.decode(await gw.view_bytes(game_id, seat))
        return LegalCommands(game_id, seat, view.version, view.legal)

    @get("/games/{game_id:str}/seats/{seat:int}/history", tags=["seat"])
    async def seat_history(request: Request, game_id: str, seat: int, after: int = 0, limit: int = 100) -> HistoryPage:
        await gw.authorize(game_id, seat, _bearer(request))
        return await gw.history(game_id, seat, after, limit)

    @post("/games/{game_id:str}/seats/{seat:int}/commands", tags=["seat"], status_code=200,
          dto=strict(CommandRequest), return_dto=None)
    async def send_command(request: Request, game_id: str, seat: int, data: CommandRequest) -> Reply:
        """Send one command. 200: accepted, with the new version. 422: refused by the rules (``code``).
        Resending the same ``command_id`` returns the first answer and changes nothing."""
        hashed = await gw.authorize(game_id, seat, _bearer(request))
        if not 1 <= len(data.command_id) <= 100:
            raise ApiError(400, "bad_command_id", "command_id must have 1 to 100 characters")
        game = await gw.game_name(game_id)
        try:
            command = _convert(game, data.command)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise ApiError(400, "bad_command", f"not a command of {game}: {exc}") from None
        if data.expected_version is not None:
            in_range(data.expected_version, "expected_version")
        env = CommandEnvelope(data.command_id, game_id, msgspec.Raw(encoder.encode(command)), seat=seat,
                              token_hash=hashed, expected_version=data.expected_version)
        reply = await gw.submit(env)
        raise_if_rejected(reply)
        return reply

    @websocket("/games/{game_id:str}/ws")
    async def spectator_socket(socket: WebSocket, game_id: str) -> None:
        """Pushes the spectator view (a TableView JSON text frame) at once and after every change. A game that
        does not exist: the socket is accepted, then closed with code 4404."""
        try:
            await gw.game_name(game_id)
        except ApiError as exc:
            await _refuse_socket(socket, exc)
            return
        await _push_views(gw, socket, game_id, None, _since(socket))

    @websocket("/games/{game_id:str}/seats/{seat:int}/ws")
    async def seat_socket(socket: WebSocket, game_id: str, seat: int) -> None:
        """Pushes this seat's view at once and after every change. Authenticate with ``?token=``. Refused, the
        socket is accepted, then closed with code 4000 + the HTTP status (4401: a missing or bad token; 4404: no
        such game) and the error's code as the reason."""
        try:
            await gw.authorize(game_id, seat, socket.query_params.get("token"))
        except ApiError as exc:
            await _refuse_socket(socket, exc)
            return
        await _push_views(gw, socket, game_id, seat, _since(socket))

    return Litestar(
        route_handlers=[health, catalog, list_games, create_game, get_game, join, leave, cancel, rematch, spectator_view,
                        spectator_history, audit, seat_view, seat_legal, seat_history, send_command,
                        spectator_socket, seat_socket, *_asyncapi_route(workers, settings), *_metrics_route(events)],
        lifespan=[lifespan],
        middleware=[tracing.asgi_middleware],  # traceparent in, bound to the logs, and out in every response
        exception_handlers={ApiError: on_api_error, ValidationException: on_validation,
                            NotFoundException: on_http, HTTPException: on_http, Exception: on_crash},
        before_request=before_request,
        cors_config=CORSConfig(allow_origins=list(settings.cors_origins),
                               allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
                               allow_headers=["Authorization", "Content-Type", "traceparent"],
                               expose_headers=["Retry-After", "traceparent", "X-Next-Cursor"], max_age=600)
        if settings.cors_origins else None,
        request_max_body_size=MAX_BODY_BYTES,
        openapi_config=OpenAPIConfig(title="Souk", version="0.1.0",
                                     description="Event-sourced board games: lobby, seats, commands, views, history."),
        plugins=[openapi.Documented(), openapi.AllowedMethods()],  # the document's errors, tokens, ranges; OPTIONS
        debug=False,
        logging_config=None,  # the root logger is set up by services/runtime/logs.py: every line JSON
    )


def _convert(game: str, command: dict[str, Any]) -> Any:
    """Validates a command body against the game's commands (strict, like the engine) before it is queued."""
    decoded = command_decoder(game).decode(encoder.encode(command))
    if isinstance(decoded, TABLE_COMMANDS):
        raise msgspec.ValidationError("table commands go to /games and /games/{id}/seats")
    return decoded


async def _refuse_socket(socket: WebSocket, exc: ApiError) -> None:
    """Accepts, then closes with 4000 + the HTTP status: a browser's WebSocket sees the close code, never an HTTP
    status refused at the handshake."""
    await socket.accept()
    await socket.close(code=4000 + exc.status_code, reason=exc.code)


class _Versioned(msgspec.Struct):
    version: int


_version_decoder = msgspec.json.Decoder(_Versioned)


def _since(socket: WebSocket) -> int:
    """``?since=N``: the version a reconnecting client last saw (views up to it are not sent again)."""
    raw = socket.query_params.get("since")
    try:
        return max(-1, int(raw)) if raw is not None else -1
    except ValueError:
        return -1


async def _push_views(gw: Gateway, socket: WebSocket, game_id: str, seat: int | None, since: int = -1) -> None:
    """Sends the view now and after every change. The socket holds no Redis connection and reads nothing itself:
    the views come from ``gw.updates``, which reads each new view once for every socket following it. A client
    reconnecting with ``?since=N`` gets the current view only if it is newer than N, then every change."""
    await socket.accept()
    async with gw.updates.follow(game_id, keys.audience(seat)) as follower:

        async def drain() -> None:  # notices the client leaving
            try:
                while True:
                    await socket.receive_data(mode="text")
            except (WebSocketDisconnect, Exception):  # noqa: BLE001
                follower.close()

        reader = asyncio.create_task(drain())
        try:
            while (view := await follower.next()) is not None:
                if since >= 0 and _version_decoder.decode(view).version <= since:
                    continue  # the client has it already
                await socket.send_data(view, mode="text")
        except WebSocketDisconnect:
            pass
        finally:
            reader.cancel()


def _metrics_route(events: aioredis.Redis) -> list:
    @get("/metrics", tags=["platform"], include_in_schema=False)
    async def prometheus_metrics() -> Response:
        """The metrics in Prometheus' text format (``services/runtime/metrics.py``): this process's, and the streams'
        backlog read now (within a second, else the last reading, with its age)."""
        await metrics.BACKLOG.refresh(events)
        body, content_type = metrics.exposition()
        return Response(content=body, media_type=content_type)

    return [prometheus_metrics]


def _asyncapi_route(workers: Any, settings: Settings) -> list:
    @get("/asyncapi.json", tags=["platform"], include_in_schema=False)
    async def asyncapi() -> Response:
        """FastStream's AsyncAPI document of the streams and channels."""
        from services.runtime.workers import Workers  # the gateway alone describes the workers it talks to

        described = workers if workers is not None else Workers(settings)
        return Response(content=described.asyncapi().to_specification().to_json(), media_type=MediaType.JSON)

    return [asyncapi]
