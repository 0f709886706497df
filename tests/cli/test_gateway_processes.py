"""`souk gateway --processes N`: N processes serve the one port (uvicorn's process manager), each with its own reply
channel; one that dies is started again, and SIGTERM stops them all.

A gateway is one event loop, one core at most: on the 2-core machines `souk bench http --target split` did
1,466 commands/s with one and 1,804 with two (README, "Through the front door").
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx
import pytest
import redis

from services.embedded.redis import free_port
from tests.embedded.support import ROOT, clean_env, stop


def _children(pid: int) -> set[int]:
    """The serving children of ``pid`` (uvicorn's multiprocessing spawns, not its resource tracker)."""
    out = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if parent == pid and b"multiprocessing.spawn" in cmdline:
            out.add(int(entry))
    return out


def _wait(condition, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def _reply_channels(client: redis.Redis) -> int:
    return len(client.pubsub_channels("souk:replies:*"))


@pytest.fixture
def split(redis_url, views_url):
    """`souk engine`, `souk projector` and `souk gateway --processes 2` on the test's Redis."""
    port = free_port()
    env = clean_env(REDIS_URL=redis_url, SOUK_VIEWS_REDIS_URL=views_url, SOUK_PORT=str(port), SOUK_LOG_LEVEL="warning",
                    SOUK_RATE_PER_CLIENT="0", SOUK_OPEN_GAMES_PER_CLIENT="0")
    roles = [["engine"], ["projector"], ["gateway", "--processes", "2"]]
    processes = [subprocess.Popen([sys.executable, "-m", "services.cli", *role], env=env, cwd=ROOT,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for role in roles]
    base = f"http://127.0.0.1:{port}"
    try:
        def healthy() -> bool:
            try:
                return httpx.get(f"{base}/health", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        _wait(healthy, "the gateway never answered")
        yield base, processes[2], redis.Redis.from_url(redis_url)
    finally:
        for process in reversed(processes):
            stop(process)


def _play_a_little(base: str) -> None:
    """A game created and its seats taken, each request on a connection of its own (either process may take it):
    every join is a command answered on the reply channel of the process that queued it."""
    created = httpx.post(f"{base}/games", json={"game": "yspahan", "title": "t", "seats": 4}, timeout=10)
    assert created.status_code == 201, created.text
    game_id = created.json()["game_id"]
    for seat in range(4):
        joined = httpx.post(f"{base}/games/{game_id}/seats", json={"name": f"p{seat}"}, timeout=10)
        assert joined.status_code == 201, joined.text
        token = joined.json()["token"]
        view = httpx.get(f"{base}/games/{game_id}/seats/{seat}/view", headers={"Authorization": f"Bearer {token}"},
                         timeout=10)
        assert view.status_code == 200, view.text


def test_two_processes_serve_the_port_and_one_that_dies_comes_back(split):
    base, gateway, store = split
    _wait(lambda: len(_children(gateway.pid)) == 2, "two serving processes")
    _wait(lambda: _reply_channels(store) == 2, "each process listens on its own reply channel")
    _play_a_little(base)

    victim = min(_children(gateway.pid))
    os.kill(victim, signal.SIGKILL)
    _wait(lambda: victim not in _children(gateway.pid) and len(_children(gateway.pid)) == 2,
          "the dead process replaced")
    _wait(lambda: _reply_channels(store) == 2, "the new process listens on its reply channel")
    _play_a_little(base)

    children = _children(gateway.pid)
    gateway.terminate()
    gateway.wait(timeout=20)
    _wait(lambda: not any(os.path.exists(f"/proc/{pid}") for pid in children), "SIGTERM stopped every process")


@pytest.fixture
def four_partitions(redis_url):
    """An event store created with four partitions, before the processes start (none of them is told: each reads
    them from the store)."""
    from services.cli.stores import check
    from services.runtime.config import Settings

    check(Settings(redis_url=redis_url, partitions=4), views=False)


def test_each_process_uses_the_partitions_of_the_store_it_serves(four_partitions, split):
    """The serving processes are spawned, not forked: they get the store's partitions from the parent, which read
    them, and queue and read each game's keys in its partition."""
    from services.store import keys

    base, gateway, store = split
    _wait(lambda: len(_children(gateway.pid)) == 2, "two serving processes")
    for _ in range(6):  # games in several partitions
        _play_a_little(base)
    keys.use(4)
    games = {p: [g.decode() for g in store.zrange(keys.games(p), 0, -1)] for p in keys.PARTITIONS}
    assert sum(map(len, games.values())) == 6
    assert all(keys.partition(g) == p and store.xlen(keys.game_stream(g)) > 4 for p in games for g in games[p])
    # each command was queued on its game's partition's stream: the append that answered it acknowledged it there
    _wait(lambda: all(store.xpending(keys.commands(p), keys.ENGINE_GROUP)["pending"] == 0 for p in keys.PARTITIONS),
          "every command acknowledged in its stream")
