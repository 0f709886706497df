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
from collections.abc import Callable, Sequence
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
    def like(cls, client: Any) -> Resp | ClusterResp:
        """A lean connection to the server a redis-py client talks to (to the cluster, for a cluster client:
        ``ClusterResp``)."""
        if not hasattr(client, "connection_pool"):  # redis-py's RedisCluster
            return ClusterResp.like(client)
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

    async def evalsha(self, sha: str, script: str, keys: Sequence[str], *args: Any) -> Any:
        """EVALSHA of a script over ``keys`` (all it touches, declared: a Redis Cluster routes by them and refuses
        any other); loads the script if the server does not have it (a restart) and runs it again — nothing ran
        the first time."""
        try:
            return await self.call("EVALSHA", sha, len(keys), *keys, *args)
        except NoScriptError:
            await self.call("SCRIPT", "LOAD", script)
            return await self.call("EVALSHA", sha, len(keys), *keys, *args)

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
        self.candidates: list[dict] = [self.params]  # the servers tried in turn (a cluster's nodes)

    @classmethod
    def like(cls, client: Any, on_message: Callable[[bytes, bytes], None]) -> Subscriber:
        """A subscriber on the server a redis-py client talks to. On a cluster client: on the first of the
        cluster's nodes that answers (a node it knows, else one it was started with). Redis Cluster carries a
        PUBLISH to every node, primaries and replicas, so one subscription on any node hears every channel."""
        if not hasattr(client, "connection_pool"):  # redis-py's RedisCluster
            candidates, common = _cluster_candidates(client)
            subscriber = cls(None, on_message, **candidates[0], **common)
            subscriber.candidates = [{**c, **common} for c in candidates]
            return subscriber
        kw = client.connection_pool.connection_kwargs
        return cls(None, on_message,
                   **{k: kw[k] for k in ("host", "port", "path", "db", "username", "password") if kw.get(k)})

    async def start(self, channels: tuple[str, ...] = (), patterns: tuple[str, ...] = ()) -> None:
        loop = asyncio.get_running_loop()
        self.lost = loop.create_future()
        self._subscribed = loop.create_future()
        self._expected = len(channels) + len(patterns)
        for i, params in enumerate(self.candidates):
            try:
                self._proto = await _open(params, self._on_reply, self._on_lost)
            except OSError as exc:
                if i + 1 < len(self.candidates):
                    continue  # a cluster node that is down: the next one hears the same messages
                raise RedisConnectionError(f"cannot connect to Redis ({params.get('host')}:"
                                           f"{params.get('port')}): {exc}") from exc
            self.params = params
            break
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


# --- Redis Cluster ----------------------------------------------------------------------------------------------

SLOTS = 16384
_NO_KEY = {b"PING", b"INFO", b"SCRIPT", b"TIME", b"CLUSTER", b"DBSIZE", b"CONFIG", b"FUNCTION"}
_KEY_AFTER_STREAMS = {b"XREAD", b"XREADGROUP"}
_SUB_COMMAND = {b"XGROUP", b"XINFO", b"OBJECT", b"MEMORY"}  # a sub-command first, then the key


def _name(arg: Any) -> bytes:
    return (arg.encode() if isinstance(arg, str) else bytes(arg)).upper()


def routing_key(args: tuple) -> Any:
    """The key whose slot a command goes to (None: any primary will do): EVAL/EVALSHA's first key, XREAD(GROUP)'s
    first stream, the argument after XGROUP's, XINFO's, OBJECT's and MEMORY's sub-command, else the first
    argument. A command of several keys must have them all in one slot (Redis answers CROSSSLOT otherwise: Souk's
    keys of one game or partition share a hash tag, ``services.store.keys``)."""
    name = _name(args[0])
    if name in (b"EVAL", b"EVALSHA", b"EVALSHA_RO", b"EVAL_RO", b"FCALL"):
        return args[3] if int(args[2]) > 0 else None
    if name in _KEY_AFTER_STREAMS:
        for i, arg in enumerate(args):
            if _name(arg) == b"STREAMS":
                return args[i + 1]
        return None
    if name in _SUB_COMMAND:
        return args[2] if len(args) > 2 else None
    if name in _NO_KEY or len(args) < 2:
        return None
    return args[1]


def _slot(key: Any) -> int:
    from redis.crc import key_slot

    return key_slot(key.encode() if isinstance(key, str) else bytes(key) if not isinstance(key, bytes) else key)


