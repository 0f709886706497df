"""``souk bench floor``: the least any Souk of this design can cost, against boardgame.io, in one sitting (#21).

Issue #21 asks Souk to be 1.5 times boardgame.io's moves/s at 64 matches and at least equal at 1 and 16, with every
accepted move on disk (``appendfsync always``) before it is answered. This bench measures the floor under that
requirement, on this machine, beside the peer (``services.bench.peer.run_peer``, interleaved):

- **the durable echo**: a Python server that does only what no Souk can skip and nothing Souk does beyond it. Each
  seat of a match holds a WebSocket to it (the handshake and frames done by hand on asyncio's transports: cheaper
  than any web framework); a move is one text frame; the server appends it to the match's stream on a Redis with
  ``appendfsync always`` (every move waiting in the loop's turn goes in one pipeline: group commit) and, once Redis
  answered, writes the match's new state, a few bytes, to the match's four sockets. No rules, no views, no
  read store, no second process, no token, no idempotency: Souk's engine, projector and gateway do all of that on
  top. The clients are the same shape as the peer's: every seat its own socket, the seat whose turn it is moves as
  soon as the new state reaches it, latency from the move sent to the mover receiving the new state.
- **fused** (``_Fused``): Souk's own parts in that server, with no hop between them: each command frame XADDed to
  its partition's command stream, decided and appended by ``Engine.handle`` (the real append script), the five views
  built from the table the engine holds and written to the seats' sockets; 4-seat Samarkand, each client a random
  legal command of its view. **fused+store**: and the read store written by ``Projector.project`` before the push.
  The design of docs/performance-changes.md section 13 at its cheapest: no gateway, pub/sub or second process, and
  none of what the product must do besides (tokens, presence, limits, leases, reclaiming, the answer frame).
- **the rules' share**: a 4-seat Samarkand command decided and folded (``souk bench domain``'s playouts) and the
  five views of a table built and encoded, per command, in process.

The echo's server CPU a move is a lower bound of Souk's (it does a subset of Souk's work, with less code); its
moves/s at one match, a bound on what a move that waits for its fsync can reach when nothing can be batched. The
fused sides bound what the fused step would cost. What they measured: docs/performance-changes.md section 14.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import random
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec
from redis import Redis

from services.bench import BenchError
from services.bench.http import frame_head
from services.bench.peer import _median, ended, install, move_figures, peer_round
from services.bench.pipeline import _token_hash
from services.gateway.fanout import text_frame
from services.store.events import OK, RedisEventStore

SEATS = 4
_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC11B65"


# --- the servers (a process of their own: ``python -m services.bench.floor PORT EVENTS_URL [fused [VIEWS_URL]]``) --

class _Match:
    __slots__ = ("busy", "sockets", "version")

    def __init__(self) -> None:
        self.version = 0
        self.busy = False  # a move of it is being appended
        self.sockets: dict[int, asyncio.Transport] = {}


class _Batching:
    """The moves a loop turn brings, handled together (``handle``): one pipeline, one append."""

    def __init__(self) -> None:
        self.waiting: list = []

    def take(self, item: Any) -> None:
        if not self.waiting:
            asyncio.get_running_loop().call_soon(self._flush)
        self.waiting.append(item)

    def _flush(self) -> None:
        batch, self.waiting = self.waiting, []
        asyncio.ensure_future(self.handle(batch))

    async def handle(self, batch: list) -> None:
        raise NotImplementedError


class _Echo(_Batching):
    """The matches, and the moves waiting for the next append (one pipeline a loop turn)."""

    def __init__(self, redis_url: str) -> None:
        from services.store.resp import Resp

        super().__init__()
        self.redis = Resp(redis_url)
        self.matches: dict[str, _Match] = {}

    async def ping(self) -> None:
        await self.redis.call("PING")

    def joined(self, name: str, seat: int, transport: asyncio.Transport) -> None:
        self.matches.setdefault(name, _Match()).sockets[seat] = transport

    def left(self, name: str, seat: int, transport: asyncio.Transport) -> None:
        match = self.matches.get(name)
        if match is not None and match.sockets.get(seat) is transport:
            del match.sockets[seat]

    def move(self, name: str, seat: int, payload: bytes) -> None:
        match = self.matches.get(name)
        if match is None or match.busy or match.version % SEATS != seat:
            return  # not its turn: ignored (the peer's server refuses such a move)
        match.busy = True
        self.take((name, match, payload))

    async def handle(self, batch: list[tuple[str, _Match, bytes]]) -> None:
        await self.redis.calls(*[("XADD", f"floor:{{{name}}}", "*", "m", payload) for name, _, payload in batch])
        for _, match, _ in batch:  # on disk: the new state to every seat
            match.version += 1
            match.busy = False
            frame = text_frame(b'{"v":%d}' % match.version)
            for transport in match.sockets.values():
                transport.write(frame)


class _ServerSocket(asyncio.Protocol):
    def __init__(self, echo: _Echo | _Fused) -> None:
        self.echo = echo
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.match: str | None = None
        self.seat = -1

    def connection_made(self, transport) -> None:
        self.transport = transport
        transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def connection_lost(self, exc) -> None:
        if self.match is not None:
            self.echo.left(self.match, self.seat, self.transport)

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        if self.match is None:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(buffer[:end]).decode("latin-1").split("\r\n")
            del buffer[:end + 4]
            _, path, _ = head[0].split(" ")
            _, _, name, seat = path.split("/")  # /m/NAME/SEAT
            key = next(line.split(":", 1)[1].strip() for line in head[1:]
                       if line.lower().startswith("sec-websocket-key:"))
            accept = base64.b64encode(hashlib.sha1(key.encode() + _GUID).digest())
            self.transport.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                 b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n")
            self.match, self.seat = name, int(seat)
            self.echo.joined(name, self.seat, self.transport)
        while True:
            if len(buffer) >= 2 and buffer[1] & 0x7F == 127:
                self.transport.close()  # no move is that long
                return
            if (head := frame_head(buffer)) is None:
                return
            first, length, at = head
            mask = bytes(buffer[at - 4:at])
            masked = bytes(buffer[at:at + length])
            del buffer[:at + length]
            key = (mask * (length // 4 + 1))[:length]
            payload = (int.from_bytes(masked, "big") ^ int.from_bytes(key, "big")).to_bytes(length, "big")
            opcode = first & 0x0F
            if opcode == 1:
                self.echo.move(self.match, self.seat, payload)
            elif opcode == 8:
                self.transport.close()
                return


class _Table:
    """A match of the fused server: its game (its number-th), the seats' sockets."""

    __slots__ = ("busy", "game_id", "games", "name", "sockets")

    def __init__(self, name: str) -> None:
        self.name, self.game_id = name, ""
        self.games = 0
        self.busy = False
        self.sockets: dict[int, asyncio.Transport] = {}


