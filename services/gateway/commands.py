"""How the gateway queues a command and waits for its outcome.

Commands go to ``souk:commands``; the engine's reply comes back on this gateway's reply channel (``Replies``),
then the gateway waits for the views to catch up (``Updates``), so that a client reading after an accepted
command sees it.
"""

from __future__ import annotations

import uuid
from typing import Any

import msgspec
import structlog

from contracts.envelope import CommandEnvelope, Reply
from contracts.table import CLOCK_COMMANDS, TABLE_COMMANDS, UNDO_COMMANDS, Resign
from services.gateway.auth import digest
from services.gateway.listeners import Replies
from services.gateway.stores import Reads
from services.runtime import logs, tracing
from services.store import keys
from services.store.codec import command_decoder, encoder

log = structlog.get_logger("souk.gateway")

REQUEST_TTL_S = 7 * 86_400  # how long a create's request id keeps its game id


class Commands:
    def __init__(self, replies: Replies, reads: Reads) -> None:
        self.replies = replies
        self.reads = reads

    async def submit(self, env: CommandEnvelope) -> Reply:
        """Queues the command, waits for the engine's answer and, if accepted, for the views to catch up. The
        command carries the request's ``traceparent`` (``services.runtime.tracing``): the engine and the projector
        log its ``trace_id`` too."""
        if not env.traceparent:
            env = msgspec.structs.replace(env, traceparent=tracing.current.get())
        with logs.bound(game_id=env.game_id, seat=env.seat, command_id=env.command_id):
            reply = await self.replies.send(env)
            log.debug("command_answered", status=reply.status, code=reply.code, version=reply.version)
            if reply.status == "accepted":
                await self.reads.wait_projected(env.game_id, reply.version)
        return reply

    async def game_for_request(self, request_id: str) -> str:
        """The game id a create request gets: the same for every resend of one ``request_id`` (kept a week)."""
        events = self.reads.events
        key = keys.request(f"create:{digest(request_id)}")
        await events.set(key, uuid.uuid4().hex[:12], nx=True, ex=REQUEST_TTL_S)
        return (await events.get(key)).decode()


class PlatformCommand(ValueError):
    """A client sent one of the clock's commands (``CLOCK_COMMANDS``: Timeout, Tick, PlayFor): the platform's alone
    (the clock worker sends them, for no seat); the routes answer 403 ``platform_command``."""


def convert(game: str, command: dict[str, Any]) -> Any:
    """Validates a command body against the game's commands (strict, like the engine) before it is queued."""
    decoded = command_decoder(game).decode(encoder.encode(command))
    if isinstance(decoded, CLOCK_COMMANDS):
        raise PlatformCommand(f"{decoded.__struct_config__.tag} is the platform's (its clock worker sends it): no "
                              "client may send it")
    if isinstance(decoded, Resign):
        raise msgspec.ValidationError("resigning goes to POST /games/{id}/seats/{seat}/resign")
    if isinstance(decoded, TABLE_COMMANDS):
        raise msgspec.ValidationError("table commands go to /games and /games/{id}/seats")
    if isinstance(decoded, UNDO_COMMANDS):
        raise msgspec.ValidationError("undo commands go to /games/{id}/seats/{seat}/undo (and .../undo/accept, "
                                      ".../undo/decline)")
    return decoded


def envelope(command_id: str, game_id: str, body: Any, **fields: Any) -> CommandEnvelope:
    """A command envelope around ``body`` (a Struct of contracts/)."""
    return CommandEnvelope(command_id, game_id, msgspec.Raw(encoder.encode(body)), **fields)
