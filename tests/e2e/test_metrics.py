"""Metrics and tracing on the real process (issue #9 item 7): `GET /metrics` in Prometheus' text format, and one
command followed by its trace id through the gateway's, the engine's and the projector's log lines."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest
from httpx_ws import aconnect_ws
from prometheus_client.parser import text_string_to_metric_families

from services.history.audit import verify_game
from services.embedded.redis import free_port
from tests.e2e.support import join_all
from services.store import keys

pytestmark = pytest.mark.anyio
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


@pytest.fixture
def souk_env() -> dict[str, str]:
    """Debug logs (the per-command lines), and a per-client limit low enough that 60 quick requests hit it."""
    return {"SOUK_LOG_LEVEL": "debug", "SOUK_RATE_PER_CLIENT": "5", "SOUK_BURST_PER_CLIENT": "40",
            "SOUK_RATE_PER_TOKEN": "0", "SOUK_OPEN_GAMES_PER_CLIENT": "0"}


def samples(text: str) -> dict[tuple[str, frozenset], float]:
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def sample(found: dict, name: str, **labels: str) -> float | None:
    return found.get((name, frozenset(labels.items())))


async def test_a_command_is_measured_and_followed_by_its_trace_id_across_the_processes(souk_url, tmp_path):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        created = await client.post("/games", json={"game": "yspahan", "title": "traced", "seats": 2})
        game_id = created.json()["game_id"]
        tokens = await join_all(client, game_id, 2)
        seat = (await client.get(f"/games/{game_id}/view")).json()["flow"]["awaiting"][0]
        auth = {"Authorization": f"Bearer {tokens[seat]}"}
        legal = (await client.get(f"/games/{game_id}/seats/{seat}/legal", headers=auth)).json()["legal"]
        async with aconnect_ws(f"{souk_url}/games/{game_id}/seats/{seat}/ws?token={tokens[seat]}", client) as ws:
            await ws.receive_text()
            r = await client.post(f"/games/{game_id}/seats/{seat}/commands",
                                  headers={**auth, "traceparent": f"00-{TRACE}-00f067aa0ba902b7-01"},
                                  json={"command_id": "traced-1", "command": legal[0]})
            assert r.status_code == 200, r.text
            answered = r.headers["traceparent"]
            assert answered.startswith(f"00-{TRACE}-") and answered.split("-")[2] != "00f067aa0ba902b7"
            refused = await client.post(f"/games/{game_id}/seats/{1 - seat}/commands",
                                        headers={"Authorization": f"Bearer {tokens[1 - seat]}", "traceparent": "junk"},
                                        json={"command_id": "refused-1", "command": legal[0]})
            assert refused.status_code == 422 and refused.json()["code"] == "not_your_turn"
            assert len(refused.headers["traceparent"]) == 55  # "junk" is no traceparent: a new trace
            metrics = await client.get("/metrics")
        assert metrics.status_code == 200 and metrics.headers["content-type"].startswith("text/plain")
        found = samples(metrics.text)
        assert sample(found, "souk_commands_total", game="yspahan", outcome="accepted", code="") == 4  # + create, joins
        assert sample(found, "souk_commands_total", game="yspahan", outcome="rejected", code="not_your_turn") == 1
        assert sample(found, "souk_command_latency_seconds_count", game="yspahan") >= 1
        assert sample(found, "souk_websockets_open") == 1
        assert sample(found, "souk_listener_connected", listener="replies") == 1
        assert sample(found, "souk_listener_connected", listener="updates") == 1
        assert sample(found, "souk_stream_length", stream=keys.events(0)) >= 4
        assert sample(found, "souk_consumer_group_pending", stream=keys.commands(0), group="engine") is not None
        assert sample(found, "souk_consumer_group_pending", stream=keys.events(0), group="projector") is not None
        assert sample(found, "souk_parked_commands") == 0
        assert sample(found, "souk_backlog_age_seconds") < 5
        assert "/metrics" not in (await client.get("/schema/openapi.json")).json()["paths"]

        # the chain still verifies, from the spectator's history
        what, problems = await asyncio.to_thread(verify_game, souk_url, game_id)
        assert (what, problems) == ("history", [])

        # a scraper is never rate limited; a player is
        assert {(await client.get("/metrics")).status_code for _ in range(60)} == {200}
        assert 429 in {(await client.get("/catalog")).status_code for _ in range(60)}

    lines = [json.loads(line) for line in (tmp_path / "souk.log").read_text().splitlines() if line.startswith("{")]
    traced = {line["event"] for line in lines if line.get("trace_id") == TRACE}
    # the gateway's answer, the engine's decision, the projector's write: one command across every role
    assert {"command_answered", "command_accepted", "command_projected"} <= traced, traced
    for line in lines:
        if line.get("trace_id") == TRACE:
            assert line["game_id"] == game_id and line["command_id"] == "traced-1" and line["seat"] == seat


def test_a_worker_serves_its_metrics_on_its_own_port_when_asked(redis_url, tmp_path):
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "SOUK_METRICS_PORT": str(port), "SOUK_LOG_LEVEL": "info"}
    with open(tmp_path / "out", "wb") as out:
        worker = subprocess.Popen([sys.executable, "-m", "services.cli", "engine"], env=env, stdout=out,
                                  stderr=subprocess.STDOUT)
        try:
            deadline, response = time.monotonic() + 30, None
            while response is None and time.monotonic() < deadline:
                try:
                    response = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=2)
                except httpx.HTTPError:
                    time.sleep(0.2)
            assert response is not None and response.status_code == 200, (tmp_path / "out").read_text()[-2000:]
            found = samples(response.text)
            assert sample(found, "souk_stream_length", stream=keys.commands(0)) == 0
            assert sample(found, "souk_consumer_group_pending", stream=keys.commands(0), group="engine") == 0
        finally:
            worker.send_signal(signal.SIGTERM)
            assert worker.wait(timeout=15) == 0
