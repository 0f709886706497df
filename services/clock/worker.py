"""The clock worker: what falls due in a game (a seat's deadline, the game's timer, a bot's move) becomes a
platform command in ``souk:commands``, decided by the engine like any other.

The engine writes each game's next due instant (``domain.table.next_due``) into its partition's deadline index
(``keys.game_deadlines``) in the script that appends its events. The worker polls the index of its partition
(``keys.deadlines``) for the games due now, loads each one as the engine does (its snapshot and the stream after
it: ``Engine.load``), asks the table what is due (``domain.table.due``) and sends, for each due item,
``Timeout`` / ``Tick`` / ``PlayFor`` with the id ``clock:{version}:{kind}:{seat}``, for no seat.

Exactly once, whatever the workers do:
- Two workers that read the same game at the same version send the same command ids: the engine's idempotency
  (the command key ``-:<id>``) answers the second with the first's outcome; nothing is decided twice.
- The commands and the game's next look (``now + retry_s``) are written by one script that first checks the game
  is still at the version they were computed on (its stream's length): a worker never sends commands of a state
  the game has left, and the engine's next append (which writes the new due instant) comes after them.
- A ``PlayFor`` carries ``expected_version``: a bot's move chosen at one version is never played at another.
- A worker killed anywhere leaves the game in the index (its score is only pushed back with the commands, in the
  same script): the next worker finds it due and sends the same ids again, or, if the engine decided them
  already, the ids of the new version.
- A deadline that a later event makes moot: the engine's append rewrites the game's score (or takes it out), and
  the table refuses a ``Timeout`` for a deadline that is no longer the seat's (``not_due``).
The worker's own clock is only a trigger: the engine's ``now`` decides whether a deadline has passed.

Clock workers own the partitions (``leases``: a ``services.store.leases.Leases`` of group ``clock`` with no
stream): each polls the deadline indexes of its share of the partitions only, so N of them poll and load each due
game once between them, not N times; one started or stopped rebalances the others, one killed -9 leaves its
partitions to the others once its leases lapse (``SOUK_CLOCK_LEASE_MS``). Around a lapse two workers may poll the
same partition for a moment: the command ids above keep that exactly once too.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import redis.asyncio as aioredis
import structlog
from redis.exceptions import RedisError

from contracts.envelope import CommandEnvelope
from contracts.table import PlayFor, Tick, Timeout
from domain import table as tbl
from services.bots import STRATEGIES, strategy as make_strategy
from services.bots.strategies import StrategyError
from services.engine.service import FINISHED, Engine
from services.runtime import metrics
from services.store import keys
from services.store.codec import encoder
from services.store.events import EventStore
from services.store.leases import Leases

log = structlog.get_logger("souk.clock")

# KEYS: the deadline index, souk:commands, the game's stream. ARGV: the game id, the version the commands were
# computed on, the game's next look, then the commands' envelopes. Nothing is sent when the game moved on.
_SEND = """
if redis.call('XLEN', KEYS[3]) ~= tonumber(ARGV[2]) then return 0 end
for i = 4, #ARGV do redis.call('XADD', KEYS[2], '*', 'c', ARGV[i]) end
redis.call('ZADD', KEYS[1], 'XX', ARGV[3], ARGV[1])
return 1
"""
# KEYS: the deadline index. ARGV: the game id, the score it was read with, the new score ('': out of the index).
# Unchanged since it was read, or nothing is done (the engine wrote a newer one meanwhile).
_RESCHEDULE = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
if ARGV[3] == '' then redis.call('ZREM', KEYS[1], ARGV[1]) else redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1]) end
return 1
"""


def command_id(version: int, due: tbl.Due) -> str:
    """The deterministic id of the command for ``due`` at ``version`` (every worker computes the same)."""
    return f"clock:{version}:{due.kind}:{'' if due.kind == 'tick' else due.seat}"


