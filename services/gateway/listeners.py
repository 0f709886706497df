"""The gateway's pub/sub listeners: the engine's replies to this gateway, and every game's view updates.

Each listener holds one pub/sub connection of its own and survives Redis going away: it reconnects with a
backoff (50 ms doubling to 1 s), subscribes again, then catches up on what it may have missed meanwhile (pub/sub
keeps nothing for an absent subscriber): ``Replies`` answers its waiting commands from the outcomes the engine
recorded, ``Updates`` reads again every view and position someone waits on. ``state`` says how it is doing
(``GET /health`` shows it).

``Updates`` fans one subscription out to any number of WebSockets and long-polls. Just before its notice, the
projector publishes each of the game's views on ``souk:pushes:{game}:{version}:{audience}``
(``services.store.pushes``: the bytes it stored): each followed audience's view is pushed from there, with no read
of the store. The views are read (one HMGET of every audience followed in this gateway, shared by
every client waiting on it, never one read per client or per audience) only when this gateway may have missed a
notice (the catch-up after a reconnection), for a newcomer's first view, for a seat's presence that changed, and
for a notice that came without them (too big, a rebuild's, or from an older projector). Views are whole: a missed notice loses nothing the
next one does not bring, and a view older than one already pushed to a feed is never pushed after it. Each
audience's view goes the same way (text or frame) to each of its sockets.

With ``presence`` (``services.gateway.presence``), every view pushed has the game's presence spliced in (this
gateway's cache of it, or read in the same round trip as the views); a seat connecting or leaving (its notice on
``souk:presence:updates:{game}``, or the instant a lease or a request's window runs out) pushes the views again:
the same version with the new presence.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import msgspec
import redis.asyncio as aioredis
import structlog

from contracts.envelope import CommandEnvelope, Reply
from contracts.readmodels import ViewsUpdated
from services.store import keys, pushes
from services.runtime import metrics
from services.store.codec import encoder, reply_decoder
from services.store.resp import Resp, Subscriber
from services.engine.service import command_key
from services.gateway import fanout
from services.gateway import presence as seen
from services.gateway.errors import ApiError

log = structlog.get_logger("souk.gateway")

BACKOFF_FIRST = 0.05  # seconds before the first reconnection attempt; doubles on each failure
BACKOFF_MAX = 1.0
IDLE_PING = 15.0  # a listener that heard nothing for this long pings, and reconnects if no answer comes
PING_ANSWER = 5.0


class _Versioned(msgspec.Struct):
    version: int


_notice_decoder = msgspec.json.Decoder(ViewsUpdated)
_version_decoder = msgspec.json.Decoder(_Versioned)  # a view's version, without decoding the rest of it


class ListenerState(msgspec.Struct):
    """What ``/health`` shows of a listener. ``since``: when it last connected or lost its connection (Unix
    time); ``reconnects``: how many times it connected again after losing its connection."""

    connected: bool = False
    since: float | None = None
    reconnects: int = 0
    last_error: str | None = None


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class _Subscription:
    """A background task holding one pub/sub subscription (``services.store.resp.Subscriber``) and handing each
    message to ``on_message``; on any failure it reconnects, subscribes again and calls ``catch_up``."""

    name = "listener"

    def __init__(self, redis: aioredis.Redis) -> None:
        self.redis = redis
        self.hot = Resp.like(redis)  # the per-command reads and writes: one auto-pipelined connection
        self.state = ListenerState()
        self._was_connected = False
        # How many times the subscription was made (each ``_connected``): a notice published while the same one
        # holds is heard (``Updates.wait_for`` trusts the notices of a game followed since then).
        self.subscribed = 0
        self._task: asyncio.Task | None = None
        self._ready = asyncio.Event()

    def subscriptions(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The channels and the patterns to subscribe to."""
        raise NotImplementedError

    def on_message(self, channel: bytes, data: bytes) -> None:
        raise NotImplementedError

    async def catch_up(self) -> None:
        """Called once subscribed (again): what was published while no subscription was active is lost."""

    async def start(self, timeout: float = 10.0) -> None:
        """Starts listening; returns once subscribed, or after ``timeout`` (the listener keeps trying)."""
        self._task = asyncio.create_task(self._listen(), name=f"souk-{self.name}-listener")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), timeout)
        if not self._ready.is_set():
            log.error("listener_not_connected", listener=self.name, error=self.state.last_error)

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None
        await self.hot.aclose()

    def _deliver(self, channel: bytes, data: bytes) -> None:
        try:
            self.on_message(channel, data)
        except Exception as exc:  # noqa: BLE001 - one bad message must not stop the listener
            log.warning("listener_message_dropped", listener=self.name, error=_describe(exc))

    async def _listen(self) -> None:
        delay = BACKOFF_FIRST
        while True:
            subscriber = Subscriber.like(self.redis, self._deliver)
            try:
                channels, patterns = self.subscriptions()
                # subscribed once Redis confirms it: only then can the catch-up miss nothing
                await asyncio.wait_for(subscriber.start(channels, patterns), PING_ANSWER)
                await self.catch_up()
                self._connected()
                delay = BACKOFF_FIRST
                await self._read(subscriber)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - whatever broke the connection, listen again
                self._disconnected(exc)
            finally:
                with contextlib.suppress(Exception):
                    await subscriber.aclose()
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX)

    async def _read(self, subscriber: Subscriber) -> None:
        """Until the connection ends; one silent for ``IDLE_PING`` is pinged, and given up without an answer
        within ``PING_ANSWER``."""
        loop = asyncio.get_running_loop()
        pinged_at: float | None = None
        answers_then = 0  # replies heard before the ping: any reply after it is an answer (not a time: see resp)
        while True:
            now = loop.time()
            if pinged_at is not None and subscriber.answers > answers_then:
                pinged_at = None
            if pinged_at is None:
                wait = subscriber.heard + IDLE_PING - now
                if wait <= 0:
                    subscriber.ping()
                    pinged_at, answers_then = now, subscriber.answers
                    wait = PING_ANSWER
            else:
                wait = pinged_at + PING_ANSWER - now
                if wait <= 0:
                    raise TimeoutError(f"no answer to PING within {PING_ANSWER} s")
            done, _ = await asyncio.wait({subscriber.lost}, timeout=wait)
            if done:
                raise subscriber.lost.result()

    def _connected(self) -> None:
        state = self.state
        if self._was_connected:
            state.reconnects += 1
            metrics.LISTENER_RECONNECTS.labels(self.name).inc()
            log.warning("listener_reconnected", listener=self.name, reconnects=state.reconnects,
                        down_s=round(time.time() - state.since, 3), last_error=state.last_error)
        state.connected, state.since = True, time.time()
        self.subscribed += 1
        metrics.LISTENER_CONNECTED.labels(self.name).set(1)
        self._was_connected = True
        self._ready.set()

    def _disconnected(self, exc: Exception) -> None:
        state = self.state
        state.last_error = _describe(exc)
        if state.connected or state.since is None:
            state.connected, state.since = False, time.time()
            metrics.LISTENER_CONNECTED.labels(self.name).set(0)
            log.warning("listener_disconnected", listener=self.name, error=state.last_error)


