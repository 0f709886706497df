"""A game's seats (``/games/{game_id}/seats``): taking one, giving it back, a rematch; and what a seat does with
its token: its view, its legal commands, its history, its commands, its undo requests and answers."""

from __future__ import annotations

import secrets
import uuid
from typing import Any

import msgspec
from litestar import Request, Response, delete, get, post, put
from litestar.params import FromPath, FromQuery, JSONBody

from contracts.api import (
    CommandRequest,
    Joined,
    JoinRequest,
    LegalCommands,
    Left,
    Rematch,
    ResignRequest,
    UndoAnswerRequest,
    UndoCommandRequest,
    Webhook,
    WebhookRequest,
)
from contracts.envelope import Reply
from contracts.readmodels import HistoryPage, TableView
from contracts.table import (
    AcceptUndo,
    CreateGame,
    DeclineUndo,
    JoinSeat,
    LeaveSeat,
    RequestUndo,
    Resign,
    SeatBots,
)
from services.gateway.auth import bearer, check_request_id, digest, token_hash
from services.gateway.commands import PlatformCommand, convert, envelope
from services.gateway.dependencies import Gateway, GatewayDep
from services.gateway.errors import ApiError, raise_if_rejected
from services.gateway.inputs import in_range, strict
from services.gateway.openapi import AllowingController
from services.gateway.controllers.games import check_webhook, no_webhook, set_webhook
from services.store import keys
from services.store.codec import encoder, event_envelope_decoder, table_event_decoder
from services.webhooks import registry

_view_decoder = msgspec.json.Decoder(TableView)


def json_response(raw: bytes) -> Response:
    return Response(content=raw, media_type="application/json")


async def view_at(request: Request, gateway: Gateway, game_id: str, seat: int, at: int) -> TableView:
    """The seat's view at version ``at``: with its token while the game runs; anyone's once it is over (the audit
    shows every event whole by then)."""
    view, over = await gateway.reads.view_at(game_id, seat, at)
    if not over:
        await gateway.auth.authorize(game_id, seat, bearer(request))
    return view


