"""Clock workers as real processes (`souk clock`) beside `souk gateway`, `souk engine` and `souk projector`, against
real Redis (issue #19 section 1): two workers at once over many games fire every deadline exactly once; a worker
killed -9 and started again loses none and fires none twice; an absent seat comes back with a command."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import msgspec
import pytest
import redis.asyncio as aioredis

from services.embedded.redis import free_port
from services.store.events import RedisEventStore
from tests.e2e.support import bearer, started_game
from tests.embedded.support import stop

pytestmark = pytest.mark.anyio


class Processes:
    """`souk <role>` children sharing the test's stores; a role may run several times (``start``)."""

    def __init__(self, redis_url: str, views_url: str, folder: Path) -> None:
        self.folder = folder
        self.env = {**os.environ, "REDIS_URL": redis_url, "SOUK_VIEWS_REDIS_URL": views_url,
                    "SOUK_LOG_LEVEL": os.environ.get("SOUK_TEST_LOG_LEVEL", "warning"), "SOUK_RECLAIM_IDLE_MS": "2000",
                    "SOUK_RATE_PER_CLIENT": "0", "SOUK_RATE_PER_TOKEN": "0", "SOUK_OPEN_GAMES_PER_CLIENT": "0",
                    "SOUK_CLOCK_POLL_S": "0.05", "SOUK_CLOCK_RETRY_S": "1", "SOUK_TAKEOVER_STRATEGY": "random"}
        self.children: list[subprocess.Popen] = []
        self.url = ""

    def start(self, role: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
        path = self.folder / f"{role}-{len(self.children)}.log"
        with open(path, "wb") as log:
            child = subprocess.Popen([sys.executable, "-m", "services.cli", role, *args],
                                     env={**self.env, **(env or {})}, stdout=log, stderr=subprocess.STDOUT)
        self.children.append(child)
        return child

    def clock(self) -> subprocess.Popen:
        """A `souk clock`, once it polls (its ``clock_started`` line: a process takes seconds to start here)."""
        child = self.start("clock", env={"SOUK_LOG_LEVEL": "info"})
        path = self.folder / f"clock-{len(self.children) - 1}.log"
        deadline = time.monotonic() + 30
        while b"clock_started" not in path.read_bytes():
            if child.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"souk clock did not start: {self.logs()}")
            time.sleep(0.05)
        return child

    def gateway(self) -> str:
        port = free_port()
        child = self.start("gateway", "--port", str(port))
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return self.url
            if child.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"souk gateway did not start: {self.logs()}")
            time.sleep(0.1)

    def logs(self) -> str:
        return "\n".join(f"{p.name}: {p.read_text()[-2000:]}" for p in sorted(self.folder.glob("*.log")))

    def stop_all(self) -> None:
        for child in self.children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGCONT)
            stop(child, 15)


@pytest.fixture
def processes(redis_url: str, views_url: str, tmp_path) -> Iterator[Processes]:
    """Gateway, engine and projector running; the test starts its clock workers."""
    found = Processes(redis_url, views_url, tmp_path)
    try:
        found.start("engine")
        found.start("projector")
        found.gateway()
        yield found
    finally:
        found.stop_all()


async def clock_events(store: RedisEventStore, game_id: str) -> list[tuple[str, int | None, dict]]:
    """The game's clock and bot events (type, the event's seat field, the event), from the game stream."""
    out = []
    for env in await store.read(game_id):
        if env.type in ("table.SeatTimedOut", "table.SeatOut", "table.BotMoved", "table.SeatAbsent",
                        "table.SeatReturned", "table.GameEnded"):
            event = msgspec.json.decode(env.payload)
            out.append((env.type, event.get("seat"), event))
    return out


