"""The reference web client: its built files (``static/``), made from ``clients/web`` by ``npm run build`` there
(the developers' step; tests/client/test_web_build.py fails when they are out of date). The gateway serves them:
``/`` is ``static/index.html``, ``/app/...`` the rest (services/gateway/web.py). Nothing here runs in Python."""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"
INDEX = STATIC / "index.html"