@dataclass(frozen=True, slots=True)
class Takeover:
    """The bot that plays for a seat the table stands in for (``SOUK_TAKEOVER_STRATEGY``, ``..._BUDGET``)."""

    name: str = "greedy"
    budget: float = 1.0

    def choose(self, table: tbl.Table, seat: int, game_id: str) -> tuple[str, Any]:
        """The strategy's command for ``seat`` (its name, the command): the seat's own strategy when bots took it
        at the start (``BotSeated``), else this takeover's; a game without the strategy's hooks (or a strategy
        that fails) is played by ``random``. The bot's own chance is seeded by the game, version and seat: two
        workers choose alike (a budgeted search may still differ; the engine plays one at most)."""
        game = tbl.game_of(table)
        name = tbl.bot_of(table, seat) or self.name
        rng = random.Random(hashlib.sha256(f"{game_id}:{table.version}:{seat}".encode()).digest())
        try:
            bot = make_strategy(name, **({"budget": self.budget} if name == "mcts" else {}))
            return name, bot.choose(game, table.state, seat, rng)
        except StrategyError as exc:
            log.info("takeover_strategy_unavailable", strategy=name, code=exc.code, fallback="random")
        except Exception as exc:  # noqa: BLE001 - a strategy's bug must not leave the seat unplayed
            log.exception("takeover_strategy_failed", strategy=name, error=str(exc)[:200], fallback="random")
        return "random", make_strategy("random").choose(game, table.state, seat, rng)


