"""The lobby: the games (``/games``): list, create, read one, cancel."""

from __future__ import annotations

import time
import uuid

import msgspec
from litestar import Request, Response, delete, get, post

from contracts.api import Cancelled, Created, CreateGameRequest
from contracts.readmodels import LobbyEntry
from contracts.table import CancelGame, CreateGame
from domain.kernel import games
from services.gateway.auth import bearer, check_request_id, digest, token_hash
from services.gateway.commands import envelope
from services.gateway.dependencies import AuthDep, CommandsDep, LimitsDep, ReadsDep
from services.gateway.errors import ApiError, raise_if_rejected
from services.gateway.inputs import in_range, strict
from services.gateway.openapi import AllowingController
from services.store import keys

_lobby_decoder = msgspec.json.Decoder(LobbyEntry)


class GamesController(AllowingController):
    path = "/games"
    tags = ["lobby"]

    @get("/")
    async def list_games(self, reads: ReadsDep, status: str | None = None, game: str | None = None, limit: int = 100,
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
        views = reads.views
        index = keys.lobby_index(status, game)
        found: list[tuple[bytes, float]] = []
        while len(found) <= limit:
            batch = await views.zrevrangebyscore(index, top, "-inf", start=0, num=limit + 16, withscores=True)
            if after is not None:  # the games listed up to the cursor share its score: skip them
                batch = [(g, sc) for g, sc in batch if not (repr(sc) == top and g.decode() >= after)]
            found += batch
            if len(batch) < limit + 16 or not batch:
                break
            top, after = repr(batch[-1][1]), batch[-1][0].decode()
        page = found[:limit]
        entries = [_lobby_decoder.decode(raw) for raw in await views.hmget(keys.LOBBY, [g for g, _ in page]) or []
                   if raw is not None] if page else []
        headers = {}
        if len(found) > limit:
            last_id, last_score = page[-1]
            headers["X-Next-Cursor"] = f"{last_score!r}:{last_id.decode()}"
        return Response(entries, headers=headers)

    @post("/", dto=strict(CreateGameRequest), return_dto=None)
    async def create_game(self, request: Request, data: CreateGameRequest, commands: CommandsDep, auth: AuthDep,
                          limits: LimitsDep) -> Created:
        """Create a game; then each player joins a seat. ``seed`` (64 hex digits) makes the game reproducible, only
        with ``unfair: true``, and the game says so to everyone. With a ``request_id``, a resent request answers the
        same game."""
        if data.seed is not None:
            try:
                bytes.fromhex(data.seed)
            except ValueError:
                raise ApiError(400, "bad_seed", "seed must be hexadecimal") from None
        if data.request_id is None:
            game_id, command_id = uuid.uuid4().hex[:12], uuid.uuid4().hex
        elif check_request_id(data.request_id):
            game_id, command_id = await commands.game_for_request(data.request_id), f"create-{digest(data.request_id)}"
        await limits.check_open_games(request, keys.LOBBY)
        # The creator's token (and a private game's invite code) are derived from the game id and the platform's
        # secret: a resend of the same request answers the same ones, and the store keeps only their hashes.
        creator_token = await auth.derived(f"creator:{game_id}")
        invite = (await auth.derived(f"invite:{game_id}"))[:12] if data.private else None
        body = CreateGame(data.game, data.title, data.seats, data.options, data.seed, data.unfair,
                          creator_hash=token_hash(creator_token), invite_hash=token_hash(invite) if invite else "")
        reply = await commands.submit(envelope(command_id, game_id, body))
        raise_if_rejected(reply)
        await limits.created(request, game_id, time.time())
        return Created(game_id, reply.version, creator_token, invite)

    @get("/{game_id:str}")
    async def get_game(self, game_id: str, reads: ReadsDep) -> LobbyEntry:
        return await reads.lobby_entry(game_id)

    @delete("/{game_id:str}", status_code=200)
    async def cancel(self, request: Request, game_id: str, reads: ReadsDep, commands: CommandsDep) -> Cancelled:
        """Cancel a game before it starts, with the ``creator_token`` its creation answered."""
        token = bearer(request)
        if not token:
            raise ApiError(401, "missing_token", "send the creator token as 'Authorization: Bearer <token>'")
        await reads.game_name(game_id)
        reply = await commands.submit(envelope(uuid.uuid4().hex, game_id, CancelGame("cancelled"),
                                               token_hash=token_hash(token)))
        if reply.code == "not_allowed":
            raise ApiError(401, "bad_token", "this is not the creator token of this game")
        raise_if_rejected(reply)
        return Cancelled(game_id, reply.version)
