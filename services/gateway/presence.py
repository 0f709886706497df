"""Presence: which seats are connected, and since when (``TableView.presence``, ``LobbyEntry.presence``).

A seat is connected while a WebSocket opened with its token is open on any gateway, or for ``presence_window_s``
(60 s) after any HTTP request made with its token. Every gateway records what it holds in one hash per game in the
read store, ``souk:{pN}:presence:{game}`` (``keys.presence``: in the game's partition's slot), and every gateway reads it back the same way, so they all
agree:

- ``{seat}|http`` -> until (unix seconds): the seat's last request with its token + the window; only ever extended;
- ``{seat}|ws:{gateway}`` -> until: this gateway holds at least one socket of the seat: a lease it renews every
  third of ``presence_lease_s`` (30 s) while it holds one, and ends (until = now) when its last one closes. A
  gateway killed -9 renews nothing: its leases run out within ``presence_lease_s``, and the seat is no longer
  connected (unless something else holds it);
- ``{seat}`` -> since: when the seat's current stretch of presence began.

A seat is connected while one of its untils is in the future (``since``: the start of the stretch); when not, its
``since`` is when it left (its latest until), 0 when never seen. Each write is one Lua call (``_TOUCH``) that
also publishes ``souk:presence:updates:{game}`` when the seat's state changes (connected or gone), so every
gateway re-pushes that game's views to its sockets (``services.gateway.listeners.Updates``); a presence that ends
by itself (a lease or a window running out, no write) is noticed by each gateway following the game at the instant
it ends (a timer at the earliest until it read).

Why the read store and not the event store: presence is no fact of the game (no event, no record, nothing to
replay): it is the gateways' own, changes on every connection, and may be lost with no harm (the sockets' leases
write it again within a third of the lease; a request, at once). The read store is the disposable one, not
fsynced on each write, and already takes the gateway's other writes (its rate limits); the event store stays the
engine's log. The key expires a day after its last write, and ``souk archive`` removes it with the game's other
read models (``keys.read_model_keys``).

The clocks: the gateways stamp the untils with their own clock, as the engine stamps ``recorded_at`` (hosts kept in
time by NTP). The costs: a seat's HTTP request writes only when the stored until is more than
``HTTP_WRITE_EVERY_S`` old (at most one write a second per seat and gateway, never one per request); serving a view
splices the presence into the view's stored bytes (``with_presence``: no decoding of the view), and the presence
comes from this gateway's cache of it: a game's presence cannot change but by a notice (a seat comes or goes: every
gateway hears it and forgets the game's) or at the earliest until it holds (a lease or a window that may run out),
so it is kept until then (at most ``CACHE_S``), and only while the notices are heard (the listener connected).
Without it, the hash is read in the same round trip as the view (``Resp.calls``).

A seat the server's bot plays from the start (``SeatInfo.bot``: ``POST /games/{id}/bots``, a rematch of such a
game) has no token and opens no socket, yet it never walks away: it is always connected (``since`` 0), whatever
the hash says. That is decided where the presence meets the seats (``with_presence`` on a stored view or lobby
entry, ``with_bots`` on a decoded one), not in the cached presence, which knows no seats: a bot seated after the
presence was cached shows as connected in the very view that seats it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable

import msgspec
import structlog

from contracts.readmodels import SeatInfo
from contracts.table import SeatPresence
from services.runtime.loop import stop_task
from services.store import keys
from services.store.codec import encoder
from services.store.lru import Lru
from services.store.resp import Resp

log = structlog.get_logger("souk.gateway")

KEY_TTL_S = 86_400  # a game's presence hash nobody wrote for a day goes (who was there, and when they left)
HTTP_WRITE_EVERY_S = 1.0  # a seat's requests extend its window at most this often per gateway (never per request)
CACHE_S = 5.0  # a game's presence is kept at most this long by a gateway (a bound on a notice it may have missed)

_TOUCH = """
-- KEYS[1]: the game's presence hash. ARGV: its channel, the seat, the holder ('http' or 'ws:{gateway}'), its new
-- until, now, the hash's TTL, and 'on' (hold until then: never shortened) or 'off' (this holder lets go now).
-- Returns 1 when the seat's state changed (it came, or it left), published on the channel; else 0.
local key, channel, seat, holder = KEYS[1], ARGV[1], ARGV[2], ARGV[3]
local untl, now = tonumber(ARGV[4]), tonumber(ARGV[5])
local prefix = seat .. '|'
local mine = prefix .. holder
local flat = redis.call('HGETALL', key)
local before, others, held, stale = false, false, nil, {}
for i = 1, #flat, 2 do
  local f = flat[i]
  if string.sub(f, 1, #prefix) == prefix then
    local u = tonumber(flat[i + 1])
    if f == mine then held = u end
    if u > now then
      before = true
      if f ~= mine then others = true end
    elseif f ~= mine then
      stale[#stale + 1] = f
    end
  end
end
if ARGV[7] == 'off' then
  if held == nil or held <= now then return 0 end
  redis.call('HSET', key, mine, ARGV[5])
  if not others then
    redis.call('PUBLISH', channel, seat)
    return 1
  end
  return 0
end
if #stale > 0 then redis.call('HDEL', key, unpack(stale)) end
if not before then redis.call('HSET', key, seat, ARGV[5]) end
if held == nil or untl > held then redis.call('HSET', key, mine, ARGV[4]) end
redis.call('EXPIRE', key, ARGV[6])
if not before then
  redis.call('PUBLISH', channel, seat)
  return 1
end
return 0
"""


def read(flat: list[bytes] | None, seats: int, now: float) -> tuple[tuple[SeatPresence, ...], float | None]:
    """The presence of seats 0 to ``seats - 1`` from the hash's fields (HGETALL's flat list), at ``now``; and the
    earliest instant after ``now`` when a seat may stop being connected (None: nobody is)."""
    since: dict[int, float] = {}
    latest: dict[int, float] = {}  # each seat's latest until
    ends: float | None = None
    for i in range(0, len(flat or ()), 2):
        field, value = flat[i], float(flat[i + 1])
        seat, bar, _ = field.partition(b"|")
        try:
            n = int(seat)
        except ValueError:
            continue
        if not bar:
            since[n] = value
            continue
        if value > latest.get(n, 0.0):
            latest[n] = value
        if value > now and (ends is None or value < ends):
            ends = value
    out = []
    for seat in range(seats):
        until = latest.get(seat, 0.0)
        if until > now:
            out.append(SeatPresence(seat, True, since.get(seat, now)))
        else:
            out.append(SeatPresence(seat, False, until))
    return tuple(out), ends


_EMPTY_TAIL = b'"presence":[]}'
_view_or_entry = msgspec.json.Decoder(dict)


_BOT_MARK = b'"bot":"'  # in a stored view's or entry's seats when a bot plays one (else "bot":null)


def with_presence(raw: bytes, presence: bytes) -> bytes:
    """A stored TableView's (or LobbyEntry's) JSON with ``presence`` (a JSON array) as its presence: spliced in
    where the projector writes its empty presence, its last field (no decoding); views stored before presence
    existed, and anything else, are decoded and encoded again. The seats the server's bots play are connected
    (their seats decoded only when the bytes name a bot)."""
    if _BOT_MARK in raw and (bots := bot_seats(_seat_infos_decoder.decode(raw).seats)):
        presence = encoded(with_bots(decoded(presence), bots))
    if raw.endswith(_EMPTY_TAIL):
        return b"".join((raw[:-3], presence, b"}"))
    whole = _view_or_entry.decode(raw)
    whole["presence"] = msgspec.Raw(presence)
    return encoder.encode(whole)


class _Seats(msgspec.Struct):
    seats: tuple[msgspec.Raw, ...]


class _SeatInfos(msgspec.Struct):
    seats: tuple[SeatInfo, ...]


_seats_decoder = msgspec.json.Decoder(_Seats)
_seat_infos_decoder = msgspec.json.Decoder(_SeatInfos)
_presence_decoder = msgspec.json.Decoder(tuple[SeatPresence, ...])


def decoded(presence: tuple[SeatPresence, ...] | bytes) -> tuple[SeatPresence, ...]:
    return _presence_decoder.decode(presence) if isinstance(presence, bytes) else presence


def bot_seats(seats: tuple[SeatInfo, ...]) -> tuple[int, ...]:
    """The seats the server's bots play (``SeatInfo.bot``)."""
    return tuple(s.seat for s in seats if s.bot is not None)


