"""Webhooks with the real processes: `souk serve` (its webhook worker included) and a second `souk webhooks` beside
it, a Samarkand game played over HTTP by seats that registered URLs on a local receiver (allowed by the operator's
settings), each notice accepted once by its key whichever worker sent it; `souk webhooks --dead` lists the dead
letters."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections import Counter

import httpx
import pytest

from services.webhooks import signing
from tests.e2e.support import bearer
from tests.embedded.support import stop
from tests.services.webhook_receiver import Running

pytestmark = pytest.mark.anyio

WEBHOOK_ENV = {"SOUK_WEBHOOKS_ALLOW_PRIVATE": "1", "SOUK_WEBHOOKS_ALLOW_HTTP": "on", "SOUK_WEBHOOKS_RETRY_S": "0.05",
               "SOUK_WEBHOOKS_RETRY_MAX_S": "0.2", "SOUK_WEBHOOKS_TIMEOUT_S": "0.5", "SOUK_WEBHOOKS_POLL_S": "0.05"}


@pytest.fixture
def souk_env(souk_env):
    return {**souk_env, **WEBHOOK_ENV}


async def test_two_webhook_workers_deliver_every_turn_of_a_game_once(souk_url, redis_url):
    views_url = redis_url.rsplit("/", 1)[0] + "/1"
    env = {**os.environ, "REDIS_URL": redis_url, "SOUK_VIEWS_REDIS_URL": views_url, "SOUK_LOG_LEVEL": "warning",
           **WEBHOOK_ENV}
    second = subprocess.Popen([sys.executable, "-m", "services.cli", "webhooks"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rng = random.Random(19)
    with Running(mode="refuse") as receiver:
        try:
            async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
                r = await client.post("/games", json={"game": "samarkand", "title": "hooks", "seats": 3})
                game_id = r.json()["game_id"]
                tokens, secrets = [], []
                for seat in range(3):
                    r = await client.post(f"/games/{game_id}/seats",
                                          json={"name": f"p{seat}", "webhook": receiver.url(f"/seat{seat}")})
                    assert r.status_code == 201, r.text
                    tokens.append(r.json()["token"])
                    secrets.append(r.json()["webhook_secret"])
                for n in range(12):  # seats play while the receiver refuses
                    view = (await client.get(f"/games/{game_id}/view")).json()
                    seat = rng.choice(view["flow"]["awaiting"])
                    legal = (await client.get(f"/games/{game_id}/seats/{seat}/legal", headers=bearer(tokens[seat]))
                             ).json()["legal"]
                    r = await client.post(f"/games/{game_id}/seats/{seat}/commands", headers=bearer(tokens[seat]),
                                          json={"command_id": f"c{n}", "command": rng.choice(legal)})
                    assert r.status_code == 200, r.text
                time.sleep(0.5)
                receiver.mode = "ok"
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline:
                    time.sleep(0.3)
                    keys_seen = {json.loads(x.body)["key"] for x in receiver.all()}
                    accepted = {json.loads(x.body)["key"] for x in receiver.accepted()}
                    if keys_seen and keys_seen == accepted:
                        break
                time.sleep(0.5)
                assert keys_seen and keys_seen == accepted  # every notice tried came through
                once = Counter(json.loads(x.body)["key"] for x in receiver.accepted())
                assert set(once.values()) == {1}, once
                for x in receiver.accepted():
                    notice = json.loads(x.body)
                    seat = int(x.path.removeprefix("/seat"))
                    assert notice["seat"] == seat and notice["kind"] == "turn" and notice["game_id"] == game_id
                    headers = {k.lower(): v for k, v in x.headers.items()}
                    assert signing.verify(secrets[seat], headers["souk-timestamp"], x.body, headers["souk-signature"],
                                          time.time())
                assert {int(x.path.removeprefix("/seat")) for x in receiver.accepted()} == {0, 1, 2}
                assert second.poll() is None  # the second worker ran all along (which of the two took an
                # event or a delivery is Redis's choice: each notice was accepted once all the same)
        finally:
            stop(second, 10)
    dead = subprocess.run([sys.executable, "-m", "services.cli", "webhooks", "--dead"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert dead.returncode == 0 and dead.stdout == "", dead.stderr