def _cluster_candidates(client: Any) -> tuple[list[dict], dict]:
    """A redis-py cluster client's nodes (those it has learnt, then those it was started with) as connection
    parameters, and the credentials they share."""
    manager = client.nodes_manager
    seen: dict[tuple[str, int], None] = {}
    for node in [*manager.nodes_cache.values(), *manager.startup_nodes.values()]:
        seen.setdefault((node.host, int(node.port)), None)
    kw = client.connection_kwargs
    common = {k: kw[k] for k in ("username", "password") if kw.get(k)}
    return [{"host": h, "port": p} for h, p in seen], common


def _replica_counts(nodes: bytes, default_host: str) -> dict[tuple[str, int], int]:
    """Primary (host, port) -> how many live replicas it has, from ``CLUSTER NODES`` (``CLUSTER SLOTS`` leaves out
    a replica until it has reported a replication offset: a new cluster's, at first)."""
    primaries: dict[str, tuple[str, int]] = {}
    replicas: dict[str, int] = {}
    for line in nodes.decode().splitlines():
        fields = line.split()
        if len(fields) < 8:
            continue
        node_id, address, flags, primary = fields[0], fields[1].split("@", 1)[0], fields[2].split(","), fields[3]
        host, _, port = address.rpartition(":")
        if "master" in flags:
            primaries[node_id] = (host or default_host, int(port))
        elif "slave" in flags and "fail" not in flags and "fail?" not in flags and primary != "-":
            replicas[primary] = replicas.get(primary, 0) + 1
    return {address: replicas.get(node_id, 0) for node_id, address in primaries.items()}


REPLICAS_RECOUNT_S = 1.0  # a primary counted without replica is counted again at most this often


