"""The gateway's own HTTP metrics and access log, and a /metrics that strict scrapers read (issue #18 item 15)."""

from __future__ import annotations

import pytest
from litestar.testing import AsyncTestClient
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families
from structlog.testing import capture_logs

from services.gateway.app import create_app
from services.runtime.config import ENV, SettingError, Settings

pytestmark = pytest.mark.anyio

VIEW = "/games/{game_id}/view"


def value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def app(redis_url: str, views_url: str, **settings):
    return create_app(Settings(redis_url=redis_url, views_redis_url=views_url, rate_per_client=0, rate_per_token=0,
                               **settings))


async def test_metrics_are_served_with_one_charset_in_their_content_type(redis_url, views_url):
    async with AsyncTestClient(app(redis_url, views_url)) as client:
        r = await client.get("/metrics")
    assert r.status_code == 200
    assert r.headers.get_list("content-type") == ["text/plain; version=1.0.0; charset=utf-8"]


async def test_requests_are_counted_by_route_template_and_status_and_timed(redis_url, views_url):
    before = value("souk_http_requests_total", method="GET", route=VIEW, status="404")
    timed = value("souk_http_request_duration_seconds_count", method="GET", route=VIEW)
    unmatched = value("souk_http_requests_total", method="GET", route="unmatched", status="404")
    odd = value("souk_http_requests_total", method="other", route="unmatched", status="405")
    async with AsyncTestClient(app(redis_url, views_url)) as client:
        for game_id in ("nope1", "nope2", "nope3"):
            assert (await client.get(f"/games/{game_id}/view")).status_code == 404
        assert (await client.get("/no/such/route/at/all")).status_code == 404
        assert (await client.request("BREW", "/games")).status_code == 405
        exposed = (await client.get("/metrics")).text
    assert value("souk_http_requests_total", method="GET", route=VIEW, status="404") == before + 3
    assert value("souk_http_request_duration_seconds_count", method="GET", route=VIEW) == timed + 3
    assert value("souk_http_requests_total", method="GET", route="unmatched", status="404") == unmatched + 1
    assert value("souk_http_requests_total", method="other", route="unmatched", status="405") == odd + 1
    routes = {s.labels.get("route") for family in text_string_to_metric_families(exposed)
              if family.name.startswith("souk_http_") for s in family.samples}
    assert VIEW in routes and not any("nope" in r or "no/such" in r for r in routes if r), routes


async def test_the_access_log_has_one_line_per_request_when_switched_on(redis_url, views_url):
    async with AsyncTestClient(app(redis_url, views_url, access_log=True)) as client:
        with capture_logs() as logged:
            await client.get("/games/nope/view?min_version=1")
            await client.get("/catalog")
    lines = [line for line in logged if line["event"] == "http_request"]
    assert len(lines) == 2, logged
    first = lines[0]
    assert (first["method"], first["route"], first["path"], first["status"]) == ("GET", VIEW, "/games/nope/view", 404)
    assert first["client"] == "testclient" and 0 <= first["duration_ms"] < 10_000
    assert (lines[1]["route"], lines[1]["status"]) == ("/catalog", 200)


async def test_the_access_log_is_off_by_default(redis_url, views_url):
    assert Settings().access_log is False
    async with AsyncTestClient(app(redis_url, views_url)) as client:
        with capture_logs() as logged:
            await client.get("/catalog")
    assert not [line for line in logged if line["event"] == "http_request"]


def test_the_access_log_setting_reads_on_and_off_and_refuses_anything_else(monkeypatch):
    assert ENV["access_log"][0] == "SOUK_ACCESS_LOG"
    for text, expected in (("1", True), ("true", True), ("on", True), ("0", False), ("off", False)):
        monkeypatch.setenv("SOUK_ACCESS_LOG", text)
        assert Settings.from_env(redis_url="redis://127.0.0.1:1/0").access_log is expected
    monkeypatch.setenv("SOUK_ACCESS_LOG", "loud")
    with pytest.raises(SettingError, match="SOUK_ACCESS_LOG"):
        Settings.from_env(redis_url="redis://127.0.0.1:1/0")
