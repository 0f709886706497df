"""Two engines sharing the partitions on a Redis Cluster (issue #22): both ``souk engine`` processes are consumers
of the ``engine`` group, each owning two of the four partitions' command streams (a lease each, in the partition's
slot: services/store/leases.py); one is killed -9 while it holds delivered, unanswered commands, and the other
takes its partitions once their leases lapse, with their pending entries (XAUTOCLAIM at once). Every command is
answered, accepted once, and each game's events are numbered 1, 2, 3... with no gap and no duplicate.

The games are driven as tests/services/replicas.py drives them (closed loop per game, a command without an answer
sent again with its id)."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
import uuid

import pytest

from services.cli.stores import check
from services.runtime.config import Settings
from services.store import keys
from tests.services.replicas import Players, start_engine, stop

pytestmark = [pytest.mark.cluster, pytest.mark.anyio]

GAMES, MOVES = 24, 30  # yspahan: CreateGame, 2 joins, then 30 bot commands a game (792 commands)
LEASE_MS = 2000


def cluster_url(cluster) -> str:
    return "redis+cluster://" + ",".join(f"{h}:{p}" for h, p in cluster.addresses())


async def test_an_engine_killed_mid_load_leaves_its_partitions_to_the_other_which_answers_each_once(
        fresh_redis_cluster, monkeypatch, tmp_path):
    url = cluster_url(fresh_redis_cluster)
    monkeypatch.setenv("SOUK_PARTITIONS", "4")
    check(Settings.from_env(redis_url=url, views_redis_url=url))  # records 4 partitions; this process uses them
    assert len(keys.PARTITIONS) == 4
    logs = {name: open(tmp_path / f"{name}.log", "wb") for name in ("a", "b")}
    engines = {name: start_engine(url, name, log, SOUK_ENGINE_LEASE_MS=str(LEASE_MS), SOUK_LOG_LEVEL="warning")
               for name, log in logs.items()}
    players = await Players(url).start()
    try:
        games: list[str] = []
        playing: list[asyncio.Task] = []

        def wave() -> None:
            """GAMES more games played at once (another wave while "a" was not yet caught holding commands: on a
            loaded machine a wave could end between two looks, each engine's holdings being brief)."""
            for _ in range(GAMES):
                games.append(uuid.uuid4().hex[:12])
                playing.append(asyncio.create_task(players.play(games[-1], random.Random(len(games)), MOVES)))

        wave()
        # mid-load: once both engines have held commands and a third of the commands are answered, engine "a" is
        # killed -9 at a moment it holds commands it was delivered and has not answered
        seen, held_at_kill = set(), []
        kill_deadline = time.monotonic() + 30
        while time.monotonic() < kill_deadline:
            for name in ("a", "b"):
                if await players.holding(f"engine-{name}"):
                    seen.add(name)
            if seen == {"a", "b"} and len(players.answers) >= GAMES * (3 + MOVES) // 3:
                held_at_kill = await players.holding("engine-a")
                if held_at_kill:
                    os.kill(engines["a"].pid, signal.SIGKILL)
                    break
            if all(task.done() for task in playing):
                wave()
            await asyncio.sleep(0.002)
        assert held_at_kill, f"engine a never seen holding commands mid-load (seen: {seen}, " \
                             f"answers: {len(players.answers)})"
        engines["a"].wait(5)
        held_ids = await players.command_ids(held_at_kill)
        await asyncio.wait_for(asyncio.gather(*playing), 60)

        assert engines["b"].poll() is None, "engine b stopped"
        for command_id in held_ids:  # what "a" held was answered (by "b", which took its partitions over)
            assert command_id in players.answers, command_id
        for p in keys.PARTITIONS:  # b owns every partition now
            assert await players.lean.call("GET", keys.lease(keys.ENGINE_GROUP, p)) == b"engine-b"
        await players.check(games)
    finally:
        for proc in engines.values():
            stop(proc)
        for log in logs.values():
            log.close()
        await players.aclose()
        keys.use(1)
