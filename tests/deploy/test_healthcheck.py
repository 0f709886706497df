"""deploy/healthcheck.py, the containers' probe (the slim image has no curl), against a real HTTP server: healthy
on a 2xx only, unhealthy (exit 1, the reason on stderr) on a 503, a refused connection or a server that never
answers, and the role's own endpoint when no URL is given."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from services.embedded.redis import free_port
from tests.deploy.support import ROOT

SCRIPT = ROOT / "deploy" / "healthcheck.py"

spec = importlib.util.spec_from_file_location("souk_healthcheck", SCRIPT)
healthcheck = importlib.util.module_from_spec(spec)
spec.loader.exec_module(healthcheck)


class Answers(BaseHTTPRequestHandler):
    statuses = {"/health": 200, "/metrics": 200, "/down": 503, "/slow": 200}

    def do_GET(self):  # noqa: N802 - http.server's name
        if self.path == "/slow":
            time.sleep(2)
        status = self.statuses.get(self.path, 404)
        body = b'{"code": "redis_unavailable"}' if status == 503 else b"ok"
        try:
            self.send_response(status)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # /slow: the probe gave up and closed
            pass

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Answers)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_a_2xx_answer_is_healthy(server):
    assert healthcheck.main([f"{server}/health"], env={}) == 0


def test_a_503_is_unhealthy_and_says_what_the_server_answered(server, capsys):
    assert healthcheck.main([f"{server}/down"], env={}) == 1
    err = capsys.readouterr().err
    assert "answered 503" in err and "redis_unavailable" in err
    assert healthcheck.probe(f"{server}/down") == f'{server}/down answered 503: {{"code": "redis_unavailable"}}'


def test_a_refused_connection_is_unhealthy():
    url = f"http://127.0.0.1:{free_port()}/health"
    assert healthcheck.main([url], env={}) == 1
    assert "did not answer" in healthcheck.probe(url)


def test_a_server_that_does_not_answer_in_time_is_unhealthy(server):
    started = time.monotonic()
    assert "timed out" in healthcheck.probe(f"{server}/slow", timeout=0.3)
    assert time.monotonic() - started < 1.5


def test_a_proxy_in_the_environment_is_not_used(server, monkeypatch):
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{free_port()}")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    assert healthcheck.probe(f"{server}/health") is None


def test_without_a_url_a_worker_is_probed_on_its_metrics_port_and_the_gateway_on_its_health():
    assert healthcheck.default_url({"SOUK_METRICS_PORT": "9100", "SOUK_PORT": "8000"}) == \
        "http://127.0.0.1:9100/metrics"
    assert healthcheck.default_url({"SOUK_METRICS_PORT": "0", "SOUK_PORT": "8001"}) == "http://127.0.0.1:8001/health"
    assert healthcheck.default_url({}) == "http://127.0.0.1:8000/health"


def test_a_port_that_is_not_a_number_is_a_clear_failure(capsys):
    assert healthcheck.main([], env={"SOUK_PORT": "eighty"}) == 1
    assert "not a port number" in capsys.readouterr().err


def test_the_script_runs_as_the_image_runs_it(server):
    port = server.rsplit(":", 1)[1]
    healthy = subprocess.run([sys.executable, str(SCRIPT)], env={"SOUK_METRICS_PORT": port},
                             capture_output=True, text=True, timeout=10)
    assert (healthy.returncode, healthy.stderr) == (0, "")
    sick = subprocess.run([sys.executable, str(SCRIPT), f"{server}/down"], capture_output=True, text=True, timeout=10)
    assert sick.returncode == 1 and sick.stderr.startswith(f"unhealthy: {server}/down answered 503")