class Replies(_Subscription):
    """Sends commands and waits for the engine's answers on this gateway's own pub/sub channel."""

    name = "replies"

    def __init__(self, redis: aioredis.Redis, timeout: float) -> None:
        super().__init__(redis)
        self.timeout = timeout
        self.channel = keys.replies(uuid.uuid4().hex)
        # (game, seat, command id) -> the command and its answer to come, shared by concurrent resends
        self.waiting: dict[tuple[str, int | None, str], _Waiting] = {}

    def subscriptions(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return (self.channel,), ()

    def on_message(self, channel: bytes, data: bytes) -> None:
        reply = reply_decoder.decode(data)
        waiting = self.waiting.get((reply.game_id, reply.seat, reply.command_id))
        if waiting is None and reply.seat is not None:  # a join: sent for no seat, answered with the seat taken
            waiting = self.waiting.get((reply.game_id, None, reply.command_id))
        if waiting is not None and not waiting.answer.done():
            waiting.answer.set_result(reply)

    async def catch_up(self) -> None:
        """Answers every waiting command the engine answered meanwhile, from the outcome it recorded."""
        waiting = list(self.waiting.values())
        if not waiting:
            return
        pipe = self.redis.pipeline(transaction=False)
        for w in waiting:
            pipe.hget(keys.outcomes(w.env.game_id), command_key(w.env))
        answered = 0
        for w, recorded in zip(waiting, await pipe.execute()):
            if recorded is not None and not w.answer.done():
                w.answer.set_result(reply_decoder.decode(recorded))
                answered += 1
        log.info("replies_caught_up", waiting=len(waiting), answered=answered)

    async def send(self, env: CommandEnvelope) -> Reply:
        key = (env.game_id, env.seat, env.command_id)
        env = msgspec.structs.replace(env, reply_to=self.channel, sent_at=time.time())
        waiting = self.waiting.get(key)
        if waiting is None:
            waiting = self.waiting[key] = _Waiting(env, asyncio.get_running_loop().create_future())
        waiting.senders += 1
        try:
            await self.hot.call_again_if_lost("XADD", keys.commands(keys.partition(env.game_id)), "*", "c",
                                              encoder.encode(env))
            async with asyncio.timeout(self.timeout):  # no task a wait (asyncio.wait_for makes one)
                return await asyncio.shield(waiting.answer)
        except TimeoutError:
            recorded = await self.redis.hget(keys.outcomes(env.game_id), command_key(env))
            if recorded is not None:
                return reply_decoder.decode(recorded)
            raise ApiError(504, "engine_timeout",
                           "the engine did not answer in time; the command is queued: resend it with the same "
                           "command_id to learn its outcome") from None
        finally:
            waiting.senders -= 1
            if not waiting.senders and self.waiting.get(key) is waiting:
                del self.waiting[key]


class _Waiting:
    __slots__ = ("answer", "env", "senders")

    def __init__(self, env: CommandEnvelope, answer: asyncio.Future[Reply]) -> None:
        self.env, self.answer, self.senders = env, answer, 0


class _SharedRead:
    """One read for any number of callers: ``request`` starts ``read`` unless one is running, in which case that
    one runs once more when it ends (what it saw may predate the caller's request). A failed read is retried with
    backoff while ``wanted()``."""

    __slots__ = ("_again", "_read", "_task", "_wanted", "what")

    def __init__(self, what: str, read: Callable[[], Awaitable[None]], wanted: Callable[[], bool]) -> None:
        self.what, self._read, self._wanted = what, read, wanted
        self._task: asyncio.Task | None = None
        self._again = False

    def request(self) -> None:
        if self._task is not None and not self._task.done():
            self._again = True
        else:
            self._task = asyncio.create_task(self._run())

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _run(self) -> None:
        delay = BACKOFF_FIRST
        while self._wanted():
            self._again = False  # a request from now on is served by this read only if it comes after it
            try:
                await self._read()
            except Exception as exc:  # noqa: BLE001 - the read store is away: try again while someone waits
                log.warning("shared_read_failed", read=self.what, error=_describe(exc))
                await asyncio.sleep(delay)
                delay = min(delay * 2, BACKOFF_MAX)
                continue
            if not self._again:
                return


class Follower:
    """One WebSocket's place in a feed: the newest view offered to it, not yet taken (a slow socket skips the
    views it had no time to send: each view is whole).

    With a ``wire`` (``services.gateway.fanout.Wire``) each view offered is written at once as the frame the feed
    built for every socket of the audience, and ``next()`` only tells that the follower closed; a socket with
    too much unsent is held back until it drains, then gets the newest view.

    With ``patches`` (``?patch=1``), a view goes as the feed's JSON Patch from the view before it
    (``fanout.Step``) when that view is the last one this socket was sent, else whole: a socket that skipped a
    view, or has not had one yet, gets the whole view."""

    __slots__ = ("_changed", "_held", "_held_step", "_retry", "_text", "_text_step", "closed", "patches", "present",
                 "sent", "version", "wire")

    def __init__(self, since: int = -1, wire: Any = None, patches: bool = False) -> None:
        self.version = since  # the newest version offered (or, at first, the newest the client already has)
        # the presence of the view last offered; None: the client has ``since`` and nothing is known of its presence
        self.present: bytes | None = None
        self.wire = wire
        self.patches = patches
        self.sent = -1  # the feed's number (``Step.n``) of the view last sent to this socket; -1: none known
        self._text: str | None = None  # without a wire: the view to send next
        self._held: bytes | None = None  # with a wire: the newest frame held back from a slow socket
        self._text_step: Any = None  # their steps (``fanout.Step``), for a follower that takes patches
        self._held_step: Any = None
        self._retry: asyncio.TimerHandle | None = None
        self._changed = asyncio.Event()
        self.closed = False

    def offer(self, version: int, text: str, frame: bytes | None = None, present: bytes = b"",
              step: Any = None) -> None:
        """A view (with its presence, ``present``; ``step``: its place in the feed and its patch, for a follower
        that takes patches): sent if newer than the last one offered, or the same version with another presence (a
        seat came or left)."""
        if self.closed or version < self.version:
            return
        if version == self.version:
            known, self.present = self.present, present
            if known is None or known == present:  # the client has this view (``since``), or had it offered
                return
        self.version, self.present = version, present
        if self.wire is None:
            self._text, self._text_step = text, step
            self._changed.set()
        else:
            self._held, self._held_step = frame, step
            self._write()

    def _choose(self, whole: Any, step: Any) -> Any:
        """The patch when this socket was sent the view it goes from, else the whole view; notes what it sent."""
        if not self.patches:
            return whole
        sent, self.sent = self.sent, -1 if step is None else step.n
        if step is not None and step.patch is not None and step.base == sent and sent >= 0:
            return step.patch if isinstance(whole, str) else step.patch_frame
        return whole

    def _write(self) -> None:
        self._retry = None
        if self.closed or self._held is None:
            return
        wire = self.wire
        if not wire.usable():
            self.close()
            return
        if wire.backlog() > fanout.MAX_BACKLOG:  # the client reads slowly: nothing more for it until it drains
            self._retry = asyncio.get_running_loop().call_later(fanout.RETRY_S, self._write)
            return
        frame, self._held = self._held, None
        wire.write(self._choose(frame, self._held_step))

    def close(self) -> None:
        self.closed = True
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        self._changed.set()

    async def next(self) -> str | None:
        """The next view to send (TableView JSON, or a patch frame); None once closed."""
        while True:
            await self._changed.wait()
            self._changed.clear()
            if self.closed:
                return None
            if self._text is not None:
                text, self._text = self._text, None
                return self._choose(text, self._text_step)


class _Feed:
    """The followers of one game's view for one audience in this gateway."""

    __slots__ = ("audience", "followers", "last", "step", "version")

    def __init__(self, audience: str) -> None:
        self.audience = audience
        self.followers: set[Follower] = set()
        self.version = -1  # the newest version read
        self.last: bytes | None = None  # with followers taking patches: the last view offered, and its step
        self.step: Any = None

    def offer(self, raw: bytes, present: bytes | None = None, version: int | None = None) -> None:
        """The view read or pushed for this audience (of ``version``; None: read in the view), to each follower
        that has not had it (``present``: the seats' presence, spliced in): one decoding for all of them, and the
        same text object handed to every socket. When a follower takes patches, the JSON Patch from the view offered
        before is computed here, once. A view older than one offered before is dropped: a read answered after a
        newer view was pushed."""
        if version is None:
            version = _version_decoder.decode(raw).version
        if version < self.version:
            return
        self.version = version
        if present is not None:
            raw = seen.with_presence(raw, present)
        wired = [f.wire is not None for f in self.followers]
        text = raw.decode() if not all(wired) else ""  # the text only for a follower without a wire (a frame)
        frame = fanout.text_frame(raw) if any(wired) else None
        if any(f.patches for f in self.followers) and raw != self.last:  # (the same bytes read again: same step)
            self.step = fanout.step(self.step, self.last, version, raw)
            self.last = raw
        step = self.step if self.last == raw else None
        for follower in list(self.followers):  # a follower may close (and leave the feed) as it is offered
            follower.offer(version, text, frame, present or b"", step)


class _Game:
    """Who waits on one game in this gateway: followers of its views (a feed per audience), and long-polls
    waiting for a version. The views a projection publishes are pushed as they come (``push``); when they must be
    read, the views of every followed audience are read together: one HMGET, whatever the number of audiences and
    sockets."""

    __slots__ = ("changed", "feeds", "heard_from", "position", "push", "pushed", "recheck", "recheck_ends",
                 "version", "views", "waiters")

    def __init__(self, updates: Updates, game_id: str) -> None:
        # The subscription under which this gateway records the game's notices (``reached``; None: none held
        # then): while it holds, every notice published since is heard (``current``).
        self.heard_from = updates.subscribed if updates.state.connected else None
        self.feeds: dict[str, _Feed] = {}
        self.waiters = 0
        self.version = -1  # the newest projected version known (from notices and position reads)
        self.changed = asyncio.Event()  # set, and replaced, whenever ``version`` grows
        self.recheck: asyncio.TimerHandle | None = None  # reads again when a seat's presence may run out
        self.recheck_ends: float | None = None  # the instant ``recheck`` was set for
        # views pushed while this gateway did not know the game's presence, for ``views``' read (which then reads
        # the presence only): their version and each audience's view
        self.pushed: tuple[int, dict[str, bytes]] | None = None

        def push(version: int, audience: str, raw: bytes) -> None:
            """One audience's view of a projection (``services.store.pushes``), to its feed if one follows it here
            and has not had it: at once when this gateway knows the game's presence, else kept for ``views``' read
            (the projection's notice, right after its views, finds the feed behind and asks for it)."""
            feed = self.feeds.get(audience)
            if feed is None or version <= feed.version:
                return
            presence = updates.presence
            if presence is None:
                feed.offer(raw, None, version)
            elif (known := presence.known(game_id, now := time.time())) is not None:
                present, ends = known
                self._recheck_at(ends, now)
                feed.offer(raw, present, version)
            else:
                if self.pushed is None or self.pushed[0] != version:
                    self.pushed = (version, {})
                self.pushed[1][audience] = raw

        async def read_position() -> None:
            self.reached(int(await updates.hot.call_again_if_lost("GET", keys.position(game_id)) or 0))

        async def read_views() -> None:
            feeds = list(self.feeds.values())
            pushed, self.pushed = self.pushed, None
            if not feeds:
                return
            if pushed is not None and pushed[0] >= self.version and all(f.audience in pushed[1] for f in feeds):
                version, views = pushed  # the newest views, pushed: only the presence is read, if need be
                raws = [views[feed.audience] for feed in feeds]
                if updates.presence is None:
                    present = None
                elif (known := updates.presence.known(game_id, now := time.time())) is not None:
                    present, ends = known
                    self._recheck_at(ends, now)
                else:
                    generation = updates.presence.generation
                    flat = await updates.hot.call_again_if_lost("HGETALL", keys.presence(game_id))
                    present, ends = updates.presence.present(game_id, flat, seen.seats_in(raws[0]), generation)
                    self._recheck_at(ends, time.time())
                for feed, raw in zip(feeds, raws):
                    feed.offer(raw, present, version)
                return
            hmget = ("HMGET", keys.views(game_id), *[feed.audience for feed in feeds])
            if updates.presence is None:
                raws, present = await updates.hot.call_again_if_lost(*hmget), None
            elif (known := updates.presence.known(game_id, now := time.time())) is not None:
                present, ends = known  # this gateway's: no read of the hash (services.gateway.presence)
                self._recheck_at(ends, now)
                raws = await updates.hot.call_again_if_lost(*hmget)
            else:
                generation = updates.presence.generation
                raws, flat = await updates.hot.calls(hmget, ("HGETALL", keys.presence(game_id)))
                first = next((raw for raw in raws if raw is not None), None)
                if first is None:
                    return
                present, ends = updates.presence.present(game_id, flat, seen.seats_in(first), generation)
                self._recheck_at(ends, time.time())
            for feed, raw in zip(feeds, raws):
                if raw is not None:  # None: not projected yet; the projection's notice brings it
                    feed.offer(raw, present)

        self.position = _SharedRead(f"position {game_id}", read_position, lambda: self.waiters > 0)
        self.views = _SharedRead(f"views {game_id}", read_views, lambda: bool(self.feeds))
        self.push = push

    def _recheck_at(self, ends: float | None, now: float) -> None:
        """Reads the views again when the earliest presence read may run out (a lease or a request's window that
        nobody renews ends with no notice)."""
        if self.recheck is not None and ends == self.recheck_ends:
            return  # already set for that instant (most reads of a game: the same leases and windows)
        self.recheck_ends = ends
        if self.recheck is not None:
            self.recheck.cancel()
            self.recheck = None
        if ends is not None:
            self.recheck = asyncio.get_running_loop().call_later(ends - now + 0.01, self.views.request)

    def reached(self, version: int) -> None:
        if version > self.version:
            self.version = version
            self.changed.set()
            self.changed = asyncio.Event()

    def behind(self, version: int) -> bool:
        """Some audience followed here has not read ``version`` yet."""
        return any(version > feed.version for feed in self.feeds.values())

    def idle(self) -> bool:
        return not self.feeds and not self.waiters

    def current(self, updates: Updates) -> bool:
        """``version`` is the game's projected version, or a later notice is on its way here: a notice or a read
        of the position came in since this gateway records the game's notices, under the subscription that still
        holds. (A version published before the game was recorded here is at most the first one heard or read
        after: the projector writes the position and publishes its notice in one script, and the notices of one
        game come in the order they were published; every later notice is heard.)"""
        return self.version >= 0 and self.heard_from is not None and self.heard_from == updates.subscribed \
            and updates.state.connected

    def cancel(self) -> None:
        self.position.cancel()
        self.views.cancel()
        if self.recheck is not None:
            self.recheck.cancel()


class Updates(_Subscription):
    """One pattern subscription to every game's view updates, fanned out to this gateway's WebSockets
    (``follow``) and long-polls (``wait_for``)."""

    name = "updates"
    _prefix = len(keys.view_updates(""))
    _presence = keys.presence_updates("").encode()
    _pushes = keys.view_pushes("").encode()

    def __init__(self, redis: aioredis.Redis, presence: Any = None) -> None:
        super().__init__(redis)
        self.games: dict[str, _Game] = {}
        self.presence = presence  # a services.gateway.presence.Presence: views pushed with the seats' presence
        if presence is not None:  # it keeps a game's presence only while its notices are heard here
            presence.listening = lambda: self.state.connected

    def subscriptions(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        if self.presence is None:
            return (), (keys.view_pushes("*"), keys.view_updates("*"))
        return (), (keys.view_pushes("*"), keys.view_updates("*"), keys.presence_updates("*"))

    def on_message(self, channel: bytes, data: bytes) -> None:
        if channel.startswith(self._presence):  # a seat came or left: the views again, with the new presence
            game_id = channel[len(self._presence):].decode()
            self.presence.forget(game_id)
            game = self.games.get(game_id)
            if game is not None and game.feeds:
                game.views.request()
            return
        if channel.startswith(self._pushes):  # one audience's view of a projection, before its notice
            game_id, version, audience = pushes.read(channel)
            game = self.games.get(game_id)
            if game is not None:
                game.push(version, audience, data)
            return
        game = self.games.get(channel[self._prefix:].decode())
        if game is None:  # nobody here waits on that game
            return
        version = _notice_decoder.decode(data).version
        game.reached(version)
        if game.pushed is not None and game.pushed[0] != version:
            game.pushed = None  # views of another version (this one's did not come): not these
        if game.behind(version):  # a followed view did not come (too big, a rebuild, an older projector; or it
            game.views.request()  # waits for the presence): read

    async def catch_up(self) -> None:
        """Notices may have been missed: every followed view and every awaited position is read again, and no
        game's presence is kept from before."""
        if self.presence is not None:
            self.presence.forget()
        for game in self.games.values():
            game.pushed = None  # read again, whole
            if game.waiters:
                game.position.request()
            if game.feeds:
                game.views.request()

    def _game(self, game_id: str) -> _Game:
        game = self.games.get(game_id)
        if game is None:
            game = self.games[game_id] = _Game(self, game_id)
        return game

    def _release(self, game_id: str, game: _Game) -> None:
        if game.idle() and self.games.get(game_id) is game:
            del self.games[game_id]
            game.cancel()

    @contextlib.asynccontextmanager
    async def follow(self, game_id: str, audience: str, since: int = -1, wire: Any = None,
                     patches: bool = False) -> AsyncIterator[Follower]:
        """A follower of the game's view for this audience, offered the current view at once, then each newer one
        (newer than ``since`` only); with a ``wire``, written to it; with ``patches``, as JSON Patch frames where it
        can (see ``Follower``)."""
        game = self._game(game_id)
        feed = game.feeds.get(audience)
        if feed is None:
            feed = game.feeds[audience] = _Feed(audience)
        follower = Follower(since, wire, patches)
        feed.followers.add(follower)
        metrics.WEBSOCKETS.inc()
        try:
            game.views.request()  # the current view, read after this follower joined
            yield follower
        finally:
            metrics.WEBSOCKETS.dec()
            follower.close()
            feed.followers.discard(follower)
            if not feed.followers and game.feeds.get(audience) is feed:
                del game.feeds[audience]
            self._release(game_id, game)

    async def wait_for(self, game_id: str, version: int, timeout: float) -> bool:
        """Until the game's read models reach ``version`` (True), or ``timeout`` seconds pass (False). The position
        is read first unless this gateway already knows the game's version for sure (``_Game.current``): a
        command's answer on a game followed here waits for its notice alone (one round trip less a command)."""
        game = self._game(game_id)
        game.waiters += 1
        try:
            if not game.current(self):
                game.position.request()  # read after this waiter counted: a notice from now on wakes it too
            deadline = time.monotonic() + timeout
            while game.version < version:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                # While the subscription is down no notice comes: read the position again now and then.
                poll = left if self.state.connected else min(left, 0.25)
                try:
                    async with asyncio.timeout(poll):  # no task a wait (asyncio.wait_for makes one)
                        await game.changed.wait()
                except TimeoutError:
                    if not self.state.connected:
                        game.position.request()
            return True
        finally:
            game.waiters -= 1
            self._release(game_id, game)
