"""Accepted means durable by default (issue #8 item 13): the shipped and the embedded event store fsync every
write before answering."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from services.embedded.redis import RedisServer

ROOT = Path(__file__).resolve().parents[2]


def conf(path: Path) -> dict[str, str]:
    lines = [line.split(None, 1) for line in path.read_text().splitlines() if line.strip() and line[0] != "#"]
    return {k: v.strip() for k, v in lines}


def test_the_shipped_event_store_configuration_fsyncs_every_write_and_bounds_memory():
    events = conf(ROOT / "deploy" / "redis.conf")
    assert events["appendonly"] == "yes" and events["appendfsync"] == "always"
    assert events["maxmemory-policy"] == "noeviction" and events["maxmemory"] != "0"
    views = conf(ROOT / "deploy" / "redis-views.conf")
    assert views["maxmemory"] != "0" and views["maxmemory-policy"] == "noeviction"


def test_the_embedded_event_store_fsyncs_every_write(tmp_path):
    from services.embedded.redis import embedded_redis

    servers = embedded_redis(str(tmp_path))
    try:
        events, views = (redis.Redis.from_url(s.url) for s in servers)
        assert events.config_get("appendfsync")["appendfsync"] == "always"
        assert events.config_get("appendonly")["appendonly"] == "yes"
        assert views.config_get("appendonly")["appendonly"] == "no"
        events.close()
        views.close()
    finally:
        for server in servers:
            server.stop()


def test_a_redis_server_refuses_an_unknown_fsync_policy(tmp_path):
    with pytest.raises(ValueError):
        RedisServer(tmp_path, fsync="never")
