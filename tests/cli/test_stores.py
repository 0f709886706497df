"""Read models never go into the event store, nor events into a read store: each store carries its role."""

from __future__ import annotations

import re

import redis

from tests.embedded.support import clean_env, embedded_serve, logged, souk


def keys_of(url: str) -> set[bytes]:
    client = redis.Redis.from_url(url)
    try:
        return set(client.scan_iter(count=1000))
    finally:
        client.close()


def one_line_refusal(done) -> str:
    assert done.returncode != 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("souk: "), done.stderr
    return lines[0]


def test_rebuild_with_redis_url_at_the_embedded_event_store_and_no_views_url_writes_no_read_model_there(tmp_path):
    with embedded_serve(tmp_path) as served:
        import httpx

        game = httpx.post(f"{served.url}/games", json={"game": "yspahan", "title": "t", "seats": 2}, timeout=10)
        assert game.status_code == 201, game.text
        events_url = logged(served.log, "embedded_redis_started")[0]["events"]
        before = keys_of(events_url)

        done = souk("projections", "rebuild", "--force", env=clean_env(REDIS_URL=events_url))

        line = one_line_refusal(done)
        assert "SOUK_VIEWS_REDIS_URL" in line
        after = keys_of(events_url)
        assert not [k for k in after - before if re.match(rb"souk:\{p\d+\}:(views|history|lobby|position|seats)", k)]


def test_a_read_store_is_refused_as_the_event_store_and_an_event_store_as_the_read_store(redis_url):
    from services.cli.stores import check
    from services.runtime.config import Settings

    base = redis_url.rsplit("/", 1)[0]
    events, views = f"{base}/0", f"{base}/1"
    redis.Redis.from_url(views).flushdb()
    check(Settings(redis_url=events, views_redis_url=views))  # what every command does first: the roles recorded

    swapped = souk("engine", env=clean_env(REDIS_URL=views))
    assert "is a read store" in one_line_refusal(swapped)

    redis.Redis.from_url(views).flushdb()
    redis.Redis.from_url(events).flushdb()
    check(Settings(redis_url=views))  # now database 1 is an event store holding its own read models
    crossed = souk("projections", "rebuild", env=clean_env(REDIS_URL=events, SOUK_VIEWS_REDIS_URL=views))
    assert "is an event store, not a read store" in one_line_refusal(crossed)
    assert redis.Redis.from_url(events).dbsize() == 1  # its role only: nothing was projected into it


def test_one_redis_for_both_stores_still_works_and_a_new_read_store_takes_the_old_ones_place(redis_url):
    from services.cli.stores import ROLE, check
    from services.runtime.config import Settings

    base = redis_url.rsplit("/", 1)[0]
    check(Settings(redis_url=redis_url))
    check(Settings(redis_url=redis_url))  # again: the same roles
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    role = client.hgetall(ROLE)
    assert role["role"] == "events" and role["views"] == role["id"]
    fresh = f"{base}/2"
    redis.Redis.from_url(fresh).flushdb()
    check(Settings(redis_url=redis_url, views_redis_url=fresh))  # the read models move to their own Redis
    assert client.hget(ROLE, "views") == redis.Redis.from_url(fresh, decode_responses=True).hget(ROLE, "id")
    redis.Redis.from_url(fresh).flushdb()
    check(Settings(redis_url=redis_url, views_redis_url=fresh))  # that Redis restarted empty: still its read store
    client.close()
