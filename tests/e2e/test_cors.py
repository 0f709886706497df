"""A browser frontend on another origin may call the API when the operator allows its origin (issue #9 item 4)."""

from __future__ import annotations

import httpx
import pytest

pytestmark = pytest.mark.anyio


@pytest.fixture
def souk_env() -> dict[str, str]:
    return {"SOUK_CORS_ORIGINS": "https://play.example, http://localhost:5173", "SOUK_RATE_PER_CLIENT": "0",
            "SOUK_RATE_PER_TOKEN": "0"}


async def test_an_allowed_origin_gets_cors_headers_and_another_none(souk_url):
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        preflight = await client.options("/games", headers={
            "Origin": "https://play.example", "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type, authorization"})
        assert preflight.status_code in (200, 204)
        assert preflight.headers["access-control-allow-origin"] == "https://play.example"
        assert "authorization" in preflight.headers["access-control-allow-headers"].lower()
        preflight = await client.options("/games/x/seats/0", headers={
            "Origin": "https://play.example", "Access-Control-Request-Method": "DELETE"})
        assert "DELETE" in preflight.headers["access-control-allow-methods"]  # leave a seat, cancel a game
        r = await client.get("/catalog", headers={"Origin": "http://localhost:5173"})
        assert r.headers["access-control-allow-origin"] == "http://localhost:5173"
        r = await client.get("/catalog", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in r.headers
