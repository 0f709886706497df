"""``souk bench realtime``: how late Samarkand's real-time countdown runs (issue #19, section 2).

Games of Le marché de Samarkand in real time (``countdown_mode: "realtime"``, ``--interval-ms``) are played
through the front door against a server: ``--url`` (one already running, with its clock worker), else a
``souk serve`` of its own on redis-servers of its own (``services.bench.http.Cluster``; ``souk serve`` runs the
engine, the projector, the gateway and the clock worker). Every seat is a client with its WebSocket open; it
chooses its card each round (the first legal ``ChooseCard``) and never stops, so every value of every round runs
out: each is one ``Tick`` the clock worker sends. A game has 10 rounds of 10 values; ``--games`` are played at
once, new ones started until ``--values`` values have closed.

Measured, for every value closed by its timer (a ``samarkand.ValueClosed`` whose command is the clock worker's
tick, ``clock:<version>:tick:``), from the game's history once it is over:
- **tick**: from the value's due instant (the ``timer.due`` of the ``table.ClocksSet`` before it: the engine's
  clock when the value appeared, plus the interval) to the ``recorded_at`` of its ``ValueClosed`` (the engine's
  clock at the Tick): what the clock worker and the engine add to the rules' interval;
- **push**: from that ``recorded_at`` to the arrival, on each seat's WebSocket, of the first view that includes
  it (the projector and the gateway): per seat and value.
Both compare instants of one machine's wall clock (``time.time()`` here, the engine's ``recorded_at`` there):
the figures are for a server on the same machine as this command. Printed: p50, p99 and the largest of each, in
milliseconds, how many values closed more than one interval late (they showed twice as long), with the machine's
load average at the start and the end of the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import time
from typing import Any
from urllib.parse import urlsplit

import msgspec

from services.bench import BenchError

SEATS = 3
VALUES_PER_GAME = 100  # 10 rounds of 10 values, nobody stopping
STALL_S = 15.0  # no push for this long while a game runs: the bench gives up
MOVES = (b'"samarkand.ChooseCard"', b'"samarkand.DiscardGoods"', b'"samarkand.ChooseLeastBought"')


class _View(msgspec.Struct):
    """The fields of a pushed TableView this bench reads."""

    version: int
    status: str
    legal: list[msgspec.Raw] = []


class _Timer(msgspec.Struct):
    key: str
    due: float


class _Event(msgspec.Struct):
    timer: _Timer | None = None  # table.ClocksSet's


class _Entry(msgspec.Struct):
    seq: int
    type: str
    command_id: str
    recorded_at: float
    event: _Event


class _Page(msgspec.Struct):
    entries: list[_Entry]
    next_after: int
    version: int


_view_decoder = msgspec.json.Decoder(_View)
_page_decoder = msgspec.json.Decoder(_Page)


def _pct(values: list[float], p: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * p))] * 1000, 2)


class _Seat:
    """One player: an HTTP connection for its commands, its WebSocket, every view's arrival (wall clock)."""

    def __init__(self, game: _Game, seat: int, token: str) -> None:
        from services.bench.http import Http

        self.game, self.seat, self.token = game, seat, token
        self.http = Http(game.host, game.port)
        self.arrivals: list[tuple[int, float]] = []  # (version, time.time() it arrived)
        self.view: _View | None = None
        self.socket: Any = None
        self.offset = time.time() - time.monotonic()  # the Socket stamps arrivals with time.monotonic()

    @property
    def path(self) -> str:
        return f"/games/{self.game.game_id}/seats/{self.seat}"

    async def start(self) -> None:
        from services.bench.http import Socket

        self.socket = await Socket.open(self.game.host, self.game.port, f"{self.path}/ws?token={self.token}",
                                        self.on_text)

    def on_text(self, text: bytes, arrival: float) -> None:
        with contextlib.suppress(msgspec.ValidationError, msgspec.DecodeError):  # a catch-up page: not a view
            view = _view_decoder.decode(text)
            self.arrivals.append((view.version, arrival + self.offset))
            if self.view is None or view.version > self.view.version:
                self.view = view
                self.game.changed.set()

    def pushed_at(self, version: int) -> float | None:
        """When the first view of ``version`` or newer arrived (None: none did)."""
        return next((at for v, at in self.arrivals if v >= version), None)

    async def move(self) -> None:
        """The seat's decision when it owes one that is not a stop (its card, a scoring choice): the first legal."""
        view = self.view
        if view is None or view.status != "playing" or not view.legal:
            return
        command = bytes(view.legal[0])
        if not any(tag in command for tag in MOVES):
            return  # a stop: this bench lets every value run out
        body = b'{"command_id":"%s","command":%s,"expected_version":%d}' % (
            secrets.token_hex(12).encode(), command, view.version)
        status, raw = await self.http.request("POST", f"{self.path}/commands", body, self.token)
        if status != 200 and status != 409:  # 409: stale, a newer view is coming
            raise BenchError(f"seat {self.seat}'s {command[:60]!r} refused: {status} {raw[:200]!r}")

    def close(self) -> None:
        self.http.close()
        if self.socket is not None:
            self.socket.close()


