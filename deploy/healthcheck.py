#!/usr/bin/env python3
"""The containers' health probe (the slim image has no curl): GET one URL; healthy on a 2xx answer.

  python /opt/souk/healthcheck.py [URL]

Without URL, the role's own endpoint, from the container's environment: ``http://127.0.0.1:$SOUK_METRICS_PORT/metrics``
when SOUK_METRICS_PORT is set (``souk engine`` and ``souk projector`` serve nothing else; the port answers once the
worker has joined its consumer groups), else ``http://127.0.0.1:$SOUK_PORT/health`` (``souk gateway``; 8000 by
default), which answers 503 while either Redis does not answer or a pub/sub listener is reconnecting.

Exit status 0: healthy; 1: not, with the reason on stderr (``docker inspect`` shows it). Only the standard library:
it runs on the image's Python, outside Souk's code. Proxy settings (HTTP_PROXY...) are ignored: the probe asks the
container itself.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping

TIMEOUT_S = 3.0


def default_url(env: Mapping[str, str]) -> str:
    metrics_port = env.get("SOUK_METRICS_PORT", "").strip()
    if metrics_port and metrics_port != "0":
        return f"http://127.0.0.1:{int(metrics_port)}/metrics"
    return f"http://127.0.0.1:{int(env.get('SOUK_PORT', '').strip() or 8000)}/health"


def probe(url: str, timeout: float = TIMEOUT_S) -> str | None:
    """None when ``url`` answers a 2xx within ``timeout`` seconds, else why not."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=timeout) as response:
            status = response.status
    except urllib.error.HTTPError as exc:
        detail = exc.read(300).decode("utf-8", "replace").strip()
        return f"{url} answered {exc.code}" + (f": {detail}" if detail else "")
    except (OSError, ValueError) as exc:  # refused, unreachable, timed out, a malformed URL
        return f"{url} did not answer: {exc}"
    if not 200 <= status < 300:
        return f"{url} answered {status}"
    return None


def main(argv: list[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    env = os.environ if env is None else env
    if len(argv) > 1:
        print("usage: healthcheck.py [URL]", file=sys.stderr)
        return 1
    try:
        url = argv[0] if argv else default_url(env)
    except ValueError as exc:
        print(f"healthcheck: SOUK_PORT / SOUK_METRICS_PORT is not a port number: {exc}", file=sys.stderr)
        return 1
    problem = probe(url)
    if problem:
        print(f"unhealthy: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