class ClusterResp:
    """``Resp`` on a Redis Cluster: one auto-pipelined ``Resp`` per primary, each command sent to the primary
    serving its key's slot (``routing_key``). The slot map comes from ``CLUSTER SLOTS`` of the first node that
    answers (the nodes named at the start, then every node learnt since), learnt at the first call and again after:

    - ``MOVED slot host:port``: the slot has a new owner; the command goes there and the whole map is learnt again
      before the next command;
    - ``ASK slot host:port`` (a slot being migrated): the command goes once to that node, after ``ASKING``;
    - a lost connection, ``CLUSTERDOWN`` or ``TRYAGAIN`` (a primary died and its replica is taking over, a
      migration in progress): the map is learnt again and the command sent again, with a growing pause (50 ms to
      1 s), for at most ``failover_wait_s``; then the error is raised. Sending again is what ``Resp.calls`` does
      after a lost connection: safe for Souk's hot-path commands (an append sent twice answers ``duplicate``, a
      command queued twice is decided once, an XACK twice acknowledges once);
    - ``NOSCRIPT`` for a script this connection loaded (``SCRIPT LOAD`` goes to every primary): loaded on the node
      that answered (a promoted replica has an empty script cache; so has a node just added, which an ``ASK`` may
      send the command to before it owns any slot) and sent again, the ``ASK`` kept.

    The interface is ``Resp``'s (``call``, ``calls``, ``call_again_if_lost``, ``evalsha``, ``aclose``), so the
    engine, the projector, the gateway and the stream readers take either. A blocking read holds its node's
    connection: a reader has a ``ClusterResp`` of its own, like a ``Resp``."""

    def __init__(self, nodes: list[tuple[str, int]], username: str | None = None, password: str | None = None,
                 failover_wait_s: float = 15.0, **_: Any) -> None:
        self.seeds = [(h, int(p)) for h, p in nodes]
        self.auth = {k: v for k, v in (("username", username), ("password", password)) if v}
        self.failover_wait_s = failover_wait_s
        self._owners: list[tuple[str, int]] | None = None  # slot -> its primary's (host, port); None: to learn
        self._known: list[tuple[str, int]] = list(self.seeds)  # every node seen, to ask for the map
        self._nodes: dict[tuple[str, int], Resp] = {}
        self._learning: asyncio.Lock | None = None
        self._stale = False  # a MOVED was seen: learn the map again before the next command
        self._scripts: dict[str, str] = {}  # sha -> script, of the SCRIPT LOADs sent through this connection
        self._replicas: dict[tuple[str, int], int] = {}  # primary -> how many replicas it has (CLUSTER SLOTS)
        self._recount_at: dict[tuple[str, int], float] = {}  # primary without replica -> when to count again
        self.relearnt = 0  # how many times the map was learnt (tests, logs)

    @classmethod
    def like(cls, client: Any) -> ClusterResp:
        """A lean connection to the cluster a redis-py cluster client talks to."""
        candidates, common = _cluster_candidates(client)
        return cls([(c["host"], c["port"]) for c in candidates], **common)

    # --- the map ---------------------------------------------------------------------------------------------

    def _node(self, address: tuple[str, int]) -> Resp:
        node = self._nodes.get(address)
        if node is None:
            node = self._nodes[address] = Resp(host=address[0], port=address[1], **self.auth)
        return node

    async def _learn(self) -> None:
        """The slot map from ``CLUSTER SLOTS`` of the first node that answers with a full map."""
        if self._learning is None:
            self._learning = asyncio.Lock()
        async with self._learning:
            if self._owners is not None and not self._stale:
                return
            failures = []
            for address in list(dict.fromkeys([*self._known, *self.seeds])):
                probe = Resp(host=address[0], port=address[1], **self.auth)
                try:
                    ranges, nodes = await asyncio.wait_for(probe.calls(("CLUSTER", "SLOTS"), ("CLUSTER", "NODES")),
                                                           2.0)
                except (RedisConnectionError, ResponseError, OSError, asyncio.TimeoutError) as exc:
                    failures.append(f"{address[0]}:{address[1]}: {exc or type(exc).__name__}")
                    continue
                finally:
                    await probe.aclose()
                owners: list[tuple[str, int] | None] = [None] * SLOTS
                known = []
                for first, last, primary, *replicas in ranges:
                    host = primary[0].decode() if isinstance(primary[0], bytes) else primary[0]
                    owner = (host or address[0], int(primary[1]))
                    owners[first:last + 1] = [owner] * (last - first + 1)
                    known.append(owner)
                    for r in replicas:
                        known.append(((r[0].decode() if isinstance(r[0], bytes) else r[0]) or address[0], int(r[1])))
                if None in owners:
                    failures.append(f"{address[0]}:{address[1]}: not every slot is served")
                    continue
                self._owners = owners  # type: ignore[assignment]
                self._replicas = _replica_counts(nodes, address[0])
                self._known = list(dict.fromkeys(known + self._known))
                self._stale = False
                self.relearnt += 1
                for gone in set(self._nodes) - set(owners):  # a primary no longer: its connection goes
                    await self._nodes.pop(gone).aclose()
                return
            raise RedisConnectionError("cannot learn the cluster's slots from any node: " + "; ".join(failures))

    async def _owner(self, args: tuple) -> Resp:
        if self._owners is None or self._stale:
            await self._learn()
        key = routing_key(args)
        return self._node(self._owners[0 if key is None else _slot(key)])  # type: ignore[index]

    # --- commands --------------------------------------------------------------------------------------------

    async def call(self, *args: Any) -> Any:
        if _name(args[0]) == b"SCRIPT" and _name(args[1]) == b"LOAD":
            return await self._load(args[2])
        loop = asyncio.get_running_loop()
        deadline, pause, redirects, ask = None, 0.05, 0, None
        while True:
            try:
                if ask is not None:
                    _, reply = await self._node(ask).calls(("ASKING",), args)
                    return reply
                return await (await self._owner(args)).call(*args)
            except NoScriptError:
                sha = args[1] if isinstance(args[1], str) else bytes(args[1]).decode()
                if _name(args[0]) != b"EVALSHA" or sha not in self._scripts or redirects > 16:
                    raise
                redirects += 1
                # Loaded on the node that answered: the slot's primary, or the node an ASK sent it to (a slot being
                # migrated to a node that never had the script: one just added, one whose cache was flushed).
                node = self._node(ask) if ask is not None else await self._owner(args)
                await node.call("SCRIPT", "LOAD", self._scripts[sha])
                continue
            except ResponseError as exc:
                text = str(exc)
                if text.startswith(("MOVED ", "ASK ")) and redirects < 16:
                    redirects += 1
                    kind, slot, address = text.split()[:3]
                    host, _, port = address.rpartition(":")
                    target = (host or self.seeds[0][0], int(port))
                    if kind == "ASK":
                        ask = target
                    else:
                        ask = None
                        if self._owners is not None:
                            self._owners[int(slot)] = target
                        self._stale = True
                    continue
                if not text.startswith(("CLUSTERDOWN", "TRYAGAIN")):
                    raise
                failure: Exception = exc
            except RedisConnectionError as exc:
                failure = exc
            ask = None
            now = loop.time()
            deadline = now + self.failover_wait_s if deadline is None else deadline
            if now >= deadline:
                raise failure
            await asyncio.sleep(pause)
            pause = min(2 * pause, 1.0)
            self._stale = True  # a failover may have moved the slot: learn the map again
            try:
                await self._learn()
            except RedisConnectionError:
                pass  # no node answers yet: tried again after the next pause

    async def _load(self, script: Any) -> Any:
        """SCRIPT LOAD on every primary (an EVALSHA may go to any), remembered for a node that loses it."""
        text = script.decode() if isinstance(script, bytes) else script
        if self._owners is None or self._stale:
            await self._learn()
        shas = await asyncio.gather(*(self._node(a).call_again_if_lost("SCRIPT", "LOAD", text)
                                      for a in dict.fromkeys(self._owners)))  # type: ignore[arg-type]
        sha = shas[0].decode() if isinstance(shas[0], bytes) else shas[0]
        self._scripts[sha] = text
        return shas[0]

    async def call_again_if_lost(self, *args: Any) -> Any:
        return await self.call(*args)  # ``call`` sends it again after a lost connection already

    async def calls(self, *commands: tuple) -> list[Any]:
        """Several commands sent together, each to its slot's primary (one write per primary in the loop's
        turn), their replies in order; the first error among them is raised once all have answered."""
        replies = await asyncio.gather(*(self.call(*c) for c in commands), return_exceptions=True)
        for reply in replies:
            if isinstance(reply, BaseException):
                raise reply
        return list(replies)

    async def evalsha(self, sha: str, script: str, keys: Sequence[str], *args: Any) -> Any:
        """EVALSHA of a script over ``keys`` (every key it touches, all in one slot), on that slot's primary; the
        script is loaded where it is missing (``call``: NOSCRIPT) and run again. The signature of the read store's
        callers since their keys are declared (issue #22's read store; ``Resp.evalsha`` takes them on main)."""
        self._scripts.setdefault(sha, script)
        try:
            return await self.call("EVALSHA", sha, len(keys), *keys, *args)
        except NoScriptError:
            await self.call("SCRIPT", "LOAD", script)
            return await self.call("EVALSHA", sha, len(keys), *keys, *args)

    async def replicated(self, key: Any, timeout_ms: int) -> tuple[int, int]:
        """``WAIT`` on the connection to the primary of ``key``'s slot: returns once one of its replicas has every
        write sent on that connection so far (or after ``timeout_ms``), as (replicas that have them, replicas
        asked: 1, or 0 for a primary without replica). A lost connection raises: what was written on it may be
        lost with its primary."""
        if self._owners is None or self._stale:
            await self._learn()
        owner = self._owners[_slot(key)]  # type: ignore[index]
        now = asyncio.get_running_loop().time()
        if not self._replicas.get(owner) and now >= self._recount_at.get(owner, 0.0):
            # Learnt without replica (through a failover, its old primary down): the killed node, restarted, comes
            # back as its replica, and no MOVED says so. Counted again from the primary itself, at most once a
            # REPLICAS_RECOUNT_S: until then, answers wait for no replica.
            self._recount_at[owner] = now + REPLICAS_RECOUNT_S
            nodes = await self._node(owner).call("CLUSTER", "NODES")
            self._replicas[owner] = _replica_counts(nodes, owner[0]).get(owner, 0)
        wanted = min(1, self._replicas.get(owner, 0))
        if not wanted:
            return 0, 0
        return int(await self._node(owner).call("WAIT", wanted, timeout_ms)), wanted

    async def on_every_primary(self, *args: Any) -> list[Any]:
        """One command sent to every primary (INFO, say), their replies in the order of the primaries."""
        if self._owners is None or self._stale:
            await self._learn()
        return list(await asyncio.gather(*(self._node(a).call(*args)
                                           for a in dict.fromkeys(self._owners))))  # type: ignore[arg-type]

    async def aclose(self) -> None:
        nodes, self._nodes = list(self._nodes.values()), {}
        for node in nodes:
            await node.aclose()
