"""The lobby: the games (``/games``): list, create, read one, cancel."""

from __future__ import annotations

import hmac
import secrets
import uuid

import msgspec
from litestar import Request, Response, delete, get, post, put
from litestar.params import FromPath, FromQuery, JSONBody

from contracts.api import (
    BotsRequest,
    BotsSeated,
    Cancelled,
    Created,
    CreateGameRequest,
    Forked,
    ForkRequest,
    Joined,
    Webhook,
    WebhookRequest,
)
from contracts.readmodels import LobbyEntry
from contracts.table import BotSeated, CancelGame, CreateGame, JoinSeat, SeatBots
from domain.kernel import games
from services.gateway.auth import bearer, check_request_id, digest, token_hash
from services.gateway.commands import envelope
from services.gateway.dependencies import Gateway, GatewayDep
from services.gateway.errors import ApiError, raise_if_rejected
from services.gateway import lobby
from services.gateway.inputs import in_range, strict
from services.gateway.openapi import AllowingController
from services.history.fork import ForkRefused, fork_of, source_is_private
from services.store import keys
from services.store.codec import event_envelope_decoder, table_event_decoder
from services.webhooks import registry, urls

_lobby_decoder = msgspec.json.Decoder(LobbyEntry)
_BOT_SEATED = BotSeated.__struct_config__.tag


async def _create(request: Request, body: CreateGame, request_id: str | None, private: bool,
                  gateway: Gateway, webhook: str | None = None) -> Created:
    """Creates a game (a new one, or a fork) under a new id, or the one a resent ``request_id`` got. The creator's
    token (and a private game's invite code, and the webhook's secret) are derived from the game id and the
    platform's secret: a resend of the same request answers the same ones, and the store keeps only their hashes.
    ``webhook``: the game's webhook URL, registered before the creation is sent (the webhook worker may read its
    first events at once)."""
    if webhook is not None:
        await check_webhook(gateway, webhook)
    if request_id is None:
        game_id, command_id = uuid.uuid4().hex[:12], uuid.uuid4().hex
    elif check_request_id(request_id):
        game_id, command_id = await gateway.commands.game_for_request(request_id), f"create-{digest(request_id)}"
    reserved = await gateway.limits.reserve_open_game(request, game_id)
    creator_token = await gateway.auth.derived(f"creator:{game_id}")
    invite = (await gateway.auth.derived(f"invite:{game_id}"))[:12] if private else None
    body = msgspec.structs.replace(body, creator_hash=token_hash(creator_token),
                                   invite_hash=token_hash(invite) if invite else "")
    secret = None
    if webhook is not None:
        secret = await gateway.auth.derived(f"webhook:{game_id}")
        await registry.register(gateway.stores.events, game_id, registry.GAME, registry.Registration(webhook, secret))
    reply = await gateway.commands.submit(envelope(command_id, game_id, body))
    if reserved and reply.status != "accepted":  # refused for good: its place is free again (a 504 keeps it: the
        await gateway.limits.release_open_game(request, game_id)  # game may still be created)
    if webhook is not None and reply.status != "accepted" and reply.code != "game_exists":
        await registry.forget(gateway.stores.events, game_id, registry.GAME)  # no game: nothing to notify
    raise_if_rejected(reply)
    return Created(game_id, reply.version, creator_token, invite, secret)


async def check_webhook(gateway: Gateway, url: str) -> None:
    """A webhook URL Souk posts to (422 ``bad_webhook`` or ``webhook_not_public`` otherwise; README, Webhooks)."""
    settings = gateway.settings
    try:
        await urls.check(url, settings.webhooks_allow_http, settings.webhooks_allow_private)
    except urls.WebhookRefused as exc:
        raise ApiError(422, exc.code, exc.message) from None


async def set_webhook(gateway: Gateway, game_id: str, seat: int | None, field: str, data: WebhookRequest) -> Webhook:
    """Registers ``data.url`` for ``field`` (the game's, or a seat's by its token) with a new secret: derived from
    the request id when there is one (a resend answers the same), else drawn at random. The notices of the events
    from now on go there; the ones still waiting in the outbox are signed with the new secret when tried."""
    await check_webhook(gateway, data.url)
    if data.request_id is None:
        secret = secrets.token_urlsafe(32)
    elif check_request_id(data.request_id):
        secret = await gateway.auth.derived(f"webhook:{game_id}:{field}:{digest(data.request_id)}")
    await registry.register_later(gateway.stores.events, game_id, field, registry.Registration(data.url, secret))
    return Webhook(game_id, seat, data.url, secret)


async def first_event(gateway: Gateway, game_id: str) -> object:
    """The game's GameCreated, from the event store (404 / 410 for a game that does not exist, or no longer)."""
    found = await gateway.reads.events.xrange(keys.game_stream(game_id), count=1)
    if not found:
        await gateway.reads.game_name(game_id)  # raises: no such game, or archived
        raise ApiError(404, "game_not_found", "there is no such game")
    [(_, fields)] = found
    return table_event_decoder.decode(event_envelope_decoder.decode(fields[b"e"]).payload)


