"""A game's seats (``/games/{game_id}/seats``): taking one, giving it back, a rematch; and what a seat does with
its token: its view, its legal commands, its history, its commands."""

from __future__ import annotations

import secrets
import uuid

import msgspec
from litestar import Request, Response, delete, get, post

from contracts.api import CommandRequest, Joined, JoinRequest, LegalCommands, Left, Rematch
from contracts.envelope import Reply
from contracts.readmodels import HistoryPage, TableView
from contracts.table import CreateGame, JoinSeat, LeaveSeat
from services.gateway.auth import bearer, check_request_id, digest, token_hash
from services.gateway.commands import convert, envelope
from services.gateway.dependencies import AuthDep, CommandsDep, ReadsDep
from services.gateway.errors import ApiError, raise_if_rejected
from services.gateway.inputs import in_range, strict
from services.gateway.openapi import AllowingController
from services.store import keys
from services.store.codec import event_envelope_decoder, table_event_decoder

_view_decoder = msgspec.json.Decoder(TableView)


def json_response(raw: bytes) -> Response:
    return Response(content=raw, media_type="application/json")


class SeatsController(AllowingController):
    path = "/games/{game_id:str}/seats"

    @post("/", tags=["lobby"], dto=strict(JoinRequest), return_dto=None)
    async def join(self, game_id: str, data: JoinRequest, reads: ReadsDep, auth: AuthDep,
                   commands: CommandsDep) -> Joined:
        """Take a seat (the lowest free one unless ``seat`` is given). Keep the returned token secret. With a
        ``request_id``, a resent request answers the same seat and token instead of taking another seat."""
        if data.request_id is None:
            token, command_id = secrets.token_urlsafe(24), uuid.uuid4().hex
        elif check_request_id(data.request_id):
            token = await auth.token_for_request(game_id, data.request_id)
            command_id = f"join-{digest(data.request_id)}"
        await reads.game_name(game_id)  # 404 for a game that does not exist: nothing is queued for it
        body = JoinSeat(data.name, token_hash(token), data.seat,
                        invite_hash=token_hash(data.invite) if data.invite else "")
        # The engine picks the lowest free seat when none is named, on the game as it is: no seat_taken race.
        reply = await commands.submit(envelope(command_id, game_id, body))
        raise_if_rejected(reply)
        return Joined(game_id, reply.seat, token, reply.version)

    @delete("/{seat:int}", tags=["lobby"], status_code=200)
    async def leave(self, request: Request, game_id: str, seat: int, auth: AuthDep, commands: CommandsDep) -> Left:
        """Give the seat back before the game starts (its token stops working); someone else may take it."""
        hashed = await auth.authorize(game_id, seat, bearer(request))
        reply = await commands.submit(envelope(uuid.uuid4().hex, game_id, LeaveSeat(), seat=seat, token_hash=hashed))
        raise_if_rejected(reply)
        return Left(game_id, seat, reply.version)

    @post("/{seat:int}/rematch", tags=["lobby"], status_code=201)
    async def rematch(self, request: Request, game_id: str, seat: int, reads: ReadsDep, auth: AuthDep,
                      commands: CommandsDep) -> Rematch:
        """A new game of a finished one, with the same title, options and players: each player calls this with
        its seat token and gets its own seat (the one it had) and token in the same rematch; the last one in
        starts it."""
        hashed = await auth.authorize(game_id, seat, bearer(request))
        entry = await reads.lobby_entry(game_id)
        if entry.status != "over":
            raise ApiError(409, "game_not_over", "a rematch follows a finished game")
        [(_, fields)] = await reads.events.xrange(keys.game_stream(game_id), count=1)
        first = table_event_decoder.decode(event_envelope_decoder.decode(fields[b"e"]).payload)
        new_id = await commands.game_for_request(f"rematch:{game_id}")  # one rematch per game, whoever asks first
        body = CreateGame(first.game, entry.title, first.seats, first.options, rematch_of=game_id)
        reply = await commands.submit(envelope(f"rematch-{game_id}", new_id, body))
        if reply.status != "accepted" and reply.code != "game_exists":
            raise_if_rejected(reply)
        token = await auth.derived(f"rematch:{new_id}:{seat}:{hashed}")
        name = entry.seats[seat].name or f"player {seat}"
        join = JoinSeat(name, token_hash(token), seat)
        reply = await commands.submit(envelope(f"rematch-join-{seat}", new_id, join))
        raise_if_rejected(reply)
        return Rematch(new_id, seat, token, reply.version)

    @get("/{seat:int}/view", tags=["seat"])
    async def seat_view(self, request: Request, game_id: str, seat: int, reads: ReadsDep, auth: AuthDep,
                        min_version: int = 0) -> Response[TableView]:
        """What this seat sees now (its secrets included), with the commands it may send."""
        in_range(min_version, "min_version")
        await auth.authorize(game_id, seat, bearer(request))
        if min_version:
            await reads.wait_projected(game_id, min_version)
        return json_response(await reads.view_bytes(game_id, seat))

    @get("/{seat:int}/legal", tags=["seat"])
    async def seat_legal(self, request: Request, game_id: str, seat: int, reads: ReadsDep,
                         auth: AuthDep) -> LegalCommands:
        """The commands this seat may send now; post any of them back as ``command``."""
        await auth.authorize(game_id, seat, bearer(request))
        view = _view_decoder.decode(await reads.view_bytes(game_id, seat))
        return LegalCommands(game_id, seat, view.version, view.legal)

    @get("/{seat:int}/history", tags=["seat"])
    async def seat_history(self, request: Request, game_id: str, seat: int, reads: ReadsDep, auth: AuthDep,
                           after: int = 0, limit: int = 100) -> HistoryPage:
        await auth.authorize(game_id, seat, bearer(request))
        return await reads.history(game_id, seat, after, limit)

    @post("/{seat:int}/commands", tags=["seat"], status_code=200, dto=strict(CommandRequest), return_dto=None)
    async def send_command(self, request: Request, game_id: str, seat: int, data: CommandRequest, reads: ReadsDep,
                           auth: AuthDep, commands: CommandsDep) -> Reply:
        """Send one command. 200: accepted, with the new version. 422: refused by the rules (``code``).
        Resending the same ``command_id`` returns the first answer and changes nothing."""
        hashed = await auth.authorize(game_id, seat, bearer(request))
        if not 1 <= len(data.command_id) <= 100:
            raise ApiError(400, "bad_command_id", "command_id must have 1 to 100 characters")
        game = await reads.game_name(game_id)
        try:
            command = convert(game, data.command)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise ApiError(400, "bad_command", f"not a command of {game}: {exc}") from None
        if data.expected_version is not None:
            in_range(data.expected_version, "expected_version")
        env = envelope(data.command_id, game_id, command, seat=seat, token_hash=hashed,
                       expected_version=data.expected_version)
        reply = await commands.submit(env)
        raise_if_rejected(reply)
        return reply
