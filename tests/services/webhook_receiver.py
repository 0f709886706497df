"""A fake webhook receiver on a free local port (http.server in a thread): it answers as its ``mode`` says (``ok``:
204; ``refuse``: 500; ``hang``: answers after ``hang_s``, past the sender's timeout) and records every POST with its
headers and body, and what it answered."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    status: int  # what the receiver answered (0: it hung up without answering in time)

    @property
    def notice(self) -> dict[str, Any]:
        return json.loads(self.body)


@dataclass
class Receiver:
    mode: str = "ok"
    hang_s: float = 2.0
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    port: int = 0

    server: Any = None

    def tls(self, context: Any) -> None:
        """Serves https from now on (``context``: a server SSLContext with its certificate)."""
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def accepted(self, path: str | None = None) -> list[Received]:
        with self.lock:
            return [r for r in self.received if 200 <= r.status < 300 and (path is None or r.path == path)]

    def all(self) -> list[Received]:
        with self.lock:
            return list(self.received)


class _Handler(BaseHTTPRequestHandler):
    receiver: Receiver

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        mode = self.receiver.mode
        status = {"ok": 204, "refuse": 500}.get(mode, 0)
        if mode == "hang":
            time.sleep(self.receiver.hang_s)
        with self.receiver.lock:
            self.receiver.received.append(Received(self.path, dict(self.headers.items()), body, status))
        if status:
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


class Running:
    """``with Running() as receiver:`` a receiver serving until the block ends."""

    def __init__(self, **options: Any) -> None:
        self.receiver = Receiver(**options)

    def __enter__(self) -> Receiver:
        handler = type("Handler", (_Handler,), {"receiver": self.receiver})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.receiver.port = self.server.server_address[1]
        self.receiver.server = self.server
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self.receiver

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
