"""``souk bench http``: the HTTP path users get, measured through the front door (issue #9 item 12).

Everything runs as separate processes: two embedded redis-servers (events with AOF, read models in memory, as
``souk serve`` runs them), the server under test (``--target serve``: one ``souk serve``; ``--target split``:
``souk engine``, ``souk projector`` and ``souk gateway``, each its own process; ``--url``: a server already
running, whose CPU is then not measured), and ``--drivers`` load-generator processes.

``--mode play`` (the default): each driver plays ``--games`` games; every seat is a client of its own (one HTTP
connection, one WebSocket following its view). A game's next command is a legal command of the newest view pushed
to a seat the game awaits, POSTed with that view's version as ``expected_version``, one command in flight per
game. Latency: from writing the request to the arrival, on the acting seat's WebSocket, of the view that includes
the command (version >= the accepted reply's). ``--rate`` paces the commands evenly (per driver: rate / drivers).
``--send ws``: each command goes as a ``souk.Command`` frame on the seat's WebSocket instead of a POST, and its
``souk.CommandAnswer`` comes back on the same socket (the answer's time is then that frame's arrival).

``--mode fanout``: one game played as in ``play`` while ``--sockets`` more WebSockets (held by the drivers,
spread over the spectator and every seat) follow it; latency: from a command's request to each socket's push of
the view it made. Each socket checks it only ever gets its own audience's view (``wrong_audience``). When the
game ends, a new one starts and the sockets move to it.

Setup (create, join) goes through the project's SDK (``services.client``); the measured path (command POSTs,
pushed frames) uses a lean HTTP/1.1 keep-alive client and a lean WebSocket reader written on asyncio's
protocols, so that the load generator's own cost (httpx costs several hundred µs a request) does not set the
figures; for the same reason a driver plays its window with the garbage collector off (``_collector_paused``).
Rate limits are turned off on the server under test (every client is 127.0.0.1).

CPU per process: /proc/<pid>/stat for the server processes, the drivers and each redis-server, over the measured
window only; ``cpu_us_per_command`` divides it by the commands measured. ``redis_calls_per_command`` (play): each
Redis's calls by command name (``INFO commandstats``) over the window, per command measured.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import gc
import multiprocessing
import os
import queue as queue_module
import random
import secrets
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec

from services.bench import BenchError
from services.bench.pipeline import DEFAULT_SEATS  # every game the benchmarks play, and its seats

GAMES = tuple(DEFAULT_SEATS)
STALL_S = 10.0  # a game that gets no usable view for this long reads its seats' views over HTTP again
FINAL = ("over", "cancelled")


# --- the lean clients ------------------------------------------------------------------------------------------

class Http:
    """One HTTP/1.1 keep-alive connection: a request at a time, answers with a Content-Length (what the gateway
    sends). Reconnects and resends once when the server closed the connection (every request here may be resent:
    commands carry their command_id)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._head = f"Host: {host}:{port}\r\n".encode()
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def _connect(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def request(self, method: str, path: str, body: bytes | None = None,
                      token: str | None = None) -> tuple[int, bytes]:
        head = [f"{method} {path} HTTP/1.1\r\n".encode(), self._head]
        if token:
            head.append(f"Authorization: Bearer {token}\r\n".encode())
        if body is not None:
            head.append(f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n".encode())
        message = b"".join(head) + b"\r\n" + (body or b"")
        for attempt in (0, 1):
            if self.writer is None:
                await self._connect()
            try:
                self.writer.write(message)
                raw = await self.reader.readuntil(b"\r\n\r\n")
                status, length, close = int(raw[9:12]), 0, False
                for line in raw.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    name = name.strip().lower()
                    if name == b"content-length":
                        length = int(value)
                    elif name == b"connection" and value.strip().lower() == b"close":
                        close = True
                data = await self.reader.readexactly(length) if length else b""
                if close:
                    self.close()
                return status, data
            except (ConnectionError, asyncio.IncompleteReadError):
                self.close()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def frame_head(buffer: bytearray) -> tuple[int, int, int] | None:
    """The WebSocket frame at the start of ``buffer``: its first byte (FIN and opcode), its payload's length and
    where the payload starts (after the mask key when the frame is masked, as a client's are); None while the
    buffer does not hold the whole frame yet."""
    if len(buffer) < 2:
        return None
    length, at = buffer[1] & 0x7F, 2
    if length == 126:
        if len(buffer) < 4:
            return None
        length, at = int.from_bytes(buffer[2:4], "big"), 4
    elif length == 127:
        if len(buffer) < 10:
            return None
        length, at = int.from_bytes(buffer[2:10], "big"), 10
    if buffer[1] & 0x80:
        at += 4
    return (buffer[0], length, at) if len(buffer) >= at + length else None


class Socket(asyncio.Protocol):
    """A WebSocket that only reads: each text message goes to ``on_text(payload, arrival)`` with the monotonic time
    its last bytes arrived. Frames are parsed here (the server's are unmasked); pings are answered."""

    def __init__(self, on_text) -> None:
        self.on_text = on_text
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.upgraded: asyncio.Future = asyncio.get_running_loop().create_future()
        self.closed: asyncio.Future = asyncio.get_running_loop().create_future()
        self.close_code: int | None = None
        self._fragments: list[bytes] = []

    @classmethod
    async def open(cls, host: str, port: int, path: str, on_text) -> Socket:
        loop = asyncio.get_running_loop()
        _, socket = await loop.create_connection(lambda: cls(on_text), host, port)
        key = base64.b64encode(secrets.token_bytes(16)).decode()
        socket.transport.write(
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
        await asyncio.wait_for(socket.upgraded, 30)
        return socket

    def connection_made(self, transport) -> None:
        self.transport = transport

    def connection_lost(self, exc) -> None:
        if not self.upgraded.done():
            self.upgraded.set_exception(ConnectionError(f"the WebSocket upgrade failed: {exc}"))
        if not self.closed.done():
            self.closed.set_result(self.close_code)

    def data_received(self, data: bytes) -> None:
        arrival = time.monotonic()
        buffer = self.buffer
        buffer += data
        if not self.upgraded.done():
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            if buffer[9:12] != b"101":
                self.upgraded.set_exception(ConnectionError(f"upgrade refused: {bytes(buffer[:end])!r}"))
                self.transport.close()
                return
            del buffer[:end + 4]
            self.upgraded.set_result(None)
        while (head := frame_head(buffer)) is not None:
            first, length, at = head
            payload = bytes(buffer[at:at + length])
            del buffer[:at + length]
            opcode = first & 0x0F
            if opcode in (0, 1):
                self._fragments.append(payload)
                if first & 0x80:
                    text = self._fragments[0] if len(self._fragments) == 1 else b"".join(self._fragments)
                    self._fragments = []
                    self.on_text(text, arrival)
            elif opcode == 8:
                self.close_code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1005
                self._send(8, payload[:2])
                self.transport.close()
                return
            elif opcode == 9:
                self._send(10, payload)

    def _send(self, opcode: int, payload: bytes) -> None:
        mask = secrets.token_bytes(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.transport.write(bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + masked)

    def send_text(self, payload: bytes) -> None:
        """One text frame, masked as a client's must be (the XOR done on one big integer, not byte by byte)."""
        n = len(payload)
        if n < 126:
            head = bytes((0x81, 0x80 | n))
        elif n < 65536:
            head = bytes((0x81, 0x80 | 126)) + n.to_bytes(2, "big")
        else:
            head = bytes((0x81, 0x80 | 127)) + n.to_bytes(8, "big")
        mask = secrets.token_bytes(4)
        key = (mask * (n // 4 + 1))[:n]
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(n, "big")
        self.transport.write(head + mask + masked)

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            with contextlib.suppress(Exception):
                self._send(8, (1000).to_bytes(2, "big"))
            self.transport.close()


class _Flow(msgspec.Struct):
    awaiting: tuple[int, ...] = ()


class _View(msgspec.Struct):
    """The fields of a pushed TableView the driver reads; the rest is skipped."""

    version: int
    status: str
    seat: int | None
    flow: _Flow
    legal: list[msgspec.Raw]


class _Reply(msgspec.Struct):
    status: str
    version: int = 0
    code: str | None = None


class _Error(msgspec.Struct):
    code: str = "?"


class _Answer(msgspec.Struct):
    """A ``souk.CommandAnswer`` frame (``--send ws``): the POST's status and body."""

    status: int
    reply: _Reply | None = None
    error: _Error | None = None


_ANSWER = b'{"type":"souk.CommandAnswer"'
_view_decoder = msgspec.json.Decoder(_View)
_answer_decoder = msgspec.json.Decoder(_Answer)
_reply_decoder = msgspec.json.Decoder(_Reply)
_error_decoder = msgspec.json.Decoder(_Error)


# --- one driver's games -----------------------------------------------------------------------------------------

@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)  # seconds, from the request to the seat's pushed view
    answers: list[float] = field(default_factory=list)  # seconds, from the request to its HTTP answer
    sent_at: dict[int, float] = field(default_factory=dict)  # fanout: version a command reached -> its request
    rejected: dict[str, int] = field(default_factory=dict)
    stalls: int = 0
    games_finished: int = 0
    errors: list[str] = field(default_factory=list)
    pushes: int = 0  # play: the frames the seats' WebSockets got in the window, and their bytes
    push_bytes: int = 0


class Window:
    """When figures count: [start, end) in time.monotonic() (the same clock in every process on Linux)."""

    def __init__(self) -> None:
        self.start = self.end = float("inf")

    def open(self, at: float) -> bool:
        return self.start <= at < self.end

    def done(self) -> bool:
        return time.monotonic() >= self.end


class Pacer:
    """Even pacing at ``rate`` commands/s across the tasks that share it (0: no pacing)."""

    def __init__(self, rate: float) -> None:
        self.rate, self.next = rate, time.monotonic()

    async def wait(self) -> None:
        if self.rate > 0:
            self.next = max(self.next + 1 / self.rate, time.monotonic())
            delay = self.next - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)


class SeatClient:
    """A player: its HTTP connection, its WebSocket, the newest view pushed to it; ``ws_send``: its commands go
    over its WebSocket (``command``), one in flight."""

    def __init__(self, game: PlayedGame, seat: int, token: str, ws_send: bool = False) -> None:
        self.game, self.seat, self.token, self.ws_send = game, seat, token, ws_send
        self.http = Http(game.host, game.port)
        self.view: _View | None = None
        self.arrivals: collections.deque[tuple[int, float]] = collections.deque(maxlen=16)
        self.waiting: tuple[int, asyncio.Future] | None = None
        self.socket: Socket | None = None
        self.answer: asyncio.Future | None = None

    @property
    def path(self) -> str:
        return f"/games/{self.game.game_id}/seats/{self.seat}"

    async def start(self) -> None:
        self.socket = await Socket.open(self.game.host, self.game.port, f"{self.path}/ws?token={self.token}",
                                        self.on_text)

    def on_text(self, text: bytes, arrival: float) -> None:
        if text.startswith(_ANSWER):
            if self.answer is not None and not self.answer.done():
                self.answer.set_result((_answer_decoder.decode(text), arrival))
            return
        view = _view_decoder.decode(text)
        if self.game.counted is not None:
            self.game.counted(len(text), arrival)
        self.seen(view, arrival)

    def seen(self, view: _View, arrival: float) -> None:
        if self.view is not None and view.version <= self.view.version:
            return
        self.view = view
        self.arrivals.append((view.version, arrival))
        if self.waiting is not None and view.version >= self.waiting[0] and not self.waiting[1].done():
            self.waiting[1].set_result(arrival)
        self.game.saw(view)

    async def command(self, frame: bytes) -> tuple[_Answer, float]:
        """Sends a ``souk.Command`` frame; its answer and when it arrived."""
        self.answer = asyncio.get_running_loop().create_future()
        self.socket.send_text(frame)
        try:
            return await asyncio.wait_for(self.answer, STALL_S)
        finally:
            self.answer = None

    async def pushed(self, version: int) -> float:
        """When the view of ``version`` (or a newer one) arrived on this seat's socket (waiting for it)."""
        for seen, arrival in self.arrivals:
            if seen >= version:
                return arrival
        future = asyncio.get_running_loop().create_future()
        self.waiting = (version, future)
        try:
            return await asyncio.wait_for(future, STALL_S)
        finally:
            self.waiting = None

    def close(self) -> None:
        self.http.close()
        if self.socket is not None:
            self.socket.close()


class PlayedGame:
    def __init__(self, host: str, port: int, game_id: str, counted=None) -> None:
        """``counted(bytes, arrival)``: told of each frame a seat's socket gets."""
        self.host, self.port, self.game_id, self.counted = host, port, game_id, counted
        self.seats: list[SeatClient] = []
        self.version = -1
        self.over = False
        self.changed = asyncio.Event()

    def saw(self, view: _View) -> None:
        if view.version > self.version:
            self.version = view.version
        if view.status in FINAL:
            self.over = True
        self.changed.set()

    def actionable(self) -> list[SeatClient]:
        return [s for s in self.seats if s.view is not None and s.view.version == self.version
                and s.view.status == "playing" and s.view.legal]

    def close(self) -> None:
        for seat in self.seats:
            seat.close()


async def new_game(souk, host: str, port: int, game: str, seats: int, rng: random.Random,
                   counted=None, ws_send: bool = False) -> PlayedGame:
    """A game created and every seat taken through the SDK; each seat's socket open (``ws_send``: its commands
    go over it)."""
    created = await souk.create(game, "bench", seats, seed=rng.randbytes(32).hex(), unfair=True)
    played = PlayedGame(host, port, created.game_id, counted)
    for s in range(seats):
        joined = await souk.join(created.game_id, f"p{s}", s, entropy=rng.randbytes(32).hex())
        played.seats.append(SeatClient(played, s, joined.token, ws_send))
    await asyncio.gather(*(seat.start() for seat in played.seats))
    return played


async def play(played: PlayedGame, rng: random.Random, pacer: Pacer, window: Window, stats: Stats,
               at_once: bool = False) -> None:
    """One command in flight at a time until the game is over or the window closes; ``at_once``: every seat the
    game awaits sends its command at the same moment (each decided on its newest view, with that view's version as
    ``expected_version``), as the players of a simultaneous step do (Istanbul's answers, Samarkand's choices)."""
    while not played.over and not window.done():
        ready = played.actionable()
        if not ready:
            played.changed.clear()
            try:
                await asyncio.wait_for(played.changed.wait(), STALL_S)
            except TimeoutError:
                stats.stalls += 1
                await _resync(played)
            continue
        seats = ready if at_once else [rng.choice(ready)]
        await asyncio.gather(*(_send(played, seat, rng, pacer, window, stats) for seat in seats))


async def _send(played: PlayedGame, seat: SeatClient, rng: random.Random, pacer: Pacer, window: Window,
                stats: Stats) -> None:
    """One command of ``seat``: posted (or sent on its WebSocket), then its view awaited on the seat's WebSocket."""
    command = rng.choice(seat.view.legal)
    version = seat.view.version
    await pacer.wait()
    if seat.ws_send:
        frame = b'{"type":"souk.Command","command_id":"%s","command":%s,"expected_version":%d}' % (
            secrets.token_hex(12).encode(), bytes(command), version)
        sent = time.monotonic()
        try:
            answer, answered = await seat.command(frame)
        except TimeoutError:
            stats.stalls += 1
            await _resync(played)
            return
        status, reply, code = answer.status, answer.reply, answer.error.code if answer.error else "?"
    else:
        body = b'{"command_id":"%s","command":%s,"expected_version":%d}' % (
            secrets.token_hex(12).encode(), bytes(command), version)
        sent = time.monotonic()
        status, raw = await seat.http.request("POST", f"{seat.path}/commands", body, seat.token)
        answered = time.monotonic()
        if status == 200:
            reply, code = _reply_decoder.decode(raw), ""
        else:
            reply, code = None, _error_decoder.decode(raw).code if raw else str(status)
    if status != 200 or reply is None:
        if window.open(time.monotonic()):
            stats.rejected[code] = stats.rejected.get(code, 0) + 1
        if status >= 500 or status == 429:
            await asyncio.sleep(0.05)
        return
    stats.sent_at[reply.version] = sent
    if window.open(answered):
        stats.answers.append(answered - sent)
    try:
        arrival = await seat.pushed(reply.version)
    except TimeoutError:
        stats.stalls += 1
        await _resync(played)
        return
    if window.open(arrival):
        stats.latencies.append(arrival - sent)


async def _resync(played: PlayedGame) -> None:
    """No push for a while: read each seat's view over HTTP (a lost frame would show here as a stall)."""
    for seat in played.seats:
        status, raw = await seat.http.request("GET", f"{seat.path}/view", token=seat.token)
        if status == 200:
            seat.seen(_view_decoder.decode(raw), time.monotonic())


async def drive_games(base: str, config: dict, window: Window, stats: Stats, ready: asyncio.Event) -> None:
    """``config['games']`` games played at once, each replaced by a new one when it ends."""
    from services.client import SoukClient

    url = urlsplit(base)
    rng = random.Random(config["seed"])
    pacer = Pacer(config["rate"])

    def counted(size: int, arrival: float) -> None:
        if window.open(arrival):
            stats.pushes += 1
            stats.push_bytes += size

    async with SoukClient(base) as souk:
        ws_send = config.get("send") == "ws"
        games = [await new_game(souk, url.hostname, url.port, config["game"], config["seats"], rng, counted,
                                ws_send) for _ in range(config["games"])]
        ready.set()

        async def keep_playing(played: PlayedGame) -> None:
            while not window.done():
                try:
                    await play(played, rng, pacer, window, stats, config.get("at_once", False))
                finally:
                    played.close()
                if played.over:
                    stats.games_finished += 1
                if not window.done():
                    played = await new_game(souk, url.hostname, url.port, config["game"], config["seats"], rng,
                                            counted, ws_send)

        results = await asyncio.gather(*(keep_playing(g) for g in games), return_exceptions=True)
        stats.errors += [f"{type(r).__name__}: {r}" for r in results if isinstance(r, BaseException)]


# --- the driver processes ----------------------------------------------------------------------------------------

def _run(coro):
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


def driver_process(base: str, config: dict, control, results) -> None:
    """A load-generator process: plays games (``play``) or holds sockets (``fanout``), says when it is ready, waits
    for the window, and puts what it measured in ``results``."""
    _run(_driver(base, config, control, results))


async def _get(q, timeout: float):
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(queue_module.Empty):
            return q.get_nowait()
        if time.monotonic() > deadline:
            raise TimeoutError("no word from the bench")
        await asyncio.sleep(0.02)


@contextlib.contextmanager
def _collector_paused():
    """No garbage collection in a driver while it plays its window: a collection stops its event loop, and every
    command in flight is timed that much slower than the server served it. With 1,000 games' clients in one driver,
    its full collections took 100-280 ms and its middle ones 15-60 ms, about one a second: the load generator's own
    pauses in the p99 it reports. Its clients make next to no reference cycles (the collections within the window
    found nothing to free), so nothing piles up meanwhile; reference counting frees the rest as before."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


async def _driver(base: str, config: dict, control, results) -> None:
    index = config["index"]
    try:
        if config["mode"] == "play":
            stats, window, ready = Stats(), Window(), asyncio.Event()
            task = asyncio.create_task(drive_games(base, config, window, stats, ready))
            await asyncio.wait([task, asyncio.create_task(ready.wait())], return_when=asyncio.FIRST_COMPLETED)
            if task.done():
                task.result()
            results.put(("ready", index, None))
            window.start, window.end = await _get(control, 300)
            with _collector_paused():
                await task
            results.put(("done", index, {"latencies": stats.latencies, "answers": stats.answers,
                                         "rejected": stats.rejected, "stalls": stats.stalls, "games_finished": stats.games_finished,
                                         "errors": stats.errors[:5], "pushes": stats.pushes,
                                         "push_bytes": stats.push_bytes}))
        else:
            await _hold_sockets(base, config, control, results)
    except BaseException as exc:
        results.put(("failed", index, f"{type(exc).__name__}: {exc}"))
        raise


async def _hold_sockets(base: str, config: dict, control, results) -> None:
    """Fanout: opens sockets on the game it is told, records when each version arrives on each, and moves to the
    next game when told (``None``: done)."""
    url = urlsplit(base)
    index = config["index"]
    while True:
        order = await _get(control, 600)
        if order is None:
            return
        game_id, tokens, count = order
        audiences = [None, *range(len(tokens))]
        arrivals: dict[int, list[float]] = collections.defaultdict(list)
        wrong = [0]
        sockets: list[Socket] = []

        def receiver(seat: int | None):
            def on_text(text: bytes, arrival: float) -> None:
                view = _view_decoder.decode(text)
                if view.seat != seat:
                    wrong[0] += 1
                arrivals[view.version].append(arrival)
            return on_text

        for i in range(count):
            seat = audiences[(index + i) % len(audiences)]
            path = f"/games/{game_id}/ws" if seat is None else f"/games/{game_id}/seats/{seat}/ws?token={tokens[seat]}"
            sockets.append(await Socket.open(url.hostname, url.port, path, receiver(seat)))
        results.put(("ready", index, None))
        await _get(control, 600)  # the round is over
        for socket in sockets:
            socket.close()
        results.put(("done", index, {"arrivals": dict(arrivals), "wrong_audience": wrong[0],
                                     "closed_early": sum(s.closed.done() for s in sockets)}))


# --- the processes under test -----------------------------------------------------------------------------------

def _process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far (Linux /proc; 0 once it is gone)."""
    from services.bench.pipeline import _process_cpu as used

    try:
        return used(pid)
    except (FileNotFoundError, ProcessLookupError):
        return 0.0


def _tree_cpu(pid: int) -> float:
    """CPU seconds of a process and of every process below it (`souk gateway --processes N`'s children)."""
    from services.bench.pipeline import _stat

    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(_stat(int(entry))[1])
            except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
                continue
    tree, grew = {pid}, True
    while grew:
        below = {child for child, parent in parents.items() if parent in tree} - tree
        tree |= below
        grew = bool(below)
    return sum(_process_cpu(p) for p in tree)


class Cluster:
    """The stores and the server under test, as child processes; ``cpu()`` reads each one's CPU seconds so far."""

    def __init__(self, target: str, fsync: str, url: str | None, gateways: int = 1, limits: bool = False) -> None:
        """``limits``: the server's per-client limits (rates, open games, connections) as the environment or the
        defaults set them; else off (one load generator is many players from one address)."""
        self.target, self.fsync, self.url, self.gateways, self.limits = target, fsync, url, gateways, limits
        self.procs: dict[str, subprocess.Popen] = {}
        self.redis: dict[str, str] = {}
        self._servers: list = []
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._logs: dict[str, Any] = {}

    def start(self) -> str:
        if self.url:
            return self.url.rstrip("/")
        from services.embedded.redis import RedisServer, die_with_parent, free_port

        self._tmp = tempfile.TemporaryDirectory(prefix="souk-bench-http-")
        root = Path(self._tmp.name)
        events = RedisServer(root / "events", appendonly=True, fsync=self.fsync).start()
        self._servers.append(events)
        views = RedisServer(root / "views", appendonly=False).start()
        self._servers.append(views)
        self.redis = {"redis_events": events.url, "redis_views": views.url}
        port = free_port()
        unlimited = {} if self.limits else {"SOUK_RATE_PER_CLIENT": "0", "SOUK_RATE_PER_TOKEN": "0",
                                            "SOUK_OPEN_GAMES_PER_CLIENT": "0", "SOUK_CONNECTIONS_PER_CLIENT": "0"}
        env = {**os.environ, "REDIS_URL": events.url, "SOUK_VIEWS_REDIS_URL": views.url, "SOUK_LOG_LEVEL": "warning",
               "SOUK_HOST": "127.0.0.1", "SOUK_PORT": str(port), **unlimited,
               "SOUK_GATEWAY_PROCESSES": str(self.gateways)}
        roles = ["serve"] if self.target == "serve" else ["engine", "projector", "gateway"]
        for role in roles:
            log = self._logs[role] = tempfile.TemporaryFile()
            self.procs[role] = subprocess.Popen([sys.executable, "-m", "services.cli", role], env=env,
                                                stdout=log, stderr=subprocess.STDOUT, preexec_fn=die_with_parent)
        base = f"http://127.0.0.1:{port}"
        self._wait_healthy(base)
        return base

    def _wait_healthy(self, base: str) -> None:
        import httpx

        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    return
            stopped = [role for role, p in self.procs.items() if p.poll() is not None]
            if stopped or time.monotonic() > deadline:
                raise BenchError(f"the server did not start ({', '.join(stopped) or 'timeout'}):\n"
                                           + self.logs())
            time.sleep(0.1)

    def logs(self) -> str:
        out = []
        for role, log in self._logs.items():
            log.seek(0)
            out.append(f"--- souk {role}:\n{log.read()[-4000:].decode(errors='replace')}")
        return "\n".join(out)

    def cpu(self) -> dict[str, float]:
        """CPU seconds so far of each server process (with its children) and of each redis-server (/proc)."""
        out = {role: _tree_cpu(p.pid) for role, p in self.procs.items()}
        for name, server in zip(self.redis, self._servers):
            out[name] = _process_cpu(server.process.pid)
        return out

    def appendfsync(self) -> str | None:
        """The event store's ``appendfsync`` as the running redis-server has it (None: a server not started here)."""
        import redis

        if "redis_events" not in self.redis:
            return None
        client = redis.Redis.from_url(self.redis["redis_events"], decode_responses=True)
        try:
            return client.config_get("appendfsync")["appendfsync"]
        finally:
            client.close()

    def redis_calls(self) -> dict[str, dict[str, int]]:
        """Each Redis's calls so far by command name (``INFO commandstats``), less the INFO calls that read them,
        and under ``(reads)`` the read events it processed (``total_reads_processed``: a client's request or
        pipeline read at once, so about the round trips; the INFO calls' own are left out)."""
        import redis

        out = {}
        for name, url in self.redis.items():
            client = redis.Redis.from_url(url)
            try:
                stats = client.info("commandstats")
                reads = int(client.info("stats")["total_reads_processed"])
            finally:
                client.close()
            out[name] = {key.removeprefix("cmdstat_"): int(value["calls"]) for key, value in stats.items()
                         if key != "cmdstat_info"}
            out[name]["(reads)"] = reads - int(stats.get("cmdstat_info", {}).get("calls", 0)) - 1
        return out

    def stopped(self) -> list[str]:
        return [role for role, p in self.procs.items() if p.poll() is not None]

    def stop(self) -> None:
        for p in self.procs.values():
            p.terminate()
        for p in self.procs.values():
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for server in self._servers:
            server.stop()
        for log in self._logs.values():
            log.close()
        if self._tmp:
            self._tmp.cleanup()


# --- the orchestration ------------------------------------------------------------------------------------------

def _pct(values: list[float], p: float) -> float:
    return round(values[min(len(values) - 1, int(p * len(values)))] * 1000, 2) if values else 0.0


def _wait_all(results, drivers: list, kind: str, timeout: float) -> dict[int, Any]:
    got: dict[int, Any] = {}
    deadline = time.monotonic() + timeout
    while len(got) < len(drivers):
        try:
            what, index, payload = results.get(timeout=1)
        except queue_module.Empty:
            dead = [d for d in drivers if not d.is_alive()]
            if dead or time.monotonic() > deadline:
                raise BenchError(f"a driver stopped or timed out waiting for '{kind}'") from None
            continue
        if what == "failed":
            raise BenchError(f"driver {index} failed: {payload}")
        if what == kind:
            got[index] = payload
    return got


def run_bench(options: dict) -> dict:
    """Starts what the options say, measures, stops everything; the figures as a dict."""
    seats = options["seats"] or DEFAULT_SEATS[options["game"]]
    if options["gateways"] > 1 and (options["target"] != "split" or options["url"]):
        raise ValueError("--gateways is for --target split (`souk serve` is one process)")
    cluster = Cluster(options["target"], options["fsync"], options["url"], options["gateways"])
    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    drivers: list = []
    controls: list = []
    try:
        base = cluster.start()
        if options["mode"] == "play":
            figures = _bench_play(options, seats, base, cluster, ctx, results, drivers, controls)
        else:
            figures = _bench_fanout(options, seats, base, cluster, ctx, results, drivers, controls)
        if cluster.stopped():
            raise BenchError(f"{', '.join(cluster.stopped())} stopped during the run:\n{cluster.logs()}")
        figures["command"] = _command_line(options)
        return figures
    finally:
        for control in controls:
            with contextlib.suppress(Exception):
                control.put(None)
        for d in drivers:
            d.join(timeout=10)
            if d.is_alive():
                d.terminate()
                d.join()
        cluster.stop()


def _start_drivers(ctx, base: str, configs: list[dict], results, drivers: list, controls: list) -> None:
    for config in configs:
        control = ctx.Queue()
        process = ctx.Process(target=driver_process, args=(base, config, control, results), daemon=True)
        process.start()
        drivers.append(process)
        controls.append(control)


def _cpu_figures(cluster: Cluster, drivers: list, before: dict, after: dict, commands: int,
                 elapsed: float) -> dict:
    used = {k: after[k] - before[k] for k in after}
    return {
        "cpu_cores": {k: round(v / elapsed, 2) for k, v in used.items()},
        "cpu_us_per_command": {k: round(v / max(1, commands) * 1e6) for k, v in used.items()},
    }


def _snapshot(cluster: Cluster, drivers: list) -> dict[str, float]:
    cpu = cluster.cpu()
    cpu["drivers"] = sum(_process_cpu(d.pid) for d in drivers)
    return cpu


def _bench_play(options, seats, base, cluster, ctx, results, drivers, controls) -> dict:
    n = options["drivers"]
    per = [options["games"] // n + (i < options["games"] % n) for i in range(n)]
    configs = [{"index": i, "mode": "play", "game": options["game"], "seats": seats, "games": per[i],
                "rate": options["rate"] / n, "seed": options["seed"] * 1000 + i, "at_once": options.get("at_once", False),
                "send": options.get("send", "http")}
               for i in range(n) if per[i]]
    _start_drivers(ctx, base, configs, results, drivers, controls)
    _wait_all(results, drivers, "ready", 300)
    start = time.monotonic() + options["warmup"]
    end = start + options["seconds"]
    for control in controls:
        control.put((start, end))
    time.sleep(max(0.0, start - time.monotonic()))
    before = _snapshot(cluster, drivers)
    calls_before = cluster.redis_calls()
    time.sleep(max(0.0, end - time.monotonic()))
    after = _snapshot(cluster, drivers)
    calls_after = cluster.redis_calls()
    done = _wait_all(results, drivers, "done", STALL_S + 60)
    latencies = sorted(x for d in done.values() for x in d["latencies"])
    answers = sorted(x for d in done.values() for x in d["answers"])
    rejected: dict[str, int] = {}
    for d in done.values():
        for code, count in d["rejected"].items():
            rejected[code] = rejected.get(code, 0) + count
    pushes, push_bytes = sum(d["pushes"] for d in done.values()), sum(d["push_bytes"] for d in done.values())
    elapsed = options["seconds"]
    return {
        "mode": "play", "target": options["url"] or options["target"], "game": options["game"], "seats": seats,
        "games": options["games"], "clients": options["games"] * seats, "drivers": len(configs),
        "seconds": elapsed, "offered_rate": options["rate"] or None, "commands": len(latencies),
        "commands_per_s": round(len(latencies) / elapsed, 1), "p50_ms": _pct(latencies, 0.50),
        "p99_ms": _pct(latencies, 0.99), "max_ms": round(latencies[-1] * 1000, 2) if latencies else 0.0,
        # from the request to its HTTP answer (the engine's reply, then the views projected): the rest of p50_ms
        # is the push to the seat's socket
        "answer_p50_ms": _pct(answers, 0.50), "answer_p99_ms": _pct(answers, 0.99),
        "rejected": rejected, "at_once": options.get("at_once", False),
        "send": options.get("send", "http"),  # how the seats sent their commands: POSTs, or frames on their sockets
        # simultaneous seats: the commands refused because another seat's answer moved the game first (stale)
        "stale_per_command": round(rejected.get("stale", 0) / len(latencies), 3) if latencies else 0.0,
        "stalls": sum(d["stalls"] for d in done.values()),
        "games_finished": sum(d["games_finished"] for d in done.values()),
        "errors": [e for d in done.values() for e in d["errors"]],
        # the frames pushed to the seats' sockets in the window: per command, and their mean size
        "pushes_per_command": round(pushes / len(latencies), 2) if latencies else 0.0,
        "bytes_per_push": round(push_bytes / pushes) if pushes else 0,
        **_cpu_figures(cluster, drivers, before, after, len(latencies), elapsed),
        "event_store_appendfsync": cluster.appendfsync(),  # as the event store's redis-server runs
        # each Redis's calls per measured command, by command name (INFO commandstats over the window)
        "redis_calls_per_command": _calls_per_command(calls_before, calls_after, len(latencies)),
    }


def _calls_per_command(before: dict, after: dict, commands: int) -> dict[str, dict[str, float]]:
    out = {}
    for name, calls in after.items():
        made = {cmd: n - before.get(name, {}).get(cmd, 0) for cmd, n in calls.items()}
        out[name] = {cmd: round(n / max(1, commands), 2) for cmd, n in sorted(made.items(), key=lambda kv: -kv[1])
                     if n > 0}
    return out


def _bench_fanout(options, seats, base, cluster, ctx, results, drivers, controls) -> dict:
    return _run(_fanout(options, seats, base, cluster, ctx, results, drivers, controls))


async def _fanout(options, seats, base, cluster, ctx, results, drivers, controls) -> dict:
    from services.client import SoukClient

    n = options["drivers"]
    configs = [{"index": i, "mode": "fanout"} for i in range(n)]
    _start_drivers(ctx, base, configs, results, drivers, controls)
    per = [options["sockets"] // n + (i < options["sockets"] % n) for i in range(n)]
    url = urlsplit(base)
    rng = random.Random(options["seed"])
    pacer = Pacer(options["rate"])
    push: list[float] = []
    commands = rounds = wrong = closed_early = 0
    stats = Stats()
    measured = 0.0
    cpu_used: dict[str, float] = collections.defaultdict(float)
    deadline = float("inf")  # set once the first game's sockets are all open
    async with SoukClient(base) as souk:
        while time.monotonic() < deadline:
            played = await new_game(souk, url.hostname, url.port, options["game"], seats, rng,
                                    ws_send=options.get("send") == "ws")
            tokens = [s.token for s in played.seats]
            for control, count in zip(controls, per):
                control.put((played.game_id, tokens, count))
            await asyncio.to_thread(_wait_all, results, drivers, "ready", 300)
            window = Window()
            window.start = time.monotonic() + (options["warmup"] if not rounds else 0.0)
            if not rounds:
                deadline = window.start + options["seconds"]
            window.end = deadline
            stats.sent_at.clear()
            before = await asyncio.to_thread(_snapshot, cluster, drivers)
            started = time.monotonic()
            try:
                await play(played, rng, pacer, window, stats)
            finally:
                played.close()
            await asyncio.sleep(0.5)  # the last pushes
            after = await asyncio.to_thread(_snapshot, cluster, drivers)
            for control in controls:
                control.put("next")
            done = await asyncio.to_thread(_wait_all, results, drivers, "done", 120)
            rounds += 1
            in_window = {v: t for v, t in stats.sent_at.items() if window.open(t)}
            if not in_window:
                continue
            # the CPU of the rounds' measured parts (whole rounds after the warm-up)
            span = time.monotonic() - 0.5 - max(started, window.start)
            if window.start > started:  # the first round: count its CPU in proportion to its measured part
                share = span / max(1e-9, time.monotonic() - 0.5 - started)
            else:
                share = 1.0
            for k in after:
                cpu_used[k] += (after[k] - before[k]) * share
            measured += span
            commands += len(in_window)
            for d in done.values():
                wrong += d["wrong_audience"]
                closed_early += d["closed_early"]
                for version, arrivals in d["arrivals"].items():
                    sent = in_window.get(version)
                    if sent is not None:
                        push.extend(a - sent for a in arrivals)
    push.sort()
    return {
        "mode": "fanout", "target": options["url"] or options["target"], "game": options["game"], "seats": seats,
        "sockets": options["sockets"], "drivers": n, "seconds": round(measured, 2), "rounds": rounds,
        "offered_rate": options["rate"] or None, "commands": commands,
        "commands_per_s": round(commands / measured, 1) if measured else 0.0,
        "pushes": len(push), "push_p50_ms": _pct(push, 0.50), "push_p99_ms": _pct(push, 0.99),
        "push_max_ms": round(push[-1] * 1000, 2) if push else 0.0,
        "command_p99_ms": _pct(sorted(stats.latencies), 0.99), "wrong_audience": wrong,
        "sockets_closed_early": closed_early, "rejected": stats.rejected, "stalls": stats.stalls,
        "send": options.get("send", "http"),
        "cpu_cores": {k: round(v / measured, 2) for k, v in cpu_used.items()} if measured else {},
        "cpu_us_per_command": {k: round(v / max(1, commands) * 1e6) for k, v in cpu_used.items()},
    }


def _command_line(options: dict) -> str:
    parts = ["souk bench http", f"--mode {options['mode']}"]
    parts.append(f"--url {options['url']}" if options["url"] else f"--target {options['target']}")
    if options["gateways"] > 1:
        parts.append(f"--gateways {options['gateways']}")
    if options["fsync"] != "always" and not options["url"]:
        parts.append(f"--fsync {options['fsync']}")
    parts += [f"--game {options['game']}", f"--seconds {options['seconds']:g}", f"--warmup {options['warmup']:g}",
              f"--drivers {options['drivers']}", f"--rate {options['rate']:g}"]
    parts.append(f"--games {options['games']}" if options["mode"] == "play" else f"--sockets {options['sockets']}")
    if options.get("at_once"):
        parts.append("--at-once")
    if options.get("send", "http") != "http":
        parts.append(f"--send {options['send']}")
    return " ".join(parts)