def with_bots(presence: tuple[SeatPresence, ...], bots: tuple[int, ...]) -> tuple[SeatPresence, ...]:
    """``presence`` with the bots' seats connected, since 0 (a bot is at the table from its seating on)."""
    if not bots:
        return presence
    return tuple(SeatPresence(p.seat, True, 0.0) if p.seat in bots else p for p in presence)


def seats_in(raw: bytes) -> int:
    """How many seats a stored view (or lobby entry) has, without decoding the rest of it."""
    return len(_seats_decoder.decode(raw).seats)


class Presence:
    """This gateway's side of presence: records its seats' requests and sockets, and reads a game's presence."""

    def __init__(self, hot: Resp, window_s: float, lease_s: float) -> None:
        self.hot = hot
        self.window_s = window_s
        self.lease_s = max(lease_s, 0.3)
        self.holder = f"ws:{uuid.uuid4().hex[:12]}"  # this gateway's sockets, in every game's hash
        self.sockets: dict[tuple[str, int], int] = {}  # (game, seat) -> sockets of it open here
        # (game, seat) -> its latest request here while a socket of it is open here (written when the last closes)
        self._requests: dict[tuple[str, int], float] = {}
        self._http: Lru[tuple[str, int], float] = Lru(100_000)  # (game, seat) -> the until this gateway last wrote
        self._sha = _sha1(_TOUCH)
        self._task: asyncio.Task | None = None
        # game -> its presence (JSON) and until when it holds; kept only while ``listening()`` (the notices heard:
        # ``services.gateway.listeners.Updates`` sets it)
        self._cache: Lru[str, tuple[bytes, float, float | None]] = Lru(10_000)  # and the earliest until read
        self.generation = 0  # grows with every forgetting: a read begun before one is not kept
        self.listening: Callable[[], bool] = lambda: False

    async def _touch(self, game_id: str, seat: int, holder: str, until: float, now: float, mode: str) -> int:
        changed = await self.hot.evalsha(self._sha, _TOUCH, (keys.presence(game_id),), keys.presence_updates(game_id),
                                         seat, holder, repr(until), repr(now), KEY_TTL_S, mode)
        if changed:  # this gateway's own change: forgotten now, not when its notice comes back
            self.forget(game_id)
        return changed

    def forget(self, game_id: str | None = None) -> None:
        """A seat of ``game_id`` came or went (None: any game: the notices may have been missed)."""
        self.generation += 1
        if game_id is None:
            self._cache.clear()
        else:
            self._cache.pop(game_id)

    def cached(self, game_id: str, now: float) -> bytes | None:
        """The game's presence (JSON) as this gateway knows it, if it still holds at ``now``; else None."""
        hit = self.known(game_id, now)
        return hit[0] if hit is not None else None

    def known(self, game_id: str, now: float) -> tuple[bytes, float | None] | None:
        """``cached``, and the earliest instant a seat may stop being connected (as ``present`` says)."""
        hit = self._cache.get(game_id)
        if hit is None or now >= hit[1] or not self.listening():
            return None
        return hit[0], hit[2]

    def present(self, game_id: str, flat: list[bytes] | None, seats: int,
                generation: int) -> tuple[bytes, float | None]:
        """The presence (JSON) read from the game's hash (``flat``, read when ``generation`` was current), kept
        until it may change, and the earliest instant a seat may stop being connected (None: nobody is)."""
        now = time.time()
        found, ends = read(flat, seats, now)
        data = encoded(found)
        if generation == self.generation and self.listening():
            self._cache.put(game_id, (data, min(ends, now + CACHE_S) if ends is not None else now + CACHE_S, ends))
        return data, ends

    async def seen(self, game_id: str, seat: int) -> None:
        """A request with the seat's token: connected for the window from now. Written at most once a second per
        seat (the stored until is then at most that much behind), and not at all while a socket of the seat is open
        here (it holds the seat): its last request's window is written when that socket closes. A failed write is
        logged, never the request's failure (presence is a courtesy, the request is not)."""
        if self.window_s <= 0:
            return
        now = time.time()
        if (game_id, seat) in self.sockets:
            self._requests[(game_id, seat)] = now
            return
        until = now + self.window_s
        written = self._http.get((game_id, seat))
        if written is not None and until - written < min(HTTP_WRITE_EVERY_S, self.window_s / 10):
            return
        self._http.put((game_id, seat), until)
        try:
            await self._touch(game_id, seat, "http", until, now, "on")
        except Exception as exc:  # noqa: BLE001 - the read store away: the request goes on
            self._http.pop((game_id, seat))
            log.warning("presence_not_written", game_id=game_id, seat=seat, error=str(exc))

    @contextlib.asynccontextmanager
    async def socket(self, game_id: str, seat: int) -> AsyncIterator[None]:
        """While a socket of the seat is open here: the gateway's lease on the seat, renewed by ``start``'s task;
        let go when the last one closes."""
        key = (game_id, seat)
        count = self.sockets.get(key, 0)
        self.sockets[key] = count + 1
        if not count:
            await self._hold(game_id, seat)
        try:
            yield
        finally:
            left = self.sockets.get(key, 1) - 1
            if left:
                self.sockets[key] = left
            else:
                self.sockets.pop(key, None)
                asked = self._requests.pop(key, None)
                with contextlib.suppress(Exception):  # the lease runs out by itself if this fails
                    now = time.time()
                    if asked is not None and asked + self.window_s > now:  # its requests' window, first
                        await self._touch(game_id, seat, "http", asked + self.window_s, now, "on")
                    await self._touch(game_id, seat, self.holder, 0.0, now, "off")

    async def _hold(self, game_id: str, seat: int) -> None:
        now = time.time()
        try:
            await self._touch(game_id, seat, self.holder, now + self.lease_s, now, "on")
        except Exception as exc:  # noqa: BLE001 - renewed on the next beat
            log.warning("presence_not_written", game_id=game_id, seat=seat, error=str(exc))

    async def _beat(self) -> None:
        """Renews this gateway's leases on the seats whose sockets it holds, every third of the lease (a lease
        then survives two lost renewals)."""
        while True:
            await asyncio.sleep(self.lease_s / 3)
            held = list(self.sockets)
            if held:
                await asyncio.gather(*(self._hold(game_id, seat) for game_id, seat in held))

    def start(self) -> None:
        self._task = asyncio.create_task(self._beat(), name="souk-presence-beat")

    async def stop(self) -> None:
        """Stops renewing and lets go of every seat held here (a gateway stopped normally leaves no lease)."""
        if self._task is not None:
            await stop_task(self._task, "presence_renewal")
            self._task = None
        held, self.sockets = list(self.sockets), {}
        now = time.time()
        with contextlib.suppress(Exception):
            await asyncio.gather(*(self._touch(g, s, self.holder, 0.0, now, "off") for g, s in held))

    async def of(self, game_id: str, seats: int) -> tuple[SeatPresence, ...]:
        """The game's presence now, seats 0 to ``seats - 1``."""
        flat = await self.hot.call_again_if_lost("HGETALL", keys.presence(game_id))
        return read(flat, seats, time.time())[0]

    async def of_many(self, game_ids: list[str], seats: list[int]) -> list[tuple[SeatPresence, ...] | bytes]:
        """The presence of several games (a lobby page): this gateway's where it keeps it (JSON), the others' read
        in one round trip."""
        now = time.time()
        found: list[tuple[SeatPresence, ...] | bytes | None] = [self.cached(g, now) for g in game_ids]
        missing = [i for i, known in enumerate(found) if known is None]
        if missing:
            flats = await self.hot.calls(*[("HGETALL", keys.presence(game_ids[i])) for i in missing])
            for i, flat in zip(missing, flats):
                found[i] = read(flat, seats[i], now)[0]
        return found


def encoded(presence: tuple[SeatPresence, ...]) -> bytes:
    return encoder.encode(presence)


def _sha1(script: str) -> str:
    import hashlib

    return hashlib.sha1(script.encode()).hexdigest()
