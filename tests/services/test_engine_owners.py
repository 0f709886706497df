"""Engines own partitions (issue #22): each partition's command stream is read by one engine at a time, which holds
its lease (services/store/leases.py). Two engines on one Redis share four partitions two each; one killed -9 while
it holds commands leaves its partitions to the other within a few seconds (the lease lapses), which answers what it
held; a third engine started takes its share without a stop of the others; a clean stop releases at once."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
import uuid

import pytest

from services.store import keys
from services.store.leases import Leases, share
from services.store.streams import ensure_group
from tests.services.replicas import Players, start_engine, stop

pytestmark = pytest.mark.anyio

LEASE_MS = 2000  # short, yet longer than a batch takes on a loaded machine (a lease lapsed under load is taken again)


@pytest.fixture
def engines(four_partitions, tmp_path):
    """Starts ``souk engine`` processes by name (lease ``LEASE_MS`` unless given); stops them all at the end."""
    started = {}

    def start(name: str, lease_ms: int = LEASE_MS):
        log = open(tmp_path / f"{name}.log", "ab")
        started[name] = (start_engine(four_partitions, name, log, SOUK_ENGINE_LEASE_MS=str(lease_ms)), log)
        return started[name][0]

    yield start
    for proc, log in started.values():
        stop(proc)
        log.close()


async def owners(players: Players, group: str = keys.ENGINE_GROUP) -> dict[int, str | None]:
    """Each partition's lease holder in ``group`` (None: nobody)."""
    held = {}
    for p in keys.PARTITIONS:
        holder = await players.lean.call("GET", keys.lease(group, p))
        held[p] = holder.decode() if holder is not None else None
    return held


def counts(held: dict[int, str | None]) -> dict[str | None, int]:
    out: dict[str | None, int] = {}
    for holder in held.values():
        out[holder] = out.get(holder, 0) + 1
    return out


