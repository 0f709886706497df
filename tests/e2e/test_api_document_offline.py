"""The API's documentation pages work offline: their scripts, styles and icons come from the gateway itself
(services/gateway/docs.py), never from a public CDN, and every one of them is served."""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

import httpx

URL = re.compile(r"""(?:src|href)\s*=\s*['"]([^'"]+)['"]""")
ANY_HOST = re.compile(r"""(?:https?:)?//[A-Za-z0-9.\-]+(?::\d+)?""")


def test_the_docs_pages_load_nothing_from_another_host_and_what_they_load_is_served(souk_url):
    gateway = urlsplit(souk_url).netloc
    with httpx.Client(base_url=souk_url, timeout=30) as client:
        for page in ("/schema", "/schema/swagger"):
            r = client.get(page)
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/html"), (page, r.text[:300])
            html = r.text
            # Every absolute address in the page (attributes, scripts, the inline document) is the gateway's.
            hosts = {urlsplit(m if m.startswith("http") else "http:" + m).netloc for m in ANY_HOST.findall(html)}
            assert hosts <= {gateway}, (page, hosts)
            loaded = URL.findall(html)
            assert any(u.endswith(".js") for u in loaded) and any(u.endswith(".css") for u in loaded), loaded
            for address in loaded:
                asset = client.get(urljoin(f"{souk_url}{page}", address))
                assert asset.status_code == 200 and asset.content, (page, address, asset.status_code)
                assert urlsplit(str(asset.url)).netloc == gateway
            assert "SwaggerUIBundle(" in html and '"openapi":"3.1.0"' in html  # Swagger UI 5 reads 3.1
        assert client.get("/schema/openapi.json").json()["openapi"] == "3.1.0"
        # Litestar's pages that load from CDNs are not served at all.
        for page in ("/schema/redoc", "/schema/elements", "/schema/rapidoc", "/schema/scalar"):
            r = client.get(page)
            assert r.status_code == 404 and not ANY_HOST.search(r.text), (page, r.status_code)
