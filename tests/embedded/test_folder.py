"""The embedded Redis of a data folder: recorded by `souk serve`, found by the other commands, restarted when
it dies, and the folder locked against a second `souk serve`."""

from __future__ import annotations

import json
import os
import signal
import time

import httpx
import pytest
import redis

from services.embedded.folder import Embedded, EmbeddedError, find
from tests.embedded.support import clean_env, embedded_serve, logged, souk


def answers(url: str) -> bool:
    client = redis.Redis.from_url(url, socket_connect_timeout=1)
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False
    finally:
        client.close()


def test_a_killed_child_is_started_again_on_its_port_and_keeps_what_it_acknowledged(tmp_path):
    embedded = Embedded(tmp_path, check_s=0.05).start()
    try:
        events = redis.Redis.from_url(embedded.events.url)
        events.set("kept", "1")
        port, pid = embedded.events.port, embedded.events.process.pid
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while embedded.restarts < 1 or not answers(embedded.events.url):
            assert time.monotonic() < deadline, "not restarted"
            time.sleep(0.05)
        assert embedded.events.port == port and embedded.events.process.pid != pid
        assert events.get("kept") == b"1"  # fsync always: acknowledged, then on disk
        record = json.loads((tmp_path / "embedded.json").read_text())
        assert record["events"]["pid"] == embedded.events.process.pid
        events.close()
    finally:
        embedded.stop()
    assert not (tmp_path / "embedded.json").exists()


def test_a_data_folder_serves_one_souk_serve_at_a_time_and_is_found_only_while_it_runs(tmp_path):
    with pytest.raises(EmbeddedError, match="no `souk serve` runs"):
        find(tmp_path)
    first = Embedded(tmp_path).start()
    try:
        found = find(tmp_path)
        assert (found.events_url, found.views_url) == (first.events.url, first.views.url)
        with pytest.raises(EmbeddedError, match="already runs on the data folder"):
            Embedded(tmp_path).start()
        assert answers(first.events.url)  # the refused one touched nothing
        record = (tmp_path / "embedded.json").read_text()
    finally:
        first.stop()
    (tmp_path / "embedded.json").write_text(record)  # a record left by a souk serve killed with -9
    with pytest.raises(EmbeddedError, match="no `souk serve` runs"):
        find(tmp_path)
    again = Embedded(tmp_path).start()  # the same ports when free: the URLs stay the same
    try:
        assert (again.events.port, again.views.port) == (first.events.port, first.views.port)
    finally:
        again.stop()


def test_souk_serve_records_its_redis_and_rebuild_finds_them_in_the_data_folder(tmp_path):
    with embedded_serve(tmp_path) as served:
        for _ in range(3):
            assert httpx.post(f"{served.url}/games", json={"game": "samarkand", "title": "t", "seats": 3},
                              timeout=10).status_code == 201
        record = served.record()
        assert record["pid"] == served.process.pid and record["redis_version"]
        started = logged(served.log, "embedded_redis_started")[0]
        assert started["events"] == record["events"]["url"] and started["redis_server"] == record["redis_server"]
        env = clean_env(SOUK_DATA_DIR=str(served.data_dir))

        done = souk("projections", "rebuild", "--force", "--progress", env=env)

        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "rebuilt the read models of 3 games"
        assert "projecting games: 3/3 (100%)" in done.stderr
        events = redis.Redis.from_url(record["events"]["url"])
        assert not list(events.scan_iter("souk:{p*}:views:*")) and not list(events.scan_iter("souk:{p*}:lobby*"))
        events.close()
        listening = logged(served.log, "listening")
        assert listening and listening[0]["url"] == served.url
    assert served.process.returncode == 0, served.log.read_text()[-3000:]  # SIGTERM: a clean stop
    assert not (served.data_dir / "embedded.json").exists()
    assert not answers(record["events"]["url"]) and not answers(record["views"]["url"])


def test_a_killed_embedded_event_store_is_restarted_under_souk_serve_and_nothing_accepted_is_lost(tmp_path):
    with embedded_serve(tmp_path) as served, httpx.Client(base_url=served.url, timeout=10) as client:
        created = client.post("/games", json={"game": "yspahan", "title": "before", "seats": 2}).json()
        game_id = created["game_id"]
        tokens = [client.post(f"/games/{game_id}/seats", json={"name": f"p{s}"}).json()["token"] for s in range(2)]
        before = len(client.get(f"/games/{game_id}/history").json()["entries"])
        assert before >= 3  # created, two joins
        os.kill(served.record()["events"]["pid"], signal.SIGKILL)
        killed_at = time.monotonic()

        deadline = killed_at + 15
        while True:  # a new game can be created and played again within seconds
            r = client.post("/games", json={"game": "yspahan", "title": "after", "seats": 2})
            if r.status_code == 201:
                break
            assert time.monotonic() < deadline, r.text
            time.sleep(0.2)
        after = r.json()["game_id"]
        for seat in range(2):
            assert client.post(f"/games/{after}/seats", json={"name": f"q{seat}"}).status_code == 201
        for seat, token in enumerate(tokens):  # the game from before the kill goes on
            auth = {"Authorization": f"Bearer {token}"}
            legal = client.get(f"/games/{game_id}/seats/{seat}/legal", headers=auth).json()["legal"]
            if legal:
                r = client.post(f"/games/{game_id}/seats/{seat}/commands", headers=auth,
                                json={"command_id": "after-kill", "command": legal[0]})
                assert r.status_code == 200, r.text
                break
        else:
            raise AssertionError("no seat may act")
        assert time.monotonic() - killed_at < 15
        history = client.get(f"/games/{game_id}/history").json()["entries"]
        assert len(history) > before  # everything from before the kill, then the command's events
        assert logged(served.log, "embedded_redis_restarted")[0]["role"] == "events"
