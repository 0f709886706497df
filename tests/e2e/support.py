"""What the end-to-end tests share: `souk serve` as a real process, and games with every seat taken."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from services.embedded.redis import free_port
from services.store import keys
from tests.embedded.support import stop


@contextlib.contextmanager
def serve(redis_url: str, views_url: str, log_path: Path, env: dict[str, str] | None = None,
          command: str = "serve", started: list[subprocess.Popen] | None = None) -> Iterator[str]:
    """`souk serve` (or ``command``: `souk gateway`...) on a free port against these stores (``env``: more
    settings), once it answers /health; its process is appended to ``started`` (a test that kills it)."""
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "SOUK_VIEWS_REDIS_URL": views_url, "SOUK_LOG_LEVEL": os.environ.get("SOUK_TEST_LOG_LEVEL", "warning"),
           "SOUK_RECLAIM_IDLE_MS": "2000", **(env or {})}
    with open(log_path, "wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "services.cli", command, "--port", str(port)],
                                   env=env, stdout=log, stderr=subprocess.STDOUT)
        if started is not None:
            started.append(process)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                        break
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"souk {command} did not start: {log_path.read_text()[-3000:]}")
                time.sleep(0.1)
            yield url
        finally:
            stop(process, 15)


def partitioned(count: int):
    """A module's ``souk_env`` fixture: the served store has ``count`` partitions (SOUK_PARTITIONS, recorded when
    `souk serve` creates it), and the test's own process names the keys as that store does (``keys.use``)."""

    @pytest.fixture
    def souk_env(souk_env: dict[str, str]) -> dict[str, str]:
        keys.use(count)
        return {**souk_env, "SOUK_PARTITIONS": str(count)}

    return souk_env


NO_LIMITS = {"SOUK_RATE_PER_CLIENT": "0", "SOUK_RATE_PER_TOKEN": "0", "SOUK_OPEN_GAMES_PER_CLIENT": "0"}
FAST_CLOCK = {**NO_LIMITS, "SOUK_CLOCK_POLL_S": "0.05", "SOUK_CLOCK_RETRY_S": "1"}


@contextlib.contextmanager
def serve_on_databases(redis_server_url: str, events_db: int, views_db: int, log_dir: Path,
                       env: dict[str, str] | None = None) -> Iterator[str]:
    """`souk serve` on two databases of the test Redis, flushed first (a module's own: the other tests flush
    database 0 as they go); its log in ``log_dir``."""
    import redis

    base = redis_server_url.rsplit("/", 1)[0]
    for db in (events_db, views_db):
        with redis.Redis.from_url(f"{base}/{db}") as client:
            client.flushdb()
    with serve(f"{base}/{events_db}", f"{base}/{views_db}", log_dir / "souk.log", env) as url:
        yield url


async def join_all(client: httpx.AsyncClient, game_id: str, seats: int) -> list[str]:
    """Takes every seat, in order ("player0", "player1", ...); returns their tokens."""
    tokens = []
    for seat in range(seats):
        r = await client.post(f"/games/{game_id}/seats", json={"name": f"player{seat}"})
        assert r.status_code == 201, r.text
        assert r.json()["seat"] == seat
        tokens.append(r.json()["token"])
    return tokens


async def started_game(client: httpx.AsyncClient, game: str, seats: int, title: str = "test",
                       **body: Any) -> tuple[str, list[str]]:
    """A game created (``body``: options, seed...) and started, every seat taken: its id and the seats' tokens."""
    r = await client.post("/games", json={"game": game, "title": title, "seats": seats, **body})
    assert r.status_code == 201, r.text
    game_id = r.json()["game_id"]
    return game_id, await join_all(client, game_id, seats)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
