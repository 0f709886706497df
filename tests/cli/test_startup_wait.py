"""A service started while its Redis is away (restarting, as `souk chaos` does it) waits for it for
SOUK_STARTUP_WAIT_S, then serves; a Redis that never answers still ends it with one line and a non-zero exit.

Found by `souk chaos`: the event store was killed as the supervisor restarted the engine, and the engine exited 1
("cannot use the event store ... Connection refused"): a crash, where a service only had to wait a second.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
import redis

from services.embedded.redis import RedisServer, free_port
from tests.cli.test_operator_mistakes import assert_one_line
from tests.embedded.support import ROOT, clean_env, souk, stop


@pytest.mark.parametrize("role", ["engine", "projector", "gateway"])
def test_a_service_started_before_its_redis_waits_for_it(role, tmp_path):
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    env = clean_env(REDIS_URL=url, SOUK_PORT=str(free_port()), SOUK_STARTUP_WAIT_S="20")
    process = subprocess.Popen([sys.executable, "-m", "services.cli", role], env=env, cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    server = RedisServer(tmp_path / "redis", port=port, appendonly=False)
    try:
        time.sleep(1.5)  # the service has found nobody on the port by now
        assert process.poll() is None, process.communicate()[0]
        server.start()
        client = redis.Redis.from_url(url)
        deadline = time.monotonic() + 20
        while client.hget("souk:store", "role") is None:  # the service checked the store and went on
            assert process.poll() is None, process.communicate()[0]
            assert time.monotonic() < deadline, "the service never used its Redis"
            time.sleep(0.1)
        assert client.hget("souk:store", "role") == b"events"
        time.sleep(1.0)
        assert process.poll() is None, process.communicate()[0]
        client.close()
    finally:
        stop(process)
        server.stop()


def test_a_redis_that_never_answers_still_ends_the_service_in_one_line():
    url = f"redis://127.0.0.1:{free_port()}/0"
    started = time.monotonic()
    done = souk("engine", env=clean_env(REDIS_URL=url, SOUK_STARTUP_WAIT_S="1"))
    line = assert_one_line(done, "cannot use the event store", "Connection refused", "SOUK_STARTUP_WAIT_S")
    assert "1 s" in line
    assert time.monotonic() - started >= 1.0


def test_a_refused_password_is_a_mistake_said_at_once_not_waited_for(tmp_path):
    server = RedisServer(tmp_path / "redis", appendonly=False).start()
    try:
        client = redis.Redis.from_url(server.url)
        client.config_set("requirepass", "right")
        client.close()
        started = time.monotonic()
        done = souk("engine", env=clean_env(REDIS_URL=f"redis://:wrong@127.0.0.1:{server.port}/0",
                                            SOUK_STARTUP_WAIT_S="20"))
        line = assert_one_line(done, "cannot use the event store")
        assert "SOUK_STARTUP_WAIT_S" not in line and "wrong" not in line  # the password is not shown either
        assert time.monotonic() - started < 15
    finally:
        server.stop()


def test_a_service_started_while_its_redis_is_out_of_memory_waits_for_room(tmp_path):
    """Found by `souk chaos` in CI: the engine was restarted while the harness held the event store at its maxmemory
    (noeviction), its first write ("OOM command not allowed ...") ended it with exit 1, and the harness counted a
    crash. A Redis refusing writes for a while (OOM, BUSY, MISCONF, a replica being promoted) is waited for like one
    that does not answer yet."""
    server = RedisServer(tmp_path / "redis", appendonly=False).start()
    client = redis.Redis.from_url(server.url)
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory", 1)
    env = clean_env(REDIS_URL=server.url, SOUK_PORT=str(free_port()), SOUK_STARTUP_WAIT_S="20")
    process = subprocess.Popen([sys.executable, "-m", "services.cli", "engine"], env=env, cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(2.0)  # the engine has met the refusal by now
        assert process.poll() is None, process.communicate()[0]
        client.config_set("maxmemory", 0)
        deadline = time.monotonic() + 20
        while client.hget("souk:store", "role") is None:
            assert process.poll() is None, process.communicate()[0]
            assert time.monotonic() < deadline, "the engine never used its Redis"
            time.sleep(0.1)
        time.sleep(1.0)
        assert process.poll() is None, process.communicate()[0]
    finally:
        client.close()
        stop(process)
        server.stop()


def test_a_redis_out_of_memory_for_good_ends_the_service_in_one_line(tmp_path):
    server = RedisServer(tmp_path / "redis", appendonly=False).start()
    try:
        client = redis.Redis.from_url(server.url)
        client.config_set("maxmemory-policy", "noeviction")
        client.config_set("maxmemory", 1)
        client.close()
        done = souk("engine", env=clean_env(REDIS_URL=server.url, SOUK_STARTUP_WAIT_S="1"))
        line = assert_one_line(done, "cannot use the event store", "maxmemory", "SOUK_STARTUP_WAIT_S")
        assert "1 s" in line
    finally:
        server.stop()
