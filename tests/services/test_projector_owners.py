"""Projectors own partitions (issue #22), as engines do: each partition's events stream is read by one projector at a
time, which holds its lease (services/store/leases.py, group ``projector``). Two projectors share four partitions
two each and every game's read models reach its stream's version; one killed -9 leaves its partitions, and the
entries it held, to the other within a few seconds; a clean stop releases at once."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import msgspec
import pytest

from contracts.readmodels import TableView
from domain import table as tbl
from services.projector.service import Projected, Projector
from services.store import keys
from services.store.events import RedisEventStore
from tests.services.replicas import SEATS, Players, start_worker, stop
from tests.services.test_engine_owners import LEASE_MS, counts, owners, play, until

pytestmark = pytest.mark.anyio
view_of = msgspec.json.Decoder(TableView).decode
GROUP = keys.PROJECTOR_GROUP


@pytest.fixture
def workers(four_partitions, tmp_path):
    """Starts ``souk engine`` / ``souk projector`` processes by role and name (lease ``LEASE_MS`` unless given);
    stops them all at the end."""
    started = []

    def start(role: str, name: str, lease_ms: int = LEASE_MS):
        log = open(tmp_path / f"{role}-{name}.log", "ab")
        proc = start_worker(four_partitions, role, name, log, SOUK_ENGINE_LEASE_MS=str(lease_ms),
                            SOUK_PROJECTOR_LEASE_MS=str(lease_ms))
        started.append((proc, log))
        return proc

    yield start
    for proc, log in started:
        stop(proc)
        log.close()


async def two_owning_two_each(players: Players, workers, lease_ms: int = LEASE_MS) -> tuple:
    """An engine, and projectors a and b once each owns two partitions."""
    workers("engine", "e", lease_ms)
    a, b = workers("projector", "a", lease_ms), workers("projector", "b", lease_ms)
    await until(players, lambda c: c.get("projector-a") == 2 and c.get("projector-b") == 2, 30, GROUP)
    return a, b


async def caught_up(players: Players, games: list[str], timeout: float = 30) -> None:
    """Every game's read models at its stream's version (its position, each audience's view), and nothing left
    pending in the projectors' group."""
    deadline = time.monotonic() + timeout
    for game_id in games:
        version = (await players.events_of(game_id))[-1].seq
        while int(await players.lean.call("GET", keys.position(game_id)) or 0) != version:
            assert time.monotonic() < deadline, f"{game_id}: views behind version {version}"
            await asyncio.sleep(0.05)
        for seat in (None, *range(SEATS)):
            stored = await players.lean.call("HGET", keys.views(game_id), keys.audience(seat))
            assert view_of(stored).version == version, (game_id, seat)
    for p in keys.PARTITIONS:
        assert (await players.lean.call("XPENDING", keys.events(p), GROUP))[0] == 0, p


async def test_a_partition_taken_is_projected_from_the_store_not_from_the_cache(redis):
    """The games cached of a partition taken (again) are forgotten: another projector may have moved them on."""
    projector = Projector(redis, RedisEventStore(redis))
    keys.use(4)
    try:
        ids = [f"g{i}" for i in range(40)]
        for game_id in ids:
            projector.cache.put(game_id, Projected(tbl.Table(), 0.0))
        projector.forget(2)
        assert projector.cache.keys() == [g for g in ids if keys.partition(g) != 2] != ids
    finally:
        keys.use(1)


async def test_two_projectors_share_four_partitions_and_project_every_game(workers, players):
    await two_owning_two_each(players, workers)
    games, playing = play(players, 12, 12)
    await asyncio.wait_for(asyncio.gather(*playing), 60)
    await caught_up(players, games)
    assert counts(await owners(players, GROUP)) == {"projector-a": 2, "projector-b": 2}  # no churn under load
    groups = {g["name"] for p in keys.PARTITIONS for g in await players.store.redis.xinfo_groups(keys.events(p))}
    assert groups == {GROUP.encode()}  # one group, whose members own partitions (not a group per projector)


async def test_a_projector_killed_leaves_its_partitions_and_what_it_held_to_the_other(workers, players):
    a, b = await two_owning_two_each(players, workers)
    held = await owners(players, GROUP)
    games, playing = play(players, 12, 12)
    while len(players.answers) < len(games) * 4:
        await asyncio.sleep(0.01)
    os.kill(a.pid, signal.SIGKILL)
    killed_at = time.monotonic()
    a.wait(5)
    # What a projector killed in a batch leaves: entries delivered to it and never acknowledged
    stranded = 0
    for p in [p for p, holder in held.items() if holder == "projector-a"]:
        reply = await players.lean.call("XREADGROUP", "GROUP", GROUP, "projector-a", "COUNT", 5, "STREAMS",
                                        keys.events(p), ">")
        stranded += sum(len(entries) for _, entries in reply or ())
    assert stranded, "no entry of a's partitions came after the kill"
    await until(players, lambda c: c.get("projector-b") == 4, 10, GROUP)
    assert time.monotonic() - killed_at < LEASE_MS / 1000 + 3  # the lease's lapse, and a round of b's
    await asyncio.wait_for(asyncio.gather(*playing), 60)
    await caught_up(players, games)
    assert b.poll() is None, "projector b stopped"


async def test_a_clean_stop_releases_the_projectors_partitions_at_once(workers, players):
    """SIGTERM: the leases are deleted as the projector stops; the other takes them within a round of its own,
    well before they would have lapsed (a lease of 10 s here)."""
    a, _ = await two_owning_two_each(players, workers, lease_ms=10_000)
    a.terminate()
    stopped_at = time.monotonic()
    assert a.wait(10) == 0
    await until(players, lambda c: c.get("projector-b") == 4, 10, GROUP)
    assert time.monotonic() - stopped_at < 8  # not the 10-s lapse: released, taken at b's next round
    assert await players.lean.call("ZRANGE", keys.members(GROUP), 0, -1) == [b"projector-b"]