class SeatsController(AllowingController):
    path = "/games/{game_id:str}/seats"

    @post("/", tags=["lobby"], dto=strict(JoinRequest), return_dto=None)
    async def join(self, game_id: FromPath[str], data: JSONBody[JoinRequest], gateway: GatewayDep) -> Joined:
        """Take a seat (the lowest free one unless ``seat`` is given). Keep the returned token secret. With a
        ``request_id``, a resent request answers the same seat and token instead of taking another seat. With
        ``entropy`` (64 random hex digits), the seat adds its own chance to the game's (README, Fair chance). With
        ``webhook`` (an https URL), the seat's notices are posted there (README, Webhooks), signed with the
        ``webhook_secret`` of the answer."""
        if data.request_id is None:
            token, command_id = secrets.token_urlsafe(24), uuid.uuid4().hex
        elif check_request_id(data.request_id):
            token = await gateway.auth.token_for_request(game_id, data.request_id)
            command_id = f"join-{digest(data.request_id)}"
        await gateway.reads.game_name(game_id)  # 404 for a game that does not exist: nothing is queued for it
        hashed = token_hash(token)
        body = JoinSeat(data.name, hashed, data.seat,
                        invite_hash=token_hash(data.invite) if data.invite else "", entropy=data.entropy or "")
        secret = None
        if data.webhook is not None:  # registered by the token's hash before the join is sent: the seat is not
            await check_webhook(gateway, data.webhook)  # known yet, and the worker may read the join at once
            secret = await gateway.auth.derived(f"webhook:{game_id}:{hashed}")
            await registry.register(gateway.stores.events, game_id, registry.seat_field(hashed),
                                    registry.Registration(data.webhook, secret))
        # The engine picks the lowest free seat when none is named, on the game as it is: no seat_taken race.
        reply = await gateway.commands.submit(envelope(command_id, game_id, body))
        if data.webhook is not None and reply.status != "accepted":  # this token never takes a seat
            await registry.forget(gateway.stores.events, game_id, registry.seat_field(hashed))
        raise_if_rejected(reply)
        return Joined(game_id, reply.seat, token, reply.version, secret)

    @delete("/{seat:int}", tags=["lobby"], status_code=200)
    async def leave(self, request: Request, game_id: FromPath[str], seat: FromPath[int], gateway: GatewayDep) -> Left:
        """Give the seat back before the game starts (its token stops working); someone else may take it. After
        the start, the seat resigns (as ``.../resign``: bots play its decisions, or the game ends)."""
        hashed = await gateway.auth.authorize(game_id, seat, bearer(request))
        reply = await gateway.commands.submit(envelope(uuid.uuid4().hex, game_id, LeaveSeat(), seat=seat,
                                                       token_hash=hashed))
        raise_if_rejected(reply)
        return Left(game_id, seat, reply.version)

    @post("/{seat:int}/rematch", tags=["lobby"], status_code=201)
    async def rematch(self, request: Request, game_id: FromPath[str], seat: FromPath[int], gateway: GatewayDep,
                      entropy: FromQuery[str | None] = None) -> Rematch:
        """A new game of a finished one, with the same title, options and players: each player calls this with
        its seat token and gets its own seat (the one it had) and token in the same rematch; the last one in
        starts it. ``entropy`` (64 random hex digits): the seat's share of the rematch's chance, as when
        joining. The rematch of a private game is private."""
        hashed = await gateway.auth.authorize(game_id, seat, bearer(request))
        entry = await gateway.reads.lobby_entry(game_id)
        if entry.status != "over":
            raise ApiError(409, "game_not_over", "a rematch follows a finished game")
        [(_, fields)] = await gateway.reads.events.xrange(keys.game_stream(game_id), count=1)
        first = table_event_decoder.decode(event_envelope_decoder.decode(fields[b"e"]).payload)
        # one rematch per game, whoever asks first
        new_id = await gateway.commands.game_for_request(f"rematch:{game_id}")
        # the rematch of a private game is private (its seats join with the invite code derived for it, which no
        # one else learns): nothing public names a private game
        invite = (await gateway.auth.derived(f"invite:{new_id}"))[:12] if first.invite_hash else ""
        invite_hash = token_hash(invite) if invite else ""
        # the table's options too (its creation took them out of the game's): the same undo policy and clocks
        options = {**first.options, "undo": first.undo,
                   **({"clock": msgspec.to_builtins(first.clock)} if first.clock else {})}
        # the same table, the same creator: its token manages the rematch as it did the game (the game's webhook,
        # a cancel before the start), and the game's webhook carries over with its secret, registered before the
        # creation is sent and only by the call that creates it (a later call must not undo the creator's change)
        body = CreateGame(first.game, entry.title, first.seats, options, rematch_of=game_id,
                          invite_hash=invite_hash, creator_hash=first.creator_hash)
        events = gateway.stores.events
        hook = None
        if first.creator_hash and not await events.exists(keys.game_stream(new_id)):
            hook = await registry.registration(events, game_id, registry.GAME)
            if hook is not None:
                await registry.register(events, new_id, registry.GAME, hook)
        reply = await gateway.commands.submit(envelope(f"rematch-{game_id}", new_id, body))
        if reply.status != "accepted" and reply.code != "game_exists":
            if hook is not None:
                await registry.forget(events, new_id, registry.GAME)
            raise_if_rejected(reply)
        # the server's bots sit again where they sat, with their strategies (one command per strategy, its id the
        # same for every player's call: taken once)
        bots: dict[str, list[int]] = {}
        for info in entry.seats:
            if info.bot is not None:
                bots.setdefault(info.bot, []).append(info.seat)
        for strategy, bot_seats in sorted(bots.items()):
            seated = await gateway.commands.submit(envelope(
                f"rematch-bots-{strategy}", new_id, SeatBots(strategy, tuple(bot_seats), invite_hash=invite_hash)))
            if seated.status != "accepted" and seated.code not in ("seat_taken", "game_started"):
                raise_if_rejected(seated)
        token = await gateway.auth.derived(f"rematch:{new_id}:{seat}:{hashed}")
        name = entry.seats[seat].name or f"player {seat}"
        join = JoinSeat(name, token_hash(token), seat, invite_hash=invite_hash, entropy=entropy or "")
        # The same player in the same seat: its webhook (URL and secret) carries over, registered before the join
        # is sent (the worker may read the join at once). The game's own carried over above (README, Webhooks).
        carried = await registry.registration(events, game_id, registry.seat_field(hashed))
        if carried is not None:
            await registry.register(events, new_id, registry.seat_field(token_hash(token)), carried)
        reply = await gateway.commands.submit(envelope(f"rematch-join-{seat}", new_id, join))
        if carried is not None and reply.status != "accepted":
            await registry.forget(events, new_id, registry.seat_field(token_hash(token)))
        raise_if_rejected(reply)
        return Rematch(new_id, seat, token, reply.version)

    @get("/{seat:int}/webhook", tags=["seat"])
    async def seat_webhook(self, request: Request, game_id: FromPath[str], seat: FromPath[int],
                           gateway: GatewayDep) -> Webhook:
        """The seat's webhook URL, with its token (README, Webhooks). 404 ``no_webhook`` when it has none. The
        secret is never shown again."""
        hashed = await gateway.auth.authorize(game_id, seat, bearer(request))
        found = await registry.registration(gateway.stores.events, game_id, registry.seat_field(hashed))
        if found is None:
            raise no_webhook(seat)
        return Webhook(game_id, seat, found.url)

    @put("/{seat:int}/webhook", tags=["seat"], dto=strict(WebhookRequest), return_dto=None)
    async def put_seat_webhook(self, request: Request, game_id: FromPath[str], seat: FromPath[int],
                               data: JSONBody[WebhookRequest], gateway: GatewayDep) -> Webhook:
        """Sets or changes the seat's webhook URL, with its token: the answer holds its new secret (a change
        rotates it). The seat's notices of the events from now on go there."""
        hashed = await gateway.auth.authorize(game_id, seat, bearer(request))
        return await set_webhook(gateway, game_id, seat, registry.seat_field(hashed), data)

    @delete("/{seat:int}/webhook", tags=["seat"], status_code=200)
    async def delete_seat_webhook(self, request: Request, game_id: FromPath[str], seat: FromPath[int],
                                  gateway: GatewayDep) -> Webhook:
        """Removes the seat's webhook, with its token: nothing more is posted to it (notices not delivered yet are
        dropped). 404 ``no_webhook`` when it has none."""
        hashed = await gateway.auth.authorize(game_id, seat, bearer(request))
        removed = await registry.remove(gateway.stores.events, game_id, registry.seat_field(hashed))
        if removed is None:
            raise no_webhook(seat)
        return Webhook(game_id, seat, removed.url)

    @get("/{seat:int}/view", tags=["seat"])
    async def seat_view(self, request: Request, game_id: FromPath[str], seat: FromPath[int], gateway: GatewayDep,
                        min_version: FromQuery[int] = 0, at: FromQuery[int | None] = None) -> Response[TableView]:
        """What this seat sees now (its secrets included), with the commands it may send. ``at``: what it saw at
        version ``at`` (1 to the game's version, else 400 ``bad_version``), never more than it could then; once
        the game is over, anyone may read any seat's view at any version, without a token."""
        in_range(min_version, "min_version")
        if at is not None:
            return json_response(encoder.encode(await view_at(request, gateway, game_id, seat, at)))
        await gateway.auth.authorize(game_id, seat, bearer(request))
        if min_version:
            await gateway.reads.wait_projected(game_id, min_version)
        return json_response(await gateway.reads.view_bytes(game_id, seat))

    @get("/{seat:int}/legal", tags=["seat"])
    async def seat_legal(self, request: Request, game_id: FromPath[str], seat: FromPath[int], gateway: GatewayDep,
                         at: FromQuery[int | None] = None) -> LegalCommands:
        """The commands this seat may send now; post any of them back as ``command``. ``at``: the commands it
        could have sent at version ``at`` (as ``view?at=``)."""
        if at is not None:
            view = await view_at(request, gateway, game_id, seat, at)
            return LegalCommands(game_id, seat, view.version, view.legal)
        await gateway.auth.authorize(game_id, seat, bearer(request))
        view = _view_decoder.decode(await gateway.reads.view_bytes(game_id, seat))
        return LegalCommands(game_id, seat, view.version, view.legal)

    @get("/{seat:int}/history", tags=["seat"])
    async def seat_history(self, request: Request, game_id: FromPath[str], seat: FromPath[int], gateway: GatewayDep,
                           after: FromQuery[int] = 0, limit: FromQuery[int] = 100) -> HistoryPage:
        await gateway.auth.authorize(game_id, seat, bearer(request))
        return await gateway.reads.history(game_id, seat, after, limit)

    @post("/{seat:int}/commands", tags=["seat"], status_code=200, dto=strict(CommandRequest), return_dto=None)
    async def send_command(self, request: Request, game_id: FromPath[str], seat: FromPath[int],
                           data: JSONBody[CommandRequest], gateway: GatewayDep) -> Reply:
        """Send one command. 200: accepted, with the new version. 422: refused by the rules (``code``).
        Resending the same ``command_id`` returns the first answer and changes nothing."""
        hashed = await gateway.auth.authorize(game_id, seat, bearer(request))
        return await send_checked(gateway, game_id, seat, hashed, data)

    @post("/{seat:int}/undo", tags=["seat"], status_code=200, dto=strict(UndoCommandRequest), return_dto=None)
    async def request_undo(self, request: Request, game_id: FromPath[str], seat: FromPath[int],
                           data: JSONBody[UndoCommandRequest], gateway: GatewayDep) -> Reply:
        """Take back this seat's last command(s): back to ``to_version`` (one of ``undo.to_versions`` in its view).
        Granted at once when every move since is this seat's own; with the table's policy ``with_consent`` the
        other seats are asked otherwise (``undo.request`` in every view). 422 ``undo_not_allowed`` across a chance
        outcome or a reveal, or when the policy forbids it; 409 ``undo_pending`` while a request waits. Resending
        the same ``command_id`` returns the first answer and changes nothing."""
        return await self._seat_command(request, game_id, seat, data.command_id, data.expected_version,
                                        RequestUndo(data.to_version), gateway)

    @post("/{seat:int}/undo/accept", tags=["seat"], status_code=200, dto=strict(UndoAnswerRequest),
          return_dto=None)
    async def accept_undo(self, request: Request, game_id: FromPath[str], seat: FromPath[int],
                          data: JSONBody[UndoAnswerRequest], gateway: GatewayDep) -> Reply:
        """Agree to the pending undo request (this seat must be among ``undo.request.asked``); the last agreement
        applies the undo."""
        return await self._seat_command(request, game_id, seat, data.command_id, data.expected_version, AcceptUndo(),
                                        gateway)

    @post("/{seat:int}/undo/decline", tags=["seat"], status_code=200, dto=strict(UndoAnswerRequest),
          return_dto=None)
    async def decline_undo(self, request: Request, game_id: FromPath[str], seat: FromPath[int],
                           data: JSONBody[UndoAnswerRequest], gateway: GatewayDep) -> Reply:
        """Refuse the pending undo request (it ends); sent by the requester, it withdraws its request."""
        return await self._seat_command(request, game_id, seat, data.command_id, data.expected_version,
                                        DeclineUndo(), gateway)

    @post("/{seat:int}/resign", tags=["seat"], status_code=200, dto=strict(ResignRequest), return_dto=None)
    async def resign(self, request: Request, game_id: FromPath[str], seat: FromPath[int],
                     data: JSONBody[ResignRequest], gateway: GatewayDep) -> Reply:
        """Leave the game in play for good: bots play this seat's decisions (it wins nothing), or the game ends
        at once when one seat is left in it. 422 when the game is not in play (``DELETE .../seats/{seat}`` gives
        a seat back before the start). Resending the same ``command_id`` returns the first answer."""
        return await self._seat_command(request, game_id, seat, data.command_id, data.expected_version, Resign(),
                                        gateway)

    async def _seat_command(self, request: Request, game_id: str, seat: int, command_id: str,
                            expected_version: int | None, command: Any, gateway: Gateway) -> Reply:
        hashed = await gateway.auth.authorize(game_id, seat, bearer(request))
        _check_command_id(command_id, expected_version)
        await gateway.reads.game_name(game_id)  # 404 for a game that does not exist: nothing is queued for it
        return await _submit(gateway, game_id, seat, hashed, command_id, command, expected_version)


