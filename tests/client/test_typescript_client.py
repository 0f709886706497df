"""The TypeScript client library (clients/typescript) under Node's test runner against a real `souk serve`.

The library is built with the TypeScript its package pins (tests/npm.py installs it) into a folder of the test's;
``node --test`` then runs clients/typescript/test/*.test.mjs with ``SOUK_URL`` (the server), ``SOUK_CLIENT_DIST``
(the build) and ``SOUK_CONTROL_URL``: a small HTTP server of this module that the Node tests call to restart
`souk serve` (``POST /restart``: stopped, and started again on the same port and stores) and to ask the game's bot
for a move (``POST /choose`` with a seat's view: the index of the legal command the ``seeker`` picks; 1001 Karawane
does not end under random play). A failure prints node's output.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import msgspec
import pytest
import redis

from contracts.readmodels import TableView
from domain.kernel import get_game
from services.bots import strategy
from services.client.remote_bot import choose
from services.client.sdk import _typed_view
from services.embedded.redis import free_port
from tests.embedded.support import stop
from tests.npm import npm_install

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "clients" / "typescript"
NODE_TESTS = LIBRARY / "test"
QUIET = {"SOUK_RATE_PER_CLIENT": "0", "SOUK_RATE_PER_TOKEN": "0", "SOUK_OPEN_GAMES_PER_CLIENT": "0",
         "SOUK_CONNECTIONS_PER_CLIENT": "0"}


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Path:
    """clients/typescript/src compiled by the pinned TypeScript: the folder of index.js."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    pinned = json.loads((LIBRARY / "package.json").read_text())["devDependencies"]["typescript"]
    where = tmp_path_factory.mktemp("souk-client")
    tsc = npm_install(where / "npm", f"typescript@{pinned}") / "typescript" / "bin" / "tsc"
    done = subprocess.run(["node", str(tsc), "-p", str(LIBRARY), "--outDir", str(where / "dist")],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return where / "dist"


class Server:
    """`souk serve` on one port that stays the same across ``restart()`` (the clients reconnect to it)."""

    def __init__(self, redis_url: str, log: Path, env: dict[str, str]) -> None:
        views_url = redis_url.rsplit("/", 1)[0] + "/1"
        redis.Redis.from_url(views_url).flushdb()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.env = {**os.environ, "REDIS_URL": redis_url, "SOUK_VIEWS_REDIS_URL": views_url,
                    "SOUK_LOG_LEVEL": os.environ.get("SOUK_TEST_LOG_LEVEL", "warning"),
                    "SOUK_RECLAIM_IDLE_MS": "2000", **env}
        self.process: subprocess.Popen | None = None
        self.lock = threading.Lock()

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen([sys.executable, "-m", "services.cli", "serve", "--port", str(self.port)],
                                            env=self.env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"souk serve did not start: {self.log.read_text()[-3000:]}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process, 15)

    def restart_in_background(self) -> None:
        """Stops the server now, and starts it again in a thread (the caller's clients meet a closed port)."""
        with self.lock:
            self.stop()
        threading.Thread(target=self._start_again, daemon=True).start()

    def _start_again(self) -> None:
        time.sleep(0.5)  # down long enough for every client to notice
        with self.lock:
            self.start()


@contextlib.contextmanager
def served(redis_url: str, tmp_path: Path, env: dict[str, str] | None = None) -> Iterator[Server]:
    server = Server(redis_url, tmp_path / "souk.log", {**QUIET, **(env or {})})
    server.start()
    try:
        yield server
    finally:
        with server.lock:
            server.stop()


_OPTIONS: dict[str, object] = {}  # a game's options (its first history entry's), by game id: read once a game


def bot_index(souk_url: str, body: dict) -> int:
    """The index in ``body`` (a seat's TableView as JSON) of the legal command the game's bot hook picks."""
    view = _typed_view(msgspec.convert(body, TableView))
    game = get_game(view.game)
    options = _OPTIONS.get(view.game_id)
    if options is None:
        history = httpx.get(f"{souk_url}/games/{view.game_id}/history", params={"limit": 1}, timeout=10).json()
        options = _OPTIONS[view.game_id] = msgspec.convert(history["entries"][0]["event"]["options"],
                                                           game.options_type)
    command = choose(view, strategy("seeker"), options, random.Random(view.version))
    return [msgspec.to_builtins(c) for c in view.legal].index(msgspec.to_builtins(command))


@contextlib.contextmanager
def control(server: Server) -> Iterator[str]:
    """The control server the Node tests call (see the module)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            try:
                if self.path == "/restart":
                    server.restart_in_background()
                    answer = {"stopped": True}
                elif self.path == "/choose":
                    body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                    answer = {"index": bot_index(server.url, body)}
                else:
                    self.send_error(404)
                    return
            except Exception as exc:  # noqa: BLE001 - the Node test shows it
                self.send_response(500)
                self.end_headers()
                self.wfile.write(f"{type(exc).__name__}: {exc}".encode())
                return
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def node_test(library: Path, *files: str, env: dict[str, str] | None = None, timeout: float = 400) -> str:
    """Runs Node's test runner on ``files`` of clients/typescript/test, one file at a time; asserts it passed."""
    # --test-force-exit: a failed test's sockets do not keep Node alive; a hang still shows what Node printed
    try:
        done = subprocess.run(["node", "--test", "--test-force-exit", "--experimental-websocket",
                               "--test-concurrency=1", *(str(NODE_TESTS / f) for f in files)],
                              capture_output=True, text=True, timeout=timeout, check=False, cwd=LIBRARY,
                              env={**os.environ, "SOUK_CLIENT_DIST": str(library), **(env or {})})
    except subprocess.TimeoutExpired as hung:
        printed = (hung.stdout or b"").decode(errors="replace") if isinstance(hung.stdout, bytes) else hung.stdout or ""
        pytest.fail(f"Node still running after {timeout} s; it printed:\n{printed[-20000:]}")
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-5000:]
    assert "# fail 0" in done.stdout and "# pass 0" not in done.stdout, done.stdout[-5000:]
    return done.stdout


def test_the_library_applies_json_patches_and_resends_without_a_server(library):
    node_test(library, "unit.test.mjs")


def test_a_game_of_each_title_is_played_to_its_end_through_the_library(library, redis_url, tmp_path):
    with served(redis_url, tmp_path) as server, control(server) as control_url:
        node_test(library, "games.test.mjs", env={"SOUK_URL": server.url, "SOUK_CONTROL_URL": control_url})


def test_follow_reconnects_and_catches_up_from_the_last_version_seen(library, redis_url, tmp_path):
    with served(redis_url, tmp_path) as server, control(server) as control_url:
        node_test(library, "follow.test.mjs", env={"SOUK_URL": server.url, "SOUK_CONTROL_URL": control_url})


def test_a_game_goes_on_through_the_library_across_a_restart_of_the_server(library, redis_url, tmp_path):
    with served(redis_url, tmp_path) as server, control(server) as control_url:
        node_test(library, "restart.test.mjs", env={"SOUK_URL": server.url, "SOUK_CONTROL_URL": control_url})
        assert server.process is not None and server.process.poll() is None  # the second server served the end


def test_the_library_waits_out_429s_with_retry_after(library, redis_url, tmp_path):
    limited = {"SOUK_RATE_PER_TOKEN": "1", "SOUK_BURST_PER_TOKEN": "2"}
    with served(redis_url, tmp_path, limited) as server:
        node_test(library, "ratelimit.test.mjs", env={"SOUK_URL": server.url})
