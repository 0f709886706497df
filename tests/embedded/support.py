"""`souk serve` with its embedded Redis (no REDIS_URL) on a data folder of its own, as a real process."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from services.embedded.redis import free_port

ROOT = Path(__file__).resolve().parents[2]


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without any Redis or Souk setting of the test run's (then ``extra``)."""
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("SOUK_")}
    return {**env, "SOUK_LOG_LEVEL": "info", **extra}


def stop(process: subprocess.Popen, timeout: float = 20) -> None:
    """SIGTERM, and SIGKILL after ``timeout`` seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def souk(*args: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "services.cli", *args], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=ROOT)


@dataclass
class Served:
    url: str
    data_dir: Path
    log: Path
    process: subprocess.Popen

    def record(self) -> dict:
        return json.loads((self.data_dir / "embedded.json").read_text())


@contextlib.contextmanager
def embedded_serve(tmp_path: Path, **env: str) -> Iterator[Served]:
    """`souk serve` without REDIS_URL on tmp_path/data, once /health answers 200."""
    port = free_port()
    data_dir = tmp_path / "data"
    log = tmp_path / "serve.log"
    environment = clean_env(SOUK_DATA_DIR=str(data_dir), SOUK_RATE_PER_CLIENT="0", SOUK_RATE_PER_TOKEN="0",
                            SOUK_OPEN_GAMES_PER_CLIENT="0", **env)
    with open(log, "wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "services.cli", "serve", "--port", str(port)],
                                   env=environment, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 40
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"souk serve did not start: {log.read_text()[-3000:]}")
            time.sleep(0.1)
        yield Served(url, data_dir, log, process)
    finally:
        stop(process)


def logged(log: Path, event: str) -> list[dict]:
    """The JSON log lines of ``event``."""
    lines = []
    for line in log.read_text().splitlines():
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            if isinstance(entry, dict) and entry.get("event") == event:
                lines.append(entry)
    return lines
