"""The gateway's tokens: seat tokens checked against the hashes the stores keep, the creator's token, and the
secrets derived from the platform's secret (a resent request answers the same token).

The raw token never leaves the client and this process: the stores keep its SHA-256 (``token_hash``), commands
carry that hash. A seat's token hash comes from the read store (``souk:seats:{game}``, kept by the projector) or,
when that lags or was lost, from the game's first events in the event store (``Reads.seats_of``).

Once a game has started its token hashes never change (``Reads.started_seats``): the gateway then keeps them
(``Auth.learn``, after a seat's command was accepted) and checks a seat's token without a read (one HGET less a
command). They are learnt only from the event store's ``GameStarted`` and the ``SeatJoined``/``SeatLeft`` before it,
never from the read store (which may lag) nor from a command's answer (a resent command is answered as it was).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from litestar import Request
from redis.asyncio import Redis

from contracts.api import REQUEST_ID_LENGTH
from services.gateway.errors import ApiError
from services.gateway.inputs import in_range
from services.gateway.stores import Reads
from services.store import keys
from services.store.lru import Lru


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def bearer(request: Request) -> str | None:
    """The request's token: ``Authorization: Bearer <token>`` (an HTTP route takes it nowhere else)."""
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return None


def refuse_token_in_query(request: Request) -> None:
    """Litestar's ``before_request``: a ``?token=`` in an HTTP route's URL is refused, 400 ``token_in_query``: a URL
    ends up in proxies' and servers' access logs. Only a WebSocket handshake takes one (a browser's WebSocket
    cannot set headers)."""
    if "token" in request.query_params:
        raise ApiError(400, "token_in_query", "a token in the URL ends up in logs: send it as 'Authorization: "
                                              "Bearer <token>' (only the WebSockets take ?token=)")


def check_request_id(request_id: str) -> bool:
    low, high = REQUEST_ID_LENGTH
    if not low <= len(request_id) <= high:
        raise ApiError(400, "bad_request_id", f"a request_id has {low} to {high} characters: make it random")
    return True


def digest(request_id: str) -> str:
    """What the store and the command ids hold of a request id: never the id itself (a join's derives a token)."""
    return hashlib.sha256(request_id.encode()).hexdigest()[:32]


class Auth:
    """Checks seat tokens, and derives the tokens the gateway hands out (``events``: the event store's Redis,
    which keeps the platform's secret)."""

    def __init__(self, reads: Reads) -> None:
        self.reads = reads
        self.events: Redis = reads.events
        self._secret: bytes | None = None  # derives the tokens of joins that carry a request id
        self._started: Lru[str, dict[int, str]] = Lru(10_000)  # a started game -> its seats' token hashes (final)
        self._learning: set[str] = set()

    async def authorize(self, game_id: str, seat: int, token: str | None, seen: bool = True) -> str:
        """Checks the seat's token; returns its hash (what commands carry). ``seen``: the seat is connected for the
        presence window from now (a request with its token; a socket holds its presence otherwise)."""
        in_range(seat, "seat")
        if not token:
            raise ApiError(401, "missing_token", "send the seat token as 'Authorization: Bearer <token>'")
        final = self._started.get(game_id)
        if final is not None:
            expected = final.get(seat)  # None: a bot's seat, or no seat of the game
            if expected is None:
                raise ApiError(401, "bad_token", "the seat token is not valid for this seat")
        elif (raw := await self.reads.seat_token_hash(game_id, seat)) is not None:
            expected = raw.decode()
        else:  # not projected yet, or the read store was lost: the events hold the token hashes
            expected = (await self.reads.seats_of(game_id))[1].get(seat)
            if expected is None:
                raise ApiError(401, "bad_token", "the seat token is not valid for this seat")
        hashed = token_hash(token)
        if not secrets.compare_digest(expected, hashed):
            raise ApiError(401, "bad_token", "the seat token is not valid for this seat")
        if seen and self.reads.presence is not None:
            await self.reads.presence.seen(game_id, seat)
        return hashed

    async def learn(self, game_id: str) -> None:
        """Keeps the game's token hashes from now on if it has started (read once from the event store; nothing
        kept otherwise). Called after a seat's command was accepted: the game has most likely started. A failed
        read is no failure: the tokens are read as before."""
        if game_id in self._learning or self._started.get(game_id) is not None:
            return
        self._learning.add(game_id)
        try:
            final = await self.reads.started_seats(game_id)
        except Exception:  # noqa: BLE001 - the event store away or the game gone: nothing kept
            return
        finally:
            self._learning.discard(game_id)
        if final is not None:
            self._started.put(game_id, final)

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
