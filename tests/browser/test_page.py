"""The web client's page is served by the gateway at / and loads in Chromium without errors."""

from __future__ import annotations

import httpx

from tests.browser.conftest import PHONE


def test_the_page_loads_its_scripts_without_errors(open_page, souk_url):
    page = open_page("/")
    page.wait_for_function("document.getElementById('app').textContent.length > 0")
    assert "Souk" in page.text_content("#app")
    open_page("/", viewport=PHONE).wait_for_function("document.getElementById('app').textContent.length > 0")


def test_the_assets_are_served_from_the_package(souk_url):
    index = httpx.get(souk_url + "/")
    assert index.status_code == 200 and index.headers["content-type"].startswith("text/html")
    assert httpx.get(souk_url + "/app/js/web/src/main.js").status_code == 200
    assert httpx.get(souk_url + "/app/nothing.js").status_code == 404