async def check_creator(request: Request, gateway: Gateway, game_id: str) -> None:
    """The request carries the creator token of the game (``Authorization: Bearer``): else 401."""
    token = bearer(request)
    if not token:
        raise ApiError(401, "missing_token", "send the creator token as 'Authorization: Bearer <token>'")
    created = await first_event(gateway, game_id)
    expected = getattr(created, "creator_hash", "")
    if not expected or not hmac.compare_digest(expected, token_hash(token)):
        raise ApiError(401, "bad_token", "this is not the creator token of this game")


def no_webhook(seat: int | None) -> ApiError:
    return ApiError(404, "no_webhook", "this game has no webhook" if seat is None else f"seat {seat} has no webhook")


class GamesController(AllowingController):
    path = "/games"
    tags = ["lobby"]

    @get("/")
    async def list_games(self, gateway: GatewayDep, status: FromQuery[str | None] = None,
                         game: FromQuery[str | None] = None, limit: FromQuery[int] = 100,
                         cursor: FromQuery[str | None] = None) -> Response[list[LobbyEntry]]:
        """The lobby, newest first; filter by ``status`` (open / playing / over / cancelled) and ``game`` (a name
        from /catalog). At most ``limit`` (1 to 200) games; when there are more, the ``X-Next-Cursor`` header
        holds the ``cursor`` of the next page. Reads a page of each partition's index, whatever the number of games. Each
        entry's ``presence``: which seats are connected now (README, Presence)."""
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
        views = gateway.reads.views
        found = await lobby.listed(views, status, game, top, after, limit)  # every partition's index, merged
        page = found[:limit]
        entries = [_lobby_decoder.decode(raw) for raw in await lobby.entries(views, [g for g, _ in page])
                   if raw is not None]
        entries = await gateway.reads.with_presence(entries)  # which seats are connected, now
        headers = {}
        if len(found) > limit:
            last_id, last_score = page[-1]
            headers["X-Next-Cursor"] = f"{last_score!r}:{last_id.decode()}"
        return Response(entries, headers=headers)

    @post("/", dto=strict(CreateGameRequest), return_dto=None)
    async def create_game(self, request: Request, data: JSONBody[CreateGameRequest], gateway: GatewayDep) -> Created:
        """Create a game; then each player joins a seat. ``seed`` (64 hex digits) makes the game reproducible, only
        with ``unfair: true``, and the game says so to everyone. With a ``request_id``, a resent request answers the
        same game. ``webhook``: an https URL that receives every seat's notices (README, Webhooks), signed with the
        ``webhook_secret`` of the answer."""
        if data.seed is not None:
            try:
                bytes.fromhex(data.seed)
            except ValueError:
                raise ApiError(400, "bad_seed", "seed must be hexadecimal") from None
        body = CreateGame(data.game, data.title, data.seats, data.options, data.seed, data.unfair)
        return await _create(request, body, data.request_id, data.private, gateway, data.webhook)

    @get("/{game_id:str}")
    async def get_game(self, game_id: FromPath[str], gateway: GatewayDep) -> LobbyEntry:
        """The game's lobby entry, with which seats are connected now (``presence``)."""
        return await gateway.reads.lobby_entry(game_id, present=True)

    @get("/{game_id:str}/webhook", tags=["lobby"])
    async def game_webhook(self, request: Request, game_id: FromPath[str], gateway: GatewayDep) -> Webhook:
        """The game's webhook URL (the one every seat's notices go to), with the creator token (README, Webhooks).
        404 ``no_webhook`` when it has none. The secret is never shown again."""
        await check_creator(request, gateway, game_id)
        found = await registry.registration(gateway.stores.events, game_id, registry.GAME)
        if found is None:
            raise no_webhook(None)
        return Webhook(game_id, None, found.url)

    @put("/{game_id:str}/webhook", tags=["lobby"], dto=strict(WebhookRequest), return_dto=None)
    async def put_game_webhook(self, request: Request, game_id: FromPath[str], data: JSONBody[WebhookRequest],
                               gateway: GatewayDep) -> Webhook:
        """Sets or changes the game's webhook URL, with the creator token: the answer holds its new secret (a
        change rotates it). The notices of the events from now on go there."""
        await check_creator(request, gateway, game_id)
        return await set_webhook(gateway, game_id, None, registry.GAME, data)

    @delete("/{game_id:str}/webhook", tags=["lobby"], status_code=200)
    async def delete_game_webhook(self, request: Request, game_id: FromPath[str], gateway: GatewayDep) -> Webhook:
        """Removes the game's webhook, with the creator token: nothing more is posted to it (notices not delivered
        yet are dropped). 404 ``no_webhook`` when it has none."""
        await check_creator(request, gateway, game_id)
        removed = await registry.remove(gateway.stores.events, game_id, registry.GAME)
        if removed is None:
            raise no_webhook(None)
        return Webhook(game_id, None, removed.url)

    @post("/{game_id:str}/bots", status_code=201, dto=strict(BotsRequest), return_dto=None)
    async def fill_bots(self, game_id: FromPath[str], data: JSONBody[BotsRequest], gateway: GatewayDep) -> BotsSeated:
        """Free seats of an open game taken by the server's bots, which play them from the start: ``seats`` (null:
        every free seat), ``strategy`` (null: the server's takeover strategy). Each shows in the lobby and the
        views as a seat with ``bot``: its strategy; the game starts when the table is full, as with any join. With
        a ``request_id``, a resent request answers the same seats. 409 ``game_started`` / ``seat_taken``, 422
        ``unknown_strategy``, ``no_such_seat``, ``bad_seats``, ``bad_invite`` (a private game, without its
        invite code)."""
        if data.request_id is None:
            command_id = uuid.uuid4().hex
        elif check_request_id(data.request_id):
            command_id = f"bots-{digest(data.request_id)}"
        await gateway.reads.game_name(game_id)  # 404 for a game that does not exist: nothing is queued for it
        strategy = data.strategy if data.strategy is not None else gateway.settings.takeover_strategy
        body = SeatBots(strategy, None if data.seats is None else tuple(data.seats),
                        invite_hash=token_hash(data.invite) if data.invite else "")
        reply = await gateway.commands.submit(envelope(command_id, game_id, body))
        raise_if_rejected(reply)
        # the seats taken, from the command's own events (also for a resend, answered with the same version)
        first = reply.version - reply.events
        events = await gateway.stores.event_store.read(game_id, after=first)
        seats = tuple(table_event_decoder.decode(env.payload).seat for env in events[:reply.events]
                      if env.type == _BOT_SEATED)
        return BotsSeated(game_id, reply.version, seats, strategy)

    @delete("/{game_id:str}", status_code=200)
    async def cancel(self, request: Request, game_id: FromPath[str], gateway: GatewayDep) -> Cancelled:
        """Cancel a game before it starts, with the ``creator_token`` its creation answered."""
        token = bearer(request)
        if not token:
            raise ApiError(401, "missing_token", "send the creator token as 'Authorization: Bearer <token>'")
        await gateway.reads.game_name(game_id)
        reply = await gateway.commands.submit(envelope(uuid.uuid4().hex, game_id, CancelGame("cancelled"),
                                               token_hash=token_hash(token)))
        if reply.code == "not_allowed":
            raise ApiError(401, "bad_token", "this is not the creator token of this game")
        raise_if_rejected(reply)
        return Cancelled(game_id, reply.version)

    @post("/{game_id:str}/fork", status_code=201, dto=strict(ForkRequest), return_dto=None)
    async def fork(self, request: Request, game_id: FromPath[str], data: JSONBody[ForkRequest],
                   gateway: GatewayDep) -> Forked:
        """A new game from this finished game's position at ``version`` (what ``GET …/view?at=version`` shows; a
        version inside a command is the game before it), to play a what-if: its first events replay that
        position, it is marked ``forked_from`` in the lobby, its views and its record, and its seats are new
        (``seats``: names taking them at once, whose tokens the answer holds; else POST /games/{fork}/seats).
        Its chance after the position is fresh (its own seed, mixed with its seats' entropy); decks shuffled
        before ``version`` are kept as they were (README, Forks). A private game is forked by its seats only,
        with a seat's token (401 ``missing_token`` / ``bad_token`` otherwise), and its fork is private whatever
        ``private`` says. 409 ``game_not_over`` for a game still in play (its state holds secrets), 422
        ``not_a_position`` before the start or at the end."""
        entry = await gateway.reads.lobby_entry(game_id)  # 404, or 410 archived
        names = data.seats or []
        if len(names) > len(entry.seats):
            raise ApiError(400, "bad_seats", f"this game has {len(entry.seats)} seats, not {len(names)}")
        token = bearer(request)
        envelopes = await gateway.stores.event_store.read(game_id)
        try:
            body = fork_of(game_id, envelopes, data.version, data.title, token_hash(token) if token else None)
        except ForkRefused as exc:
            raise ApiError(exc.status, exc.code, exc.message) from None
        private = data.private or source_is_private(envelopes)  # nothing public names a private game
        created = await _create(request, body, data.request_id, private, gateway)
        new_id, invite = created.game_id, created.invite_code
        seats = []
        for seat, name in enumerate(names):
            token = await gateway.auth.derived(f"fork:{new_id}:{seat}")
            join = JoinSeat(name, token_hash(token), seat, invite_hash=token_hash(invite) if invite else "")
            joined = await gateway.commands.submit(envelope(f"fork-join-{seat}", new_id, join))
            raise_if_rejected(joined)
            seats.append(Joined(new_id, seat, token, joined.version))
        assert body.fork is not None
        return Forked(new_id, created.version, body.fork.source, created.creator_token, invite, tuple(seats))