async def until(players: Players, wanted, timeout: float, group: str = keys.ENGINE_GROUP) -> dict[int, str | None]:
    """The partitions' holders in ``group`` once ``wanted(counts)`` holds, within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        held = await owners(players, group)
        if wanted(counts(held)):
            return held
        assert time.monotonic() < deadline, f"holders now: {held}"
        await asyncio.sleep(0.05)


async def only_owners_hold(players: Players, stop_at: asyncio.Event, names: tuple[str, ...]) -> int:
    """Until ``stop_at``: in every sample, each partition's delivered, unanswered commands are held by one engine
    at most. Returns the samples in which some engine held commands."""
    busy = 0
    while not stop_at.is_set():
        by_partition: dict[int, set[str]] = {}
        for name in names:
            for p, _ in await players.holding(f"engine-{name}"):
                by_partition.setdefault(p, set()).add(name)
        assert all(len(holders) == 1 for holders in by_partition.values()), by_partition
        busy += bool(by_partition)
        await asyncio.sleep(0.01)
    return busy


async def two_owning_two_each(players: Players, engines) -> tuple:
    """Engines a and b started, once each owns two partitions."""
    a, b = engines("a"), engines("b")
    await until(players, lambda c: c.get("engine-a") == 2 and c.get("engine-b") == 2, 20)
    return a, b


def play(players: Players, games: int, moves: int) -> tuple[list[str], list[asyncio.Task]]:
    """``games`` new games played at once, ``moves`` bot commands each: their ids and their tasks."""
    ids = [uuid.uuid4().hex[:12] for _ in range(games)]
    return ids, [asyncio.create_task(players.play(g, random.Random(i), moves)) for i, g in enumerate(ids)]


def test_each_member_aims_at_its_share_and_the_shares_add_up_to_the_partitions():
    members = ["a", "b", "c"]
    assert [share(members, m, 4) for m in members] == [2, 1, 1]
    assert [share(members, m, 6) for m in members] == [2, 2, 2]
    assert sum(share(members, m, 1) for m in members) == 1
    assert share(["b"], "a", 4) == 4  # not among the live members yet: all it can get


async def test_a_lease_not_renewed_in_time_stops_its_reader(four_partitions, redis):
    """A process paused past its lease (no renewal in time) reads nothing more of the partitions until it renews:
    another engine may own them by then."""
    streams = [keys.commands(p) for p in keys.PARTITIONS]
    for stream in streams:
        await ensure_group(redis, stream, keys.ENGINE_GROUP)
    leases = Leases(redis, keys.ENGINE_GROUP, "engine-x", lease_ms=200)
    await leases.tick()
    assert [s for s, _ in await leases.reads(streams)] == streams
    await asyncio.sleep(0.25)  # no round meanwhile: as if paused
    assert await leases.reads(streams) == []
    await leases.tick()  # lapsed in Redis too: taken again, as a new owner (its pending entries first)
    assert await leases.reads(streams) == [(s, "0") for s in streams]


async def test_a_partition_given_up_leaves_no_idle_consumer_behind(four_partitions, redis):
    """The consumer of a partition given up with nothing pending is removed from the partition's group: /health
    would warn of it as idle, though its engine lives and reads its other partitions."""
    stream = keys.commands(0)
    for p in keys.PARTITIONS:
        await ensure_group(redis, keys.commands(p), keys.ENGINE_GROUP)
    await redis.xadd(stream, {"c": b"x"})
    [[_, [(entry, _)]]] = await redis.xreadgroup(keys.ENGINE_GROUP, "engine-x", {stream: ">"})
    await redis.xack(stream, keys.ENGINE_GROUP, entry)  # read and answered: the consumer holds nothing
    leases = Leases(redis, keys.ENGINE_GROUP, "engine-x")
    await leases.tick()
    await leases.release(0)
    assert await redis.xinfo_consumers(stream, keys.ENGINE_GROUP) == []
    await redis.xadd(keys.commands(1), {"c": b"x"})
    await redis.xreadgroup(keys.ENGINE_GROUP, "engine-x", {keys.commands(1): ">"})  # delivered, not answered
    await leases.release(1)  # kept: removing it would drop its pending entry, which the next owner takes
    assert [c["pending"] for c in await redis.xinfo_consumers(keys.commands(1), keys.ENGINE_GROUP)] == [1]


async def test_two_engines_share_four_partitions_and_answer_every_command_once(engines, players):
    await two_owning_two_each(players, engines)
    done = asyncio.Event()
    watch = asyncio.create_task(only_owners_hold(players, done, ("a", "b")))
    games, playing = play(players, 12, 12)
    await asyncio.wait_for(asyncio.gather(*playing), 60)
    done.set()
    assert await watch > 0
    assert counts(await owners(players)) == {"engine-a": 2, "engine-b": 2}  # no churn under load
    await players.check(games)


async def test_an_engine_killed_holding_commands_leaves_its_partitions_to_the_other(engines, players):
    a, b = await two_owning_two_each(players, engines)
    games, playing = play(players, 16, 20)
    held_at_kill, deadline = [], time.monotonic() + 30
    while time.monotonic() < deadline and not held_at_kill:
        if len(players.answers) >= len(games) * 6:
            held_at_kill = await players.holding("engine-a")
        await asyncio.sleep(0.002)
    assert held_at_kill, f"engine a never seen holding commands (answers: {len(players.answers)})"
    os.kill(a.pid, signal.SIGKILL)
    killed_at = time.monotonic()
    a.wait(5)
    held_ids = await players.command_ids(held_at_kill)
    await until(players, lambda c: c.get("engine-b") == 4, 10)
    taken_s = time.monotonic() - killed_at
    assert taken_s < LEASE_MS / 1000 + 3, taken_s  # the lease's lapse, and a round of b's
    await asyncio.wait_for(asyncio.gather(*playing), 60)
    assert b.poll() is None, "engine b stopped"
    for command_id in held_ids:  # what "a" held was answered (by "b", which took it over)
        assert command_id in players.answers, command_id
    await players.check(games)


async def test_a_third_engine_takes_its_share_without_a_stop(engines, players):
    a, b = await two_owning_two_each(players, engines)
    games, playing = play(players, 12, 16)
    while len(players.answers) < len(games) * 4:
        await asyncio.sleep(0.01)
    engines("c")  # mid-load: b gives up one partition (a, first by name, keeps the larger share), c takes it
    await until(players, lambda c: c == {"engine-a": 2, "engine-b": 1, "engine-c": 1}, 20)
    await asyncio.wait_for(asyncio.gather(*playing), 60)
    assert a.poll() is None and b.poll() is None  # nobody stopped
    await players.check(games)


async def test_a_clean_stop_releases_the_partitions_at_once(engines, players):
    """SIGTERM: the leases are deleted as the engine stops, and the other takes them within a round of its own,
    well before they would have lapsed (a lease of 10 s here)."""
    a, _ = engines("a", lease_ms=10_000), engines("b", lease_ms=10_000)
    await until(players, lambda c: c.get("engine-a") == 2 and c.get("engine-b") == 2, 30)
    a.terminate()
    stopped_at = time.monotonic()
    assert a.wait(10) == 0
    await until(players, lambda c: c.get("engine-b") == 4, 10)
    assert time.monotonic() - stopped_at < 8  # not the 10-s lapse: released, taken at b's next round
    assert await players.lean.call("ZRANGE", keys.members(keys.ENGINE_GROUP), 0, -1) == [b"engine-b"]


async def test_a_read_whose_answer_was_lost_is_read_again_from_the_owners_pending_entries(redis, redis_url):
    """Redis delivered a batch, the entries now pending for this consumer, and the connection went before the
    answer came (the store killed -9 after its fsync): the owner reads its pending entries again before anything
    newer. They were left pending while it kept its lease, nobody to take them: `souk chaos` saw a projector that
    never projected a game's last event, its entry pending for the 60 s of the checks."""
    from faststream.redis import RedisBroker

    from services.store.resp import Resp
    from services.store.streams import batch_subscription

    streams = [keys.commands(p) for p in keys.PARTITIONS]
    for stream in streams:
        await ensure_group(redis, stream, keys.ENGINE_GROUP)
    lost: list = []

    class AnswerLost(Resp):
        async def call(self, *args):
            reply = await super().call(*args)
            if args[0] == "XREADGROUP" and any(entries for _, entries in reply or ()) and not lost:
                lost.append(reply)
                raise ConnectionError("Connection closed by server.")
            return reply

    got: list[bytes] = []

    async def handle(entries):
        await redis.xack(entries.stream, keys.ENGINE_GROUP, *[entry for entry, _ in entries])
        got.extend(entry for entry, _ in entries)

    leases = Leases(redis, keys.ENGINE_GROUP, "engine-x")
    await leases.start()
    lean = AnswerLost(redis_url)
    broker = RedisBroker(redis_url, apply_types=False)
    batch_subscription(broker, streams, keys.ENGINE_GROUP, "engine-x", handle, with_ids=True, acknowledges=True,
                       lean=lean, leases=leases)
    await broker.start()
    try:
        first = await redis.xadd(streams[0], {"c": b"first"})
        deadline = time.monotonic() + 5
        while not lost and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert lost, "the reader read nothing"
        second = await redis.xadd(streams[0], {"c": b"second"})
        while len(got) < 2 and time.monotonic() < deadline + 5:
            await asyncio.sleep(0.02)
    finally:
        await broker.stop()
        await leases.stop()
        await lean.aclose()
    assert got == [first, second]
    assert (await redis.xpending(streams[0], keys.ENGINE_GROUP))["pending"] == 0