class ClockWorker:
    """Polls the deadline index and sends what is due. ``fire_due`` is one pass (tests call it); ``run`` loops."""

    def __init__(self, redis: aioredis.Redis, store: EventStore, *, poll_s: float = 0.05, retry_s: float = 2.0,
                 batch: int = 100, takeover: Takeover = Takeover(), partitions: tuple[int, ...] | None = None,
                 leases: Leases | None = None) -> None:
        if takeover.name not in STRATEGIES:
            raise ValueError(f"unknown takeover strategy {takeover.name!r}")
        self.redis = redis
        # The engine's loading (snapshot + stream), uncached: the engine writes the games, not this worker.
        self.loader = Engine(redis, store, cache_size=1, snapshot_every=0)
        self.poll_s, self.retry_s, self.batch = poll_s, retry_s, batch
        self.takeover = takeover
        # The partitions whose deadline indexes it polls (``keys.deadlines``): these; else those its leases hold
        # (started and stopped by its owner, ``services.cli.workers``); else every partition of the store.
        self.partitions = partitions
        self.leases = leases
        self._send = redis.register_script(_SEND)
        self._reschedule = redis.register_script(_RESCHEDULE)
        self.sent = 0  # commands sent since the start (tests and logs)

    async def run(self) -> None:
        """Until cancelled: a pass, then a pause until the next due instant the index holds, at most ``poll_s``
        (a game the engine writes meanwhile is found by the next poll); none after a full batch. A store that
        fails is tried again after ``poll_s``; anything else a pass raises (a bug, a client's) is logged with its
        traceback and the pass tried again after ``retry_s``: the clock never stops on its own, or every clocked
        game's deadlines would stop firing (its task ended silently, seen only when its process stopped)."""
        log.info("clock_started", poll_s=self.poll_s, retry_s=self.retry_s, takeover=self.takeover.name)
        while True:
            try:
                if await self.fire_due() >= self.batch:
                    continue
                await asyncio.sleep(await self.pause())
            except (RedisError, OSError) as exc:
                log.warning("clock_store_failed", error=str(exc)[:200])
                await asyncio.sleep(self.poll_s)
            except Exception as exc:  # noqa: BLE001 - logged; the clock goes on
                log.exception("clock_pass_failed", error=f"{type(exc).__name__}: {str(exc)[:200]}")
                await asyncio.sleep(self.retry_s)

    async def pause(self) -> float:
        """Until the earliest instant in the index (at least a millisecond), or ``poll_s`` if that is later."""
        firsts = [first[0][1] for p in await self._partitions()
                  if (first := await self.redis.zrange(keys.deadlines(p), 0, 0, withscores=True))]
        if not firsts:
            return self.poll_s
        return min(self.poll_s, max(0.001, min(firsts) - time.time()))

    async def _partitions(self) -> Sequence[int]:
        if self.partitions is not None:
            return self.partitions
        return keys.PARTITIONS if self.leases is None else await self.leases.held()

    async def fire_due(self, now: float | None = None) -> int:
        """One pass over the games due at ``now`` (default: this machine's clock); returns how many were due."""
        now = time.time() if now is None else now
        due = []
        for partition in await self._partitions():  # up to a batch, the first partitions first
            due += await self.redis.zrangebyscore(keys.deadlines(partition), "-inf", repr(now), start=0,
                                                  num=self.batch - len(due), withscores=True)
            if len(due) >= self.batch:
                break
        # the games at once: each waits on its own reads (and a bot's thinking), not on the others'
        await asyncio.gather(*(self._fire_one(m.decode() if isinstance(m, bytes) else m, score, now)
                               for m, score in due))
        return len(due)

    async def _fire_one(self, game_id: str, score: float, now: float) -> None:
        try:
            await self.fire(game_id, score, now)
        except (RedisError, OSError):
            raise
        except Exception as exc:  # noqa: BLE001 - one game that cannot be read must not stop the others
            log.exception("clock_game_failed", game_id=game_id, error=str(exc)[:200])
            await self._reschedule(keys=[keys.game_deadlines(game_id)],
                                   args=[game_id, repr(score), repr(now + self.retry_s)])

    async def fire(self, game_id: str, score: float, now: float) -> int:
        """Sends the commands of what is due in ``game_id`` at ``now``; returns how many were sent."""
        self.loader.cache.pop(game_id)
        table = (await self.loader.load(game_id)).table
        self.loader.cache.pop(game_id)
        if not table.exists or table.status in FINISHED:
            await self._reschedule(keys=[keys.game_deadlines(game_id)], args=[game_id, repr(score), ""])
            return 0
        dues = [d for d in tbl.due(table) if d.at <= now]
        if not dues:  # not due yet by the table's reckoning: looked at again when it is
            upcoming = tbl.next_due(table)
            await self._reschedule(keys=[keys.game_deadlines(game_id)],
                                   args=[game_id, repr(score), "" if upcoming is None else repr(upcoming)])
            return 0
        envelopes = [encoder.encode(await self._envelope(game_id, table, d)) for d in dues]
        sent = await self._send(keys=[keys.game_deadlines(game_id), keys.commands(keys.partition(game_id)),
                                      keys.game_stream(game_id)],
                                args=[game_id, table.version, repr(now + self.retry_s), *envelopes])
        if sent:
            self.sent += len(envelopes)
            for d in dues:
                metrics.clock_sent(d.kind, now - d.at)
            log.info("clock_sent", game_id=game_id, version=table.version,
                     due=[f"{d.kind}:{'' if d.seat is None else d.seat}{d.key}" for d in dues])
        return len(envelopes) if sent else 0

    async def _envelope(self, game_id: str, table: tbl.Table, due: tbl.Due) -> CommandEnvelope:
        expected = None
        if due.kind == "timeout":
            body: Any = Timeout(due.seat, deadline=due.at)
        elif due.kind == "tick":
            body = Tick(due.key, due=due.at)
        else:  # "bot": a move chosen off the event loop (a search may think for a second)
            name, command = await asyncio.to_thread(self.takeover.choose, table, due.seat, game_id)
            body = PlayFor(due.seat, name, msgspec.to_builtins(command))
            expected = table.version  # a move chosen at this version is played at it or not at all
        return CommandEnvelope(command_id(table.version, due), game_id, msgspec.Raw(encoder.encode(body)),
                               sent_at=time.time(), expected_version=expected)
