"""Whose address the limits count (issue #18 item 5): ``X-Forwarded-For`` is believed only from the proxies the
operator names (``SOUK_TRUSTED_PROXIES``, none by default); every test client connects from 127.0.0.1."""

from __future__ import annotations

import httpx
import pytest

pytestmark = pytest.mark.anyio

LIMITS = {"SOUK_RATE_PER_CLIENT": "1", "SOUK_BURST_PER_CLIENT": "10", "SOUK_RATE_PER_TOKEN": "0",
          "SOUK_OPEN_GAMES_PER_CLIENT": "2"}
BODY = {"game": "samarkand", "title": "t", "seats": 3}


def forwarded(i: int) -> dict[str, str]:
    return {"X-Forwarded-For": f"198.51.100.{i}"}


class TestByDefault:
    @pytest.fixture
    def souk_env(self) -> dict[str, str]:
        return dict(LIMITS)

    async def test_a_new_forwarded_address_on_each_request_is_still_the_same_limited_client(self, souk_url):
        async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
            answers = [await client.get("/catalog", headers=forwarded(i)) for i in range(30)]
        codes = [r.status_code for r in answers]
        assert codes.count(429) >= 15, codes
        assert {r.json()["code"] for r in answers if r.status_code == 429} == {"rate_limited"}

    async def test_a_new_forwarded_address_on_each_create_does_not_pass_a_full_quota(self, souk_url):
        async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
            answers = [await client.post("/games", json=BODY, headers=forwarded(i)) for i in range(5)]
        assert [r.status_code for r in answers] == [201, 201, 429, 429, 429]
        assert answers[-1].json()["code"] == "too_many_open_games"


class TestBehindATrustedProxy:
    @pytest.fixture
    def souk_env(self) -> dict[str, str]:
        return {**LIMITS, "SOUK_TRUSTED_PROXIES": "127.0.0.1"}

    async def test_the_forwarded_address_is_the_client_the_rate_limit_counts(self, souk_url):
        async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
            several = [await client.get("/catalog", headers=forwarded(i)) for i in range(30)]
            one = [await client.get("/catalog", headers=forwarded(200)) for _ in range(30)]
            # a client may not pose as the proxy's client: the address the trusted proxy added is the last one
            spoofed = [await client.get("/catalog", headers={"X-Forwarded-For": f"203.0.113.{i}, 198.51.100.201"})
                       for i in range(30)]
        assert [r.status_code for r in several] == [200] * 30
        assert [r.status_code for r in one].count(429) >= 15
        assert [r.status_code for r in spoofed].count(429) >= 15

    async def test_the_forwarded_address_is_the_client_the_open_games_quota_counts(self, souk_url):
        async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
            several = [await client.post("/games", json=BODY, headers=forwarded(i)) for i in range(4)]
            one = [await client.post("/games", json=BODY, headers=forwarded(100)) for _ in range(3)]
        assert [r.status_code for r in several] == [201] * 4
        assert [r.status_code for r in one] == [201, 201, 429]


@pytest.mark.parametrize("value", ["not-an-address", "10.0.0.0/33", "*"])
def test_a_trusted_proxy_that_is_no_address_or_network_is_refused_naming_the_variable(value, monkeypatch):
    from services.runtime.config import Settings, SettingError

    monkeypatch.setenv("SOUK_TRUSTED_PROXIES", value)
    with pytest.raises(SettingError, match="SOUK_TRUSTED_PROXIES"):
        Settings.from_env()


def test_trusted_proxies_are_addresses_and_networks(monkeypatch):
    from services.runtime.config import Settings

    monkeypatch.setenv("SOUK_TRUSTED_PROXIES", " 127.0.0.1, 172.16.0.0/12,::1 ")
    assert Settings.from_env().trusted_proxies == ("127.0.0.1", "172.16.0.0/12", "::1")
    monkeypatch.delenv("SOUK_TRUSTED_PROXIES")
    assert Settings.from_env().trusted_proxies == ()
