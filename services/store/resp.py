"""A lean asyncio Redis connection for the hot paths, with automatic pipelining.

Every command issued during one turn of the event loop goes out in a single write, and the replies are matched
to their callers in order (Redis answers each connection in order). Many concurrent callers therefore cost one
syscall each way instead of one per command, and a command costs a few microseconds of Python instead of the
tens that redis-py's general client spends (connection pool, retries, per-command parsing hooks). A big command
(``SEND_AT_ONCE``) goes out at once: Redis works on it while its caller computes the next one.

Used where Souk sends many small commands: the engine's and the projector's batch scripts, the gateway's hot path
(a seat's token, the game's name, queuing a command, the views pushed to sockets) and the benchmark driver.
Everything else (FastStream's consumer groups, the gateway's other routes, tests) uses redis-py. Errors are
redis-py's exception classes, so callers handle both clients alike.

``Subscriber`` is the pub/sub side: one connection whose pushed messages go to a callback (the gateway's listeners
of replies and view updates, the benchmark's).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

import hiredis
from redis.connection import parse_url
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoPermissionError, NoScriptError, ResponseError

_pack = hiredis.pack_command
SEND_AT_ONCE = 32 * 1024  # a command this big (bytes) is written at once, not at the end of the loop's turn


def _error(reply: hiredis.ReplyError) -> ResponseError:
    text = str(reply)
    if text.startswith("NOSCRIPT"):
        return NoScriptError(text)
    if text.startswith("NOPERM"):
        return NoPermissionError(text)
    return ResponseError(text)


class _Protocol(asyncio.Protocol):
    def __init__(self, on_reply: Callable[[Any], None], on_lost: Callable[[_Protocol, Exception], None]) -> None:
        self.reader = hiredis.Reader(replyError=hiredis.ReplyError)
        self.on_reply = on_reply
        self.on_lost = on_lost
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.reader.feed(data)
        gets, on_reply = self.reader.gets, self.on_reply
        reply = gets()
        while reply is not False:
            on_reply(reply)
            reply = gets()

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        self.on_lost(self, RedisConnectionError(f"connection to Redis lost: {exc or 'closed'}"))


async def _open(params: dict, on_reply, on_lost) -> _Protocol:
    loop = asyncio.get_running_loop()
    if "path" in params:
        _, proto = await loop.create_unix_connection(lambda: _Protocol(on_reply, on_lost), params["path"])
    else:
        _, proto = await loop.create_connection(lambda: _Protocol(on_reply, on_lost),
                                                params.get("host", "localhost"), params.get("port", 6379))
    return proto


def _hello(params: dict) -> list[tuple]:
    """The commands a new connection sends first: AUTH, SELECT."""
    out: list[tuple] = []
    if params.get("password"):
        out.append(("AUTH", *([params["username"]] if params.get("username") else []), params["password"]))
    if params.get("db"):
        out.append(("SELECT", params["db"]))
    return out


class Resp:
    """One auto-pipelined connection. ``await resp.call("HGET", key, field)``; it reconnects on the next call
    after a lost connection (the calls that were in flight fail with ``redis.exceptions.ConnectionError``)."""

    def __init__(self, url: str | None = None, **params: Any) -> None:
        self.params = parse_url(url) if url else params
        self._proto: _Protocol | None = None
        self._waiting: deque[asyncio.Future] = deque()
        self._buffer: list[bytes] = []
        self._flush_scheduled = False
        self._connecting: asyncio.Lock | None = None
        self._handshaking: _Protocol | None = None

    @classmethod
    def like(cls, client: Any) -> Resp:
        """A lean connection to the server a redis-py client talks to."""
        kw = client.connection_pool.connection_kwargs
        return cls(**{k: kw[k] for k in ("host", "port", "path", "db", "username", "password") if kw.get(k)})

    async def call(self, *args: Any) -> Any:
        if self._proto is None or self._proto.transport is None:
            await self._connect()
        return await self._send(args)

    def _send(self, args: tuple) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        self._waiting.append(future)
        packed = _pack(args)
        self._buffer.append(packed)
        if len(packed) >= SEND_AT_ONCE:  # a big write gains nothing by waiting: Redis starts on it meanwhile
            self._flush()
        elif not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)
        return future

    def _flush(self) -> None:
        self._flush_scheduled = False
        buffer, self._buffer = self._buffer, []
        if buffer and self._proto is not None and self._proto.transport is not None:
            self._proto.transport.write(b"".join(buffer))


    def _on_reply(self, reply: Any) -> None:
        future = self._waiting.popleft()
        if future.done():  # its caller was cancelled
            return
        if isinstance(reply, hiredis.ReplyError):
            future.set_exception(_error(reply))
        else:
            future.set_result(reply)

    def _on_lost(self, proto: _Protocol, exc: Exception) -> None:
        if proto is not self._proto and proto is not self._handshaking:
            return  # a connection already given up (aclose): its calls were failed then
        self._proto = self._handshaking = None
        self._fail_waiting(exc)

    def _fail_waiting(self, exc: Exception) -> None:
        waiting, self._waiting = self._waiting, deque()
        self._buffer = []
        for future in waiting:
            if not future.done():
                future.set_exception(exc)

    async def _connect(self) -> None:
        """Opens a connection and says hello (AUTH, SELECT) on it before any caller may use it: callers wait
        on the lock meanwhile, and a hello that fails closes the connection."""
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            if self._proto is not None and self._proto.transport is not None:
                return
            try:
                proto = await _open(self.params, self._on_reply, self._on_lost)
            except OSError as exc:
                raise RedisConnectionError(f"cannot connect to Redis ({self.params.get('host')}:"
                                           f"{self.params.get('port')}): {exc}") from exc
            self._handshaking = proto
            try:
                for hello in _hello(self.params):
                    future = asyncio.get_running_loop().create_future()
                    self._waiting.append(future)
                    proto.transport.write(_pack(hello))
                    await future
            except BaseException:
                self._handshaking = None
                if proto.transport is not None:
                    proto.transport.close()
                self._fail_waiting(RedisConnectionError("connection to Redis closed: its hello failed"))
                raise
            self._handshaking = None
            self._proto = proto

    async def call_again_if_lost(self, *args: Any) -> Any:
        """``call``, sent once more on a new connection when the connection was lost under it (Redis restarted), as
        redis-py's ``Retry(NoBackoff(), 1)`` does: for reads, and for writes that may be applied twice (a command
        queued again is answered by the engine, not applied again)."""
        try:
            return await self.call(*args)
        except RedisConnectionError:
            return await self.call(*args)

    async def calls(self, *commands: tuple) -> list[Any]:
        """Several commands sent together (one write, one round trip), their replies in order: the first error
        among them is raised once all have answered. Sent once more on a new connection when the connection was
        lost under them (for reads, as ``call_again_if_lost``)."""
        for attempt in (1, 2):
            if self._proto is None or self._proto.transport is None:
                await self._connect()
            replies, failed = [], None
            for future in [self._send(c) for c in commands]:  # answered in order: no task, no gather
                try:
                    replies.append(await future)
                except Exception as exc:  # noqa: BLE001 - every reply is awaited, the first error raised
                    failed = failed or exc
            if failed is None:
                return replies
            if attempt == 2 or not isinstance(failed, RedisConnectionError):
                raise failed
        raise AssertionError("unreachable")

    async def evalsha(self, sha: str, script: str, *args: Any) -> Any:
        """EVALSHA with no keys (Souk's scripts take keys as arguments: single Redis); loads the script if the
        server does not have it (a restart) and runs it again — nothing ran the first time."""
        try:
            return await self.call("EVALSHA", sha, 0, *args)
        except NoScriptError:
            await self.call("SCRIPT", "LOAD", script)
            return await self.call("EVALSHA", sha, 0, *args)

    async def aclose(self) -> None:
        """Closes the connection; calls still waiting fail with ``ConnectionError``. A later call reconnects."""
        proto, self._proto = self._proto, None
        if proto is not None and proto.transport is not None:
            proto.transport.close()
        self._fail_waiting(RedisConnectionError("connection to Redis closed"))


class Subscriber:
    """A pub/sub connection: every message on the channels and patterns subscribed goes to
    ``on_message(channel, data)``. It does not reconnect: ``lost`` is resolved with the error when the connection
    ends, and the owner starts a new one (the gateway's listeners, ``services.gateway.listeners``, then catch up).

    ``start`` returns once Redis confirmed every subscription (a refusal, NOPERM say, raises); ``heard`` is the
    monotonic time of the last thing Redis sent, ``answers`` how many replies it has sent (a count, not a time: under
    uvloop the loop's clock moves in whole milliseconds, and a PONG read in its PING's tick leaves ``heard``
    unchanged), and ``ping`` asks for something (a connection silent for long may be dead without knowing it). A message costs a hiredis parse and a call, where redis-py's ``PubSub`` spent
    several times that (its ``get_message`` loop with a timeout per message)."""

    def __init__(self, url: str | None, on_message: Callable[[bytes, bytes], None], **params: Any) -> None:
        self.params = parse_url(url) if url else params
        self.on_message = on_message
        self._proto: _Protocol | None = None
        self.lost: asyncio.Future | None = None
        self.heard = 0.0
        self.answers = 0
        self._expected = 0  # subscription confirmations still to come
        self._subscribed: asyncio.Future | None = None

    @classmethod
    def like(cls, client: Any, on_message: Callable[[bytes, bytes], None]) -> Subscriber:
        """A subscriber on the server a redis-py client talks to."""
        kw = client.connection_pool.connection_kwargs
        return cls(None, on_message,
                   **{k: kw[k] for k in ("host", "port", "path", "db", "username", "password") if kw.get(k)})

    async def start(self, channels: tuple[str, ...] = (), patterns: tuple[str, ...] = ()) -> None:
        loop = asyncio.get_running_loop()
        self.lost = loop.create_future()
        self._subscribed = loop.create_future()
        self._expected = len(channels) + len(patterns)
        try:
            self._proto = await _open(self.params, self._on_reply, self._on_lost)
        except OSError as exc:
            raise RedisConnectionError(f"cannot connect to Redis ({self.params.get('host')}:"
                                       f"{self.params.get('port')}): {exc}") from exc
        self.heard = loop.time()
        write = self._proto.transport.write
        for hello in _hello(self.params):
            write(_pack(hello))
        if channels:
            write(_pack(("SUBSCRIBE", *channels)))
        if patterns:
            write(_pack(("PSUBSCRIBE", *patterns)))
        if not self._expected:
            self._subscribed.set_result(None)
        waiting = {self._subscribed, self.lost}
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if not self._subscribed.done():
            raise self.lost.result()
        self._subscribed.result()  # a refused subscription raises here

    def ping(self) -> None:
        """Asks Redis for an answer (``heard`` moves when it comes)."""
        if self._proto is not None and self._proto.transport is not None:
            self._proto.transport.write(_pack(("PING",)))

    def _on_reply(self, reply: Any) -> None:
        self.heard = asyncio.get_running_loop().time()
        self.answers += 1
        if isinstance(reply, list):
            kind = reply[0]
            if kind == b"message":
                self.on_message(reply[1], reply[2])
            elif kind == b"pmessage":
                self.on_message(reply[2], reply[3])
            elif kind in (b"subscribe", b"psubscribe"):
                self._expected -= 1
                if self._expected == 0 and self._subscribed is not None and not self._subscribed.done():
                    self._subscribed.set_result(None)
        elif isinstance(reply, hiredis.ReplyError):  # a hello or a subscription refused: this connection is no use
            error = _error(reply)
            if self._subscribed is not None and not self._subscribed.done():
                self._subscribed.set_exception(error)
            self._end(error)

    def _on_lost(self, proto: _Protocol, exc: Exception) -> None:
        if self.lost is not None and not self.lost.done():
            self.lost.set_result(exc)

    def _end(self, exc: Exception) -> None:
        if self.lost is not None and not self.lost.done():
            self.lost.set_result(exc)
        if self._proto is not None and self._proto.transport is not None:
            self._proto.transport.close()

    async def aclose(self) -> None:
        if self._proto is not None and self._proto.transport is not None:
            self._proto.transport.close()
        self._proto = None
