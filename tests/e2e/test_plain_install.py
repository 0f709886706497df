"""What the README's first command installs is enough (issue #9 item 1): a WebSocket upgrade used to answer 405
after `pip install -e .`, and the tests passed only because their extra pulled a WebSocket library in. This test
makes a venv with the plain install alone, runs `souk serve` from it, and upgrades a socket with nothing but the
standard library."""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from services.embedded.redis import free_port

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def plain_venv(tmp_path_factory) -> Path:
    venv = tmp_path_factory.mktemp("plain") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    done = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "-e", str(ROOT)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return venv


def test_the_plain_install_serves_websockets(plain_venv, redis_url, tmp_path):
    freeze = subprocess.run([str(plain_venv / "bin" / "pip"), "freeze"], capture_output=True, text=True).stdout
    assert "hypothesis" not in freeze.lower() and "pytest" not in freeze.lower()  # nothing of the test extra
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "SOUK_VIEWS_REDIS_URL": redis_url.rsplit("/", 1)[0] + "/1",
           "SOUK_LOG_LEVEL": "warning"}
    log = open(tmp_path / "souk.log", "wb")
    process = subprocess.Popen([str(plain_venv / "bin" / "souk"), "serve", "--port", str(port)], env=env,
                               stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=1):
                    break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, (tmp_path / "souk.log").read_text()
                time.sleep(0.1)
        request = urllib.request.Request(f"{base}/games", method="POST", headers={"content-type": "application/json"},
                                         data=json.dumps({"game": "yspahan", "title": "plain", "seats": 2}).encode())
        with urllib.request.urlopen(request, timeout=10) as response:
            game_id = json.load(response)["game_id"]
        key = base64.b64encode(os.urandom(16)).decode()
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(f"GET /games/{game_id}/ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                      f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = s.recv(4096)
                assert chunk, head
                head += chunk
        assert head.startswith(b"HTTP/1.1 101"), head[:200]
        # the Python SDK works from the plain install too, its WebSocket included
        sdk = subprocess.run([str(plain_venv / "bin" / "python"), "-c", SDK_CHECK, base], capture_output=True,
                             text=True, timeout=60, cwd=tmp_path)
        assert sdk.returncode == 0 and sdk.stdout.split() == ["2", "playing"], sdk.stdout + sdk.stderr
    finally:
        process.terminate()
        process.wait(timeout=15)
        log.close()


SDK_CHECK = """
import asyncio, sys
from services.client import SoukClient

async def main(url):
    async with SoukClient(url) as souk:
        created = await souk.create("yspahan", "sdk", 2)
        seats = [await souk.join(created.game_id, name) for name in ("a", "b")]
        view = await anext(seats[0].follow())
        print(len(seats), view.status)

asyncio.run(main(sys.argv[1]))
"""