class _Move(msgspec.Struct):
    v: int  # the version the seat decided on
    c: msgspec.Raw  # the command, as its view's legal list gave it


class _Fused(_Batching):
    """Souk's own parts in one process, no hop between them: a seat's command frame is appended to its partition's
    command stream (its entry id orders the seat's commands), decided by the engine (``Engine.handle``: the append
    script, fsynced, with the command's outcome), every seat's view built from the table the engine holds and
    written to its socket; with ``views_url``, the read store written too (``Projector.project``) before the
    push. Every command waiting in the loop's turn goes in one batch."""

    def __init__(self, events_url: str, views_url: str | None) -> None:
        from services.engine.service import Engine
        from services.projector.service import Projector
        from services.runtime.config import Settings
        from services.store import clients
        from services.store.resp import Resp

        super().__init__()
        redis = clients.async_client(events_url)
        self.lean = Resp(events_url)
        defaults = Settings()  # the event store as `souk serve` runs it by default
        self.store = _Recording(redis, defaults.events_maxlen, defaults.refusal_ttl_s, defaults.outcome_window)
        self.engine = Engine(redis, self.store)
        self.projector = Projector(clients.async_client(views_url), self.store) if views_url else None
        self.tables: dict[str, _Table] = {}
        self.run = secrets.token_hex(4)
        self.outcomes: dict[str, int] = {}  # the replies by status or code
        self.played: dict[str, int] = {}  # the seats' commands decided, by game

    async def ping(self) -> None:
        await self.lean.call("PING")

    def left(self, name: str, seat: int, transport: asyncio.Transport) -> None:
        table = self.tables.get(name)
        if table is not None and table.sockets.get(seat) is transport:
            del table.sockets[seat]

    def joined(self, name: str, seat: int, transport: asyncio.Transport) -> None:
        table = self.tables.get(name)
        if table is None:
            table = self.tables[name] = _Table(name)
        table.sockets[seat] = transport
        if len(table.sockets) == SEATS:
            table.busy = True
            asyncio.ensure_future(self._new_game(table))

    async def _new_game(self, table: _Table) -> None:
        from contracts.table import CreateGame, JoinSeat

        table.games += 1
        game_id = f"{self.run}-{table.name}-{table.games}"
        envs = [self._envelope(game_id, CreateGame("samarkand", "bench", SEATS, {}, "00" * 32, unfair=True), None)]
        envs += [self._envelope(game_id, JoinSeat(f"p{s}", _token_hash(game_id, s), s), s) for s in range(SEATS)]
        await self.engine.handle(envs)
        table.game_id = game_id
        await self._project()
        table.busy = False
        self._push(table)

    def _envelope(self, game_id: str, command, seat: int | None, version: int | None = None):
        from contracts.envelope import CommandEnvelope
        from services.store.codec import encoder

        body = command if isinstance(command, msgspec.Raw) else msgspec.Raw(encoder.encode(command))
        return CommandEnvelope(secrets.token_hex(8), game_id, body, seat=seat, expected_version=version,
                               token_hash=None if version is None else _token_hash(game_id, seat),
                               sent_at=time.time())

    def move(self, name: str, seat: int, payload: bytes) -> None:
        table = self.tables.get(name)
        if table is None or table.busy or not table.game_id:
            return
        table.busy = True
        self.take((table, seat, payload))

    async def handle(self, batch: list[tuple[_Table, int, bytes]]) -> None:
        from services.store import keys
        from services.store.codec import encoder

        envs = []
        for table, seat, payload in batch:
            move = _move_decoder.decode(payload)
            envs.append(self._envelope(table.game_id, move.c, seat, move.v))
        entry_ids = await self.lean.calls(*[("XADD", keys.commands(keys.partition(env.game_id)), "*", "c",
                                            encoder.encode(env)) for env in envs])
        replies = await self.engine.handle(envs, entry_ids)
        for reply in replies:
            self.outcomes[reply.code or reply.status] = self.outcomes.get(reply.code or reply.status, 0) + 1
            self.played[reply.game_id] = self.played.get(reply.game_id, 0) + 1
        await self._project()
        for table, _, _ in batch:
            table.busy = False
            slot = self.engine.cache.get(table.game_id)
            if slot is not None and slot.table.status == "over":  # a new game for the match
                table.busy = True
                asyncio.ensure_future(self._new_game(table))
            else:
                self._push(table)

    async def _project(self) -> None:
        """The read store written from the appends that went through since the last call (``fused+store``)."""
        appends, self.store.appends = self.store.appends, []
        if self.projector is None:
            return
        from services.store.codec import event_envelope_decoder

        by_game: dict[str, list] = {}
        for append in appends:
            by_game.setdefault(append.game_id, []).extend(event_envelope_decoder.decode(e) for e in append.envelopes)
        if by_game:
            await self.projector.project(by_game)

    def _push(self, table: _Table) -> None:
        from domain import table as tbl
        from services.store.codec import encoder

        slot = self.engine.cache.get(table.game_id)
        views = tbl.views(slot.table, table.game_id)
        for seat, view in views.items():
            raw = encoder.encode(view)
            transport = table.sockets.get(seat)
            if transport is not None:
                transport.write(text_frame(raw))