class _Game:
    def __init__(self, host: str, port: int, game_id: str) -> None:
        self.host, self.port, self.game_id = host, port, game_id
        self.seats: list[_Seat] = []
        self.changed = asyncio.Event()

    @property
    def over(self) -> bool:
        return any(s.view is not None and s.view.status in ("over", "cancelled") for s in self.seats)

    async def play(self) -> None:
        moved: set[tuple[int, int]] = set()  # (seat, version): one command per seat and view
        while not self.over:
            self.changed.clear()
            for seat in self.seats:
                if seat.view is not None and (seat.seat, seat.view.version) not in moved and seat.view.legal:
                    moved.add((seat.seat, seat.view.version))
                    await seat.move()
            try:
                await asyncio.wait_for(self.changed.wait(), STALL_S)
            except TimeoutError:
                raise BenchError(f"game {self.game_id}: no view pushed for {STALL_S:g} s (is a clock worker "
                                 "running?)") from None

    def close(self) -> None:
        for seat in self.seats:
            seat.close()


async def _history(game: _Game) -> list[_Entry]:
    """The game's whole history as a spectator reads it."""
    from services.bench.http import Http

    http, entries, after = Http(game.host, game.port), [], 0
    try:
        while True:
            status, raw = await http.request("GET", f"/games/{game.game_id}/history?after={after}&limit=500")
            if status != 200:
                raise BenchError(f"history of {game.game_id}: {status} {raw[:200]!r}")
            page = _page_decoder.decode(raw)
            entries.extend(page.entries)
            if not page.entries or page.next_after >= page.version:
                return entries
            after = page.next_after
    finally:
        http.close()


def latencies(entries: list[_Entry], seats: list[_Seat]) -> tuple[list[float], list[float]]:
    """(tick, push) latencies in seconds, from one game's history and its seats' arrivals (see the module)."""
    ticks: list[float] = []
    pushes: list[float] = []
    due: float | None = None
    for entry in entries:
        if entry.type == "table.ClocksSet":
            due = entry.event.timer.due if entry.event.timer is not None else None
        elif entry.type == "samarkand.ValueClosed" and ":tick:" in entry.command_id and due is not None:
            ticks.append(entry.recorded_at - due)
            for seat in seats:
                at = seat.pushed_at(entry.seq)
                if at is not None:
                    pushes.append(at - entry.recorded_at)
    return ticks, pushes


async def _one_game(souk: Any, host: str, port: int, interval_ms: int) -> tuple[list, list]:
    options = {"countdown_mode": "realtime", "countdown_interval_ms": interval_ms}
    created = await souk.create("samarkand", "bench realtime", SEATS, options)
    game = _Game(host, port, created.game_id)
    try:
        for s in range(SEATS):
            joined = await souk.join(created.game_id, f"p{s}", s)
            game.seats.append(_Seat(game, s, joined.token))
            await game.seats[-1].start()
        await game.play()
        await asyncio.sleep(0.2)  # the last pushes
        return latencies(await _history(game), game.seats)
    finally:
        game.close()


async def measure(url: str, values: int, interval_ms: int, games: int) -> dict[str, Any]:
    from services.client import SoukClient

    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    ticks: list[float] = []
    pushes: list[float] = []
    load_start = os.getloadavg()
    started = time.monotonic()
    async with SoukClient(url) as souk:
        while len(ticks) < values:
            results = await asyncio.gather(*(_one_game(souk, host, port, interval_ms) for _ in range(games)))
            for t, p in results:
                ticks.extend(t)
                pushes.extend(p)
            if not any(t for t, _ in results):
                raise BenchError("no value closed by its timer: does the server run a clock worker?")
    return {
        "interval_ms": interval_ms, "games_at_once": games, "values": len(ticks), "pushes": len(pushes),
        "tick_p50_ms": _pct(ticks, 0.50), "tick_p99_ms": _pct(ticks, 0.99), "tick_max_ms": _pct(ticks, 1.0),
        "tick_min_ms": round(min(ticks) * 1000, 2) if ticks else None,
        "ticks_late_by_an_interval": sum(t > interval_ms / 1000 for t in ticks),  # such a value showed twice as long
        "push_p50_ms": _pct(pushes, 0.50), "push_p99_ms": _pct(pushes, 0.99), "push_max_ms": _pct(pushes, 1.0),
        "seconds": round(time.monotonic() - started, 1),
        "load_start": [round(x, 2) for x in load_start], "load_end": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
    }


@contextlib.contextmanager
def serve() -> Any:
    """A ``souk serve`` of its own (redis-servers of its own, ``services.bench.http.Cluster``): yields its URL."""
    from services.bench.http import Cluster

    cluster = Cluster("serve", "always", None)
    try:
        yield cluster.start()
    finally:
        cluster.stop()
