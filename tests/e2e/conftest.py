"""`souk serve` as a real process against the test Redis, for end-to-end tests over HTTP and WebSocket."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest
import redis

from services.redis_server import free_port


@pytest.fixture
def souk_env() -> dict[str, str]:
    """Extra environment for `souk serve` (a test module overrides this fixture to change a setting). Every
    test client comes from 127.0.0.1 as fast as it goes: the per-client limits are off unless a test is about
    them (tests/e2e/test_limits.py)."""
    return {"SOUK_RATE_PER_CLIENT": "0", "SOUK_RATE_PER_TOKEN": "0", "SOUK_OPEN_GAMES_PER_CLIENT": "0"}


@pytest.fixture
def souk_url(redis_url: str, tmp_path, souk_env) -> Iterator[str]:
    """The event store in database 0 and the read store in database 1, as two Redis would be used."""
    views_url = redis_url.rsplit("/", 1)[0] + "/1"
    redis.Redis.from_url(views_url).flushdb()
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "SOUK_VIEWS_REDIS_URL": views_url, "SOUK_LOG_LEVEL": "warning",
           "SOUK_RECLAIM_IDLE_MS": "2000", **souk_env}
    log = open(tmp_path / "souk.log", "wb")
    process = subprocess.Popen([sys.executable, "-m", "services.cli", "serve", "--port", str(port)],
                               env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"souk serve did not start: {(tmp_path / 'souk.log').read_text()[-3000:]}")
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