async def send_checked(gateway: Gateway, game_id: str, seat: int, hashed: str, data: CommandRequest) -> Reply:
    """A seat's command, its token already checked (``hashed``): its id and the command checked, queued and waited
    for. The route's steps after the token, shared with its fast path (``services.gateway.fastpath``)."""
    _check_command_id(data.command_id, data.expected_version)
    game = await gateway.reads.game_name(game_id)
    try:
        command = convert(game, data.command)
    except PlatformCommand as exc:
        raise ApiError(403, "platform_command", str(exc)) from None
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise ApiError(400, "bad_command", f"not a command of {game}: {exc}") from None
    return await _submit(gateway, game_id, seat, hashed, data.command_id, command, data.expected_version)


def _check_command_id(command_id: str, expected_version: int | None) -> None:
    if not 1 <= len(command_id) <= 100:
        raise ApiError(400, "bad_command_id", "command_id must have 1 to 100 characters")
    if expected_version is not None:
        in_range(expected_version, "expected_version")


async def _submit(gateway: Gateway, game_id: str, seat: int, hashed: str, command_id: str, command: Any,
                  expected_version: int | None) -> Reply:
    """A seat's command queued with its token, answered as the engine decided (200 accepted, else the error)."""
    env = envelope(command_id, game_id, command, seat=seat, token_hash=hashed, expected_version=expected_version)
    reply = await gateway.commands.submit(env)
    raise_if_rejected(reply)
    await gateway.auth.learn(game_id)  # accepted: the game has most likely started, its tokens are then final
    return reply