async def finished(store: RedisEventStore, game_ids: list[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    waiting = list(game_ids)
    while waiting:
        waiting = [g for g in waiting if not [e for e in await clock_events(store, g) if e[0] == "table.GameEnded"]]
        assert time.monotonic() < deadline, f"{len(waiting)} games did not end: {waiting[:3]}"
        await asyncio.sleep(0.2)


def exactly_one_forfeit(events: list[tuple[str, int | None, dict]]) -> None:
    kinds = [kind for kind, _, _ in events]
    assert kinds == ["table.SeatTimedOut", "table.SeatOut", "table.GameEnded"], events
    assert events[0][1] == events[1][1] and events[1][2]["reason"] == "forfeited"


async def forfeit_games(client: httpx.AsyncClient, count: int, rng: random.Random, spread: tuple[float, float]
                        ) -> list[str]:
    """``count`` two-seat games whose seats do nothing: each forfeits at its first deadline (spread over time)."""
    ids = []
    for i in range(count):
        per_decision = round(rng.uniform(*spread), 2)
        game_id, _ = await started_game(client, "yspahan", 2, f"forfeit {i}",
                                        options={"clock": {"per_decision": per_decision, "on_timeout": "forfeit"}})
        ids.append(game_id)
    return ids


async def test_two_clock_workers_at_once_fire_every_deadline_exactly_once(processes, redis_url):
    processes.clock()
    processes.clock()
    store = RedisEventStore(aioredis.Redis.from_url(redis_url))
    async with httpx.AsyncClient(base_url=processes.url, timeout=30) as client:
        forfeits = await forfeit_games(client, 24, random.Random(1), (0.1, 1.0))
        bots = []
        for i in range(6):  # nobody ever plays: each decision times out, then a bot plays it
            game_id, _ = await started_game(client, "yspahan", 2, f"bot {i}",
                                            options={"clock": {"per_decision": 0.1, "on_timeout": "bot"}})
            bots.append(game_id)
        await finished(store, forfeits, 60)
        await asyncio.sleep(2)
    lateness = []
    for game_id in forfeits:
        exactly_one_forfeit(await clock_events(store, game_id))
        [fired] = [e for e in await store.read(game_id) if e.type == "table.SeatTimedOut"]
        lateness.append(fired.recorded_at - msgspec.json.decode(fired.payload)["deadline"])
    # the engine's clock decides: never before the deadline; and the workers were not asleep
    assert min(lateness) >= 0 and max(lateness) < 5, lateness
    lateness.sort()
    print(f"deadline to SeatTimedOut.recorded_at over {len(lateness)} games: median "
          f"{lateness[len(lateness) // 2] * 1000:.0f} ms, max {lateness[-1] * 1000:.0f} ms")
    for game_id in bots:
        events = [(kind, seat, e) for kind, seat, e in await clock_events(store, game_id)
                  if kind in ("table.SeatTimedOut", "table.BotMoved")]
        assert len(events) >= 4, events  # a deadline every 0.1 s for 2 s or more: the game went on
        deadlines = [(seat, e["deadline"]) for kind, seat, e in events if kind == "table.SeatTimedOut"]
        assert len(deadlines) == len(set(deadlines))  # no deadline fired twice
        for seat in (0, 1):  # each timeout of a seat is followed by one bot move for it, then its next timeout
            own = [kind for kind, s, _ in events if s == seat]
            assert all(a != b for a, b in zip(own, own[1:])), own
            assert own[0] == "table.SeatTimedOut"
    await store.redis.aclose()


async def test_a_clock_worker_killed_and_started_again_loses_no_deadline_and_fires_none_twice(processes, redis_url):
    store = RedisEventStore(aioredis.Redis.from_url(redis_url))
    clock = processes.clock()
    async with httpx.AsyncClient(base_url=processes.url, timeout=30) as client:
        games = await forfeit_games(client, 30, random.Random(2), (0.5, 4.0))
        for pause in (1.0, 1.5):
            await asyncio.sleep(pause)
            clock.send_signal(signal.SIGKILL)  # wherever it is: between its read and its send, or sending
            clock.wait(timeout=10)
            await asyncio.sleep(0.5)  # deadlines pass while no worker runs
            clock = processes.start("clock")  # (it takes a few seconds to start: more deadlines pass)
        await finished(store, games, 60)
    for game_id in games:
        exactly_one_forfeit(await clock_events(store, game_id))
    await store.redis.aclose()


async def test_an_absent_seat_is_played_by_a_bot_until_it_comes_back_with_a_command(processes, redis_url):
    store = RedisEventStore(aioredis.Redis.from_url(redis_url))
    clock = processes.clock()
    async with httpx.AsyncClient(base_url=processes.url, timeout=30) as client:
        game_id, tokens = await started_game(client, "yspahan", 2, "absent",
                                             options={"clock": {"per_decision": 1.5, "on_timeout": "absent"}})

        async def awaiting() -> tuple[int, ...]:
            return tuple((await client.get(f"/games/{game_id}/view")).json()["flow"]["awaiting"])

        [away] = await awaiting()
        present = 1 - away
        deadline = time.monotonic() + 20
        while await awaiting() != (present,):  # the away seat times out; the bot plays its turn
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        view = (await client.get(f"/games/{game_id}/view")).json()
        assert view["clock"]["seats"][away]["absent"] is True
        clock.send_signal(signal.SIGSTOP)  # no bot now: the away seat's next decision waits for it
        try:
            played = 0
            while (turn := await awaiting()) != (away,):
                [seat] = turn
                legal = (await client.get(f"/games/{game_id}/seats/{seat}/legal", headers=bearer(tokens[seat]))).json()
                r = await client.post(f"/games/{game_id}/seats/{seat}/commands", headers=bearer(tokens[seat]),
                                      json={"command_id": f"p{played}", "command": legal["legal"][0]})
                assert r.status_code == 200, r.text
                played += 1
                assert played < 200
            legal = (await client.get(f"/games/{game_id}/seats/{away}/legal", headers=bearer(tokens[away]))).json()
            r = await client.post(f"/games/{game_id}/seats/{away}/commands", headers=bearer(tokens[away]),
                                  json={"command_id": "back", "command": legal["legal"][0]})
            assert r.status_code == 200, r.text
        finally:
            clock.send_signal(signal.SIGCONT)
    envelopes = await store.read(game_id)
    kinds = [(e.type, e.command_id) for e in envelopes]
    back = kinds.index(("table.SeatReturned", "back"))
    assert envelopes[back + 1].command_id == "back" and envelopes[back + 1].seat == away
    events = await clock_events(store, game_id)
    assert [k for k, s, _ in events if s == away][:3] == ["table.SeatTimedOut", "table.SeatAbsent", "table.BotMoved"]
    await store.redis.aclose()