_move_decoder = msgspec.json.Decoder(_Move)


class _FusedView(msgspec.Struct):
    """What the fused server's clients read of a seat's TableView."""

    game_id: str
    version: int
    status: str
    legal: list[msgspec.Raw]


_fused_view_decoder = msgspec.json.Decoder(_FusedView)


class _Recording(RedisEventStore):
    """The event store, keeping the appends that went through for the read store's writes (``fused+store``)."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.appends: list = []

    async def append(self, appends, acks=None):
        results = await super().append(appends, acks)
        self.appends.extend(a for a, r in zip(appends, results) if r.status == OK and a.envelopes)
        return results


async def serve(port: int, redis_url: str, kind: str = "echo", views_url: str | None = None) -> None:
    echo = _Echo(redis_url) if kind == "echo" else _Fused(redis_url, views_url)
    await echo.ping()
    server = await asyncio.get_running_loop().create_server(lambda: _ServerSocket(echo), "127.0.0.1", port)
    print("listening", flush=True)
    async with server:
        await server.serve_forever()


# --- the echo's clients (in the bench's process) ------------------------------------------------------------------

async def _connect(port: int, seats: list, prefix: str, end: float, started=None) -> list[str]:
    """Opens each seat's socket (``/m/{prefix}{match}/{seat}``, 4 seats a match, in order), calls ``started()``
    once all are open, and holds them until ``end``; the errors met (none: an empty list)."""
    from services.bench.http import Socket

    sockets: list[Socket] = []
    try:
        for index, seat in enumerate(seats):
            seat.socket = await Socket.open("127.0.0.1", port, f"/m/{prefix}{index // SEATS}/{seat.seat}",
                                            seat.on_text)
            sockets.append(seat.socket)
        if started is not None:
            started()
        await asyncio.sleep(max(0.0, end - time.monotonic()) + 0.2)
    except (OSError, asyncio.TimeoutError, ConnectionError) as exc:
        return [f"{type(exc).__name__}: {exc}"]
    finally:
        for socket_ in sockets:
            socket_.close()
    return []


async def _play(port: int, matches: int, start: float, end: float) -> dict:
    latencies: list[float] = []

    class Seat:
        __slots__ = ("moved", "sent", "seat", "socket")

        def __init__(self, seat: int) -> None:
            self.seat, self.moved, self.sent, self.socket = seat, -1, 0.0, None

        def on_text(self, text: bytes, arrival: float) -> None:
            version = int(text[5:-1])  # {"v":N}
            if self.sent and version > self.moved:
                if start <= arrival < end:
                    latencies.append(arrival - self.sent)
                self.sent = 0.0
            if version % SEATS == self.seat and version > self.moved and arrival < end:
                self.move(version)

        def move(self, version: int) -> None:
            self.moved, self.sent = version, time.monotonic()
            self.socket.send_text(b'{"move":"tick","at":%d}' % version)

    seats = [Seat(s) for _ in range(matches) for s in range(SEATS)]

    def started() -> None:  # every seat's socket is open: each match's first seat moves
        for seat in seats[::SEATS]:
            seat.move(0)

    errors = await _connect(port, seats, f"{secrets.token_hex(4)}-", end, started)
    return {"latencies": latencies, "errors": errors}


async def _play_fused(port: int, matches: int, start: float, end: float) -> dict:
    """The fused server's clients: every seat its socket; in each match one command in flight, sent by a seat
    whose newest view (the match's newest version) gives it legal commands, a random one of them."""
    latencies: list[float] = []
    rng = random.Random(1)

    class Match:
        __slots__ = ("flight", "game_id", "seats", "version")

        def __init__(self) -> None:
            self.version, self.flight, self.seats, self.game_id = -1, None, [], ""

    class Seat:
        __slots__ = ("match", "seat", "socket", "view")

        def __init__(self, match: Match, seat: int) -> None:
            self.match, self.seat, self.socket, self.view = match, seat, None, None

        def on_text(self, text: bytes, arrival: float) -> None:
            view = _fused_view_decoder.decode(text)
            match = self.match
            if match.flight is not None and match.flight[0] is self:  # the mover's answer: its new view
                if (view.version > match.flight[1] or view.game_id != match.game_id) and start <= arrival < end:
                    latencies.append(arrival - match.flight[2])
                match.flight = None
            self.view = view
            if view.game_id != match.game_id:  # the match's next game (the server starts one when a game ends)
                match.game_id, match.version = view.game_id, view.version
            match.version = max(match.version, view.version)
            if arrival >= end or match.flight is not None:
                return
            for seat in match.seats:  # the first seat that may move, moves
                v = seat.view
                if v is not None and v.game_id == match.game_id and v.version == match.version \
                        and v.status == "playing" and v.legal:
                    match.flight = (seat, v.version, time.monotonic())
                    seat.socket.send_text(b'{"v":%d,"c":%s}' % (v.version, rng.choice(v.legal)))
                    return

    seats = []
    for _ in range(matches):
        match = Match()
        match.seats = [Seat(match, s) for s in range(SEATS)]
        seats += match.seats
    errors = await _connect(port, seats, "", end)  # the server starts each match's game, then pushes its views
    return {"latencies": latencies, "errors": errors}


# --- one run, and the interleaved bench -------------------------------------------------------------------------

def run_echo(matches: int, seconds: float, warmup: float, kind: str = "echo") -> dict:
    """The durable echo (``kind`` echo), or Souk's parts fused (``fused``: no read store; ``fused+store``: with it),
    with ``matches`` matches of 4 seats; the figures of the measured window."""
    from services.bench.pipeline import _process_cpu
    from services.embedded.redis import RedisServer, die_with_parent, free_port

    with tempfile.TemporaryDirectory(prefix="souk-bench-floor-") as tmp:
        redis = RedisServer(Path(tmp) / "events", appendonly=True, fsync="always").start()
        views = RedisServer(Path(tmp) / "views", appendonly=False).start() if kind == "fused+store" else None
        server = None
        try:
            port = free_port()
            args = [] if kind == "echo" else ["fused"] + ([views.url] if views is not None else [])
            server = subprocess.Popen([sys.executable, "-m", "services.bench.floor", str(port), redis.url, *args],
                                      stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
                                      preexec_fn=die_with_parent)
            line = server.stdout.readline()
            if not line.startswith("listening"):
                raise BenchError(f"the echo server did not start: {line!r}")
            with Redis(port=redis.port, decode_responses=True) as admin:
                fsync = admin.config_get("appendfsync")["appendfsync"]
            if fsync != "always":
                raise BenchError(f"the echo's Redis runs with appendfsync {fsync}, not always")
            start = time.monotonic() + warmup + 0.5 + matches * 0.004  # every socket open before the window
            end = start + seconds

            pids = [redis.process.pid] + ([views.process.pid] if views is not None else [])

            async def measure() -> tuple[dict, tuple, tuple]:
                players = _play if kind == "echo" else _play_fused
                play = asyncio.ensure_future(players(port, matches, start, end))
                await asyncio.sleep(max(0.0, start - time.monotonic()))
                before = _process_cpu(server.pid), sum(map(_process_cpu, pids))
                await asyncio.sleep(max(0.0, end - time.monotonic()))
                after = _process_cpu(server.pid), sum(map(_process_cpu, pids))
                return await play, before, after

            result, before, after = asyncio.run(measure())
        finally:
            ended(server)
            redis.stop()
            if views is not None:
                views.stop()
    if result["errors"]:
        raise BenchError(f"the echo's clients failed: {result['errors'][:3]}")
    count = len(result["latencies"])
    python, redis_cpu = after[0] - before[0], after[1] - before[1]
    return {**move_figures(result["latencies"], seconds),
            "server_cpu_us_per_move": round((python + redis_cpu) / max(1, count) * 1e6),
            "python_cpu_us_per_move": round(python / max(1, count) * 1e6),
            "redis_cpu_us_per_move": round(redis_cpu / max(1, count) * 1e6),
            "appendfsync": "always", "kind": kind}


def rules_share(seconds: float = 2.0, seed: int = 1) -> dict:
    """What Samarkand's rules cost a command in process: decided and folded (random playouts, 4 seats), and the
    five views of a table built and encoded (the tables met in those playouts)."""
    from domain import table as tbl
    from domain.chance import Chance
    from domain.kernel import bot_command, get_game
    from services.bench.pipeline import started_table
    from services.store import keys
    from services.store.codec import encoder

    game, rng = get_game("samarkand"), random.Random(seed)
    tables, commands, spent = [], 0, 0.0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        secret = rng.randbytes(16)
        table = started_table("samarkand", SEATS, secret)
        while table.status != tbl.OVER and time.perf_counter() < deadline:
            seat = rng.choice(tbl.flow(table).awaiting)
            command = bot_command(game, table.state, seat, rng)
            began = time.process_time()
            for e in tbl.decide(table, seat, f"h{seat}", command, Chance(secret, table.version)):
                table = tbl.evolve(table, e, tbl.Origin(seat, str(commands)))
            spent += time.process_time() - began
            commands += 1
            if commands % 5 == 0:
                tables.append(table)
    began = time.process_time()
    for table in tables:
        {keys.audience(s): encoder.encode(v) for s, v in tbl.views(table, "g").items()}
    views = (time.process_time() - began) / max(1, len(tables))
    return {"decide_fold_us": round(spent / max(1, commands) * 1e6, 1), "views_us": round(views * 1e6, 1),
            "commands": commands, "tables": len(tables)}


SIDES = ("echo", "fused", "fused+store")
DESCRIBED = {
    "echo": "the durable echo: a raw asyncio WebSocket server that appends each move to a Redis stream with "
            "appendfsync always (group commit a loop turn) and writes the new state to the match's 4 sockets; no "
            "rules, views, read store or second process",
    "fused": "Souk's parts fused in one process on the same raw sockets: each command frame XADDed to its "
             "partition's command stream, decided and appended by the engine (Engine.handle, fsync always), the 5 "
             "views built from the engine's table and written to the seats' sockets; 4-seat Samarkand, random legal "
             "commands; no read store",
    "fused+store": "the same, and the read store written by the projector's code (Projector.project: views, "
                   "history, lobby, positions) before the push",
}


def run_floor_bench(matches: tuple[int, ...], seconds: float, warmup: float, rounds: int, cache: Path,
                    moves: int = 400, progress=None, sides: tuple[str, ...] = SIDES) -> dict:
    """The peer and each of ``sides`` for each N in ``matches``, interleaved, ``rounds`` times; medians per N."""
    folder = install(cache)
    load_before = os.getloadavg()
    cores = os.cpu_count() or 1
    runs: list[dict] = []
    for r in range(rounds):
        for n in matches:
            runs.append(peer_round(folder, n, seconds, warmup, moves, r + 1, progress))
            for side in sides:
                got = run_echo(n, seconds, warmup, side)
                runs.append({"round": r + 1, "matches": n, "side": side, **got})
                if progress:
                    progress(f"round {r + 1} N={n} {side}: {got['moves_per_s']} moves/s, p50 {got['p50_ms']} ms, "
                             f"server {got['server_cpu_us_per_move']} µs/move (python {got['python_cpu_us_per_move']}"
                             f", redis {got['redis_cpu_us_per_move']})")
    rules = rules_share()
    table = []
    for n in matches:
        peer = [x for x in runs if x["matches"] == n and x["side"] == "peer"]
        peer_rate = _median([x["moves_per_s"] for x in peer])
        target = 1.5 if n >= 64 else 1.0
        row = {"matches": n, "target_ratio": target, "peer_moves_per_s": peer_rate,
               "peer_p50_ms": _median([x["p50_ms"] for x in peer]), "peer_p99_ms": _median([x["p99_ms"] for x in peer]),
               "peer_server_cpu_us_per_move": _median([x["server_cpu_us_per_move"] for x in peer]),
               "peer_clients_cpu_us_per_move": _median([x["clients_cpu_us_per_move"] for x in peer]),
               # all the machine's CPU shared out over the target's moves: what a move may cost, clients included
               "machine_cpu_us_per_move_at_target": round(cores * 1e6 / (target * peer_rate)) if peer_rate else 0}
        for side in sides:
            got = [x for x in runs if x["matches"] == n and x["side"] == side]
            rate = _median([x["moves_per_s"] for x in got])
            row[side] = {"moves_per_s": rate, "ratio": round(rate / peer_rate, 2) if peer_rate else 0.0,
                         **{k: _median([x[k] for x in got]) for k in (
                             "p50_ms", "p99_ms", "server_cpu_us_per_move", "python_cpu_us_per_move",
                             "redis_cpu_us_per_move")}}
        table.append(row)
    return {
        "peer": "boardgame.io 0.50.2 (services/bench/peer.py): its Server and socket.io Clients, a 4-seat game of one "
                f"move a turn, matches of {moves} moves",
        "sides": {side: DESCRIBED[side] for side in sides},
        "latency": "move sent -> the mover receives the new state",
        "cores": cores, "seconds": seconds, "warmup": warmup, "rounds": rounds,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "rules": rules, "table": table, "runs": runs,
        "command": f"souk bench floor --matches {','.join(map(str, matches))} --seconds {seconds:g} "
                   f"--warmup {warmup:g} --rounds {rounds} --sides {','.join(sides)}",
    }


def format_table(result: dict) -> str:
    rules = result["rules"]
    lines = [f"peer: {result['peer']}", *(f"{side}: {text}" for side, text in result["sides"].items()),
             f"latency: {result['latency']}",
             f"{result['rounds']} round(s) of {result['seconds']:g} s after {result['warmup']:g} s, {result['cores']} "
             f"cores, load average {result['load_average_before']} before, {result['load_average_after']} after", ""]
    lines.append(f"{'N':>4} {'side':<12} {'moves/s':>8} {'ratio':>5} {'target':>6} {'p50/p99 ms':>16} "
                 f"{'server µs/move':>14}  (python, redis; peer: + its clients)")
    for row in result["table"]:
        lines.append(f"{row['matches']:>4} {'peer':<12} {row['peer_moves_per_s']:>8,.0f} {'':>5} {'':>6} "
                     f"{row['peer_p50_ms']:>7.2f} / {row['peer_p99_ms']:<6.2f} {row['peer_server_cpu_us_per_move']:>14,.0f}"
                     f"  (+ {row['peer_clients_cpu_us_per_move']:,.0f}; the machine's µs a move at the target: "
                     f"{row['machine_cpu_us_per_move_at_target']:,})")
        for side in result["sides"]:
            got = row[side]
            lines.append(f"{'':>4} {side:<12} {got['moves_per_s']:>8,.0f} {got['ratio']:>5.2f} {row['target_ratio']:>6.1f} "
                         f"{got['p50_ms']:>7.2f} / {got['p99_ms']:<6.2f} {got['server_cpu_us_per_move']:>14,.0f}"
                         f"  ({got['python_cpu_us_per_move']:,.0f}, {got['redis_cpu_us_per_move']:,.0f})")
    lines.append("")
    lines.append(f"Samarkand's rules in process, a command: decided and folded {rules['decide_fold_us']} µs, its 5 views "
                 f"built and encoded {rules['views_us']} µs ({rules['commands']} commands, {rules['tables']} tables)")
    lines.append(f"command: {result['command']}")
    return "\n".join(lines)


if __name__ == "__main__":  # the servers: PORT EVENTS_URL [echo | fused [VIEWS_URL]]
    from services.runtime import logs

    logs.configure("warning", "json")  # as `souk bench http` runs Souk (SOUK_LOG_LEVEL=warning)
    asyncio.run(serve(int(sys.argv[1]), sys.argv[2], *sys.argv[3:]))
