"""A store that does not answer is the server's trouble, said so: 503 store_unavailable with Retry-After, not a
500 (found by souk chaos)."""

from __future__ import annotations

import httpx
import pytest

from services.embedded.redis import RedisServer
from tests.e2e.support import serve

pytestmark = pytest.mark.anyio


async def test_requests_while_the_event_store_is_away_get_503_and_work_again_after(tmp_path):
    server = RedisServer(tmp_path / "redis", appendonly=True).start()
    base = server.url.rsplit("/", 1)[0]
    try:
        with serve(f"{base}/0", f"{base}/1", tmp_path / "souk.log") as url:
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                body = {"game": "yspahan", "title": "away", "seats": 2}
                assert (await client.post("/games", json=body)).status_code == 201
                server.stop()
                r = await client.post("/games", json=body)
                assert r.status_code == 503 and r.json()["code"] in ("store_unavailable", "redis_unavailable"), r.text
                assert r.headers.get("retry-after") or r.json()["code"] == "redis_unavailable"
                r = await client.get("/catalog")
                assert r.status_code in (200, 503)
                server.start()
                for _ in range(100):
                    r = await client.post("/games", json=body)
                    if r.status_code == 201:
                        break
                assert r.status_code == 201, r.text
    finally:
        server.stop()
