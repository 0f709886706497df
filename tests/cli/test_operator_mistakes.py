"""Every operator mistake ends the real `souk` with one line on stderr, `souk: ...`, a non-zero exit and no
traceback; and a gateway says where it listens once its port is bound."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

from services.embedded.redis import free_port
from tests.embedded.support import ROOT, clean_env, souk


def assert_one_line(done: subprocess.CompletedProcess, *fragments: str) -> str:
    assert done.returncode != 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("souk: "), done.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def nobody() -> str:
    """A Redis URL where no Redis answers (a free port, never the machine's own Redis on 6379)."""
    return f"redis://127.0.0.1:{free_port()}/0"


@pytest.mark.parametrize(("args", "env", "fragments"), [
    (["engine"], {"REDIS_URL": "@nobody"}, ["cannot use the event store", "Connection refused"]),
    (["projections", "rebuild"], {"REDIS_URL": "@nobody"}, ["cannot use the event store"]),
    (["gateway", "--port", "@free"], {"REDIS_URL": "@nobody"}, ["cannot use the event store"]),
    (["projector"], {"REDIS_URL": "http://127.0.0.1:6380/0"}, ["REDIS_URL=", "expected a Redis URL"]),
    (["engine"], {"SOUK_VIEWS_REDIS_URL": "localhost:6380"}, ["SOUK_VIEWS_REDIS_URL=", "expected a Redis URL"]),
    (["serve"], {"SOUK_PORT": "abc"}, ["SOUK_PORT='abc'", "whole number"]),
    (["serve"], {"SOUK_FSYNC": "sometimes"}, ["SOUK_FSYNC='sometimes'", "always or everysec"]),
    (["schema"], {"SOUK_LOG_LEVEL": "loud"}, ["SOUK_LOG_LEVEL='loud'", "debug"]),
    (["engine"], {"SOUK_BATCH": "0"}, ["SOUK_BATCH='0'", "at least 1"]),
    (["projector"], {"SOUK_PROJECTOR_PARTITION": "2/2"}, ["SOUK_PROJECTOR_PARTITION='2/2'", "i/N"]),
    (["gateway"], {"SOUK_REPLY_TIMEOUT": "soon"}, ["SOUK_REPLY_TIMEOUT='soon'", "seconds"]),
    (["serve", "--port", "99999"], {}, ["--port", "1 to 65535"]),
    (["projections", "rebuild"], {"SOUK_DATA_DIR": "@tmp"}, ["no `souk serve` runs on the data folder"]),
    (["engine"], {"SOUK_DATA_DIR": "@tmp"}, ["no `souk serve` runs on the data folder"]),
    (["verify", "some-game", "--server", "@nobody-http"], {}, ["cannot read some-game", "Connection refused"]),
])
def test_a_mistake_is_one_line_and_a_non_zero_exit(args, env, fragments, tmp_path):
    fill = {"@nobody": nobody(), "@free": str(free_port()), "@tmp": str(tmp_path / "data"),
            "@nobody-http": f"http://127.0.0.1:{free_port()}"}
    done = souk(*[fill.get(a, a) for a in args], env=clean_env(**{k: fill.get(v, v) for k, v in env.items()}))
    assert_one_line(done, *fragments)


@pytest.mark.parametrize("command", ["serve", "gateway"])
def test_a_taken_port_is_said_before_anything_starts(command, tmp_path, redis_url):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = clean_env(SOUK_DATA_DIR=str(tmp_path / "data"), SOUK_PORT=str(port))
        if command == "gateway":
            env["REDIS_URL"] = redis_url
        done = souk(command, env=env)
    line = assert_one_line(done, f"cannot listen on 127.0.0.1:{port}", "taken")
    assert "listening" not in done.stdout + done.stderr and "serving" not in line
    assert not (tmp_path / "data").exists()  # no embedded Redis was started


def test_the_gateway_says_where_it_listens_once_the_port_is_bound(redis_url, views_url):
    port = free_port()
    env = clean_env(REDIS_URL=redis_url, SOUK_VIEWS_REDIS_URL=views_url, SOUK_PORT=str(port))
    process = subprocess.Popen([sys.executable, "-m", "services.cli", "gateway"], env=env, cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        for line in process.stderr:
            if '"listening"' in line:
                break
            assert time.monotonic() < deadline and process.poll() is None, line
        else:
            raise AssertionError("no listening line")
        assert f'"url": "http://127.0.0.1:{port}"' in line
        with socket.create_connection(("127.0.0.1", port), timeout=2):  # bound and accepting when it says so
            pass
    finally:
        process.terminate()
        process.wait(timeout=15)
        process.stderr.close()
