"""The gateway's HTTP protocol on httptools (services/gateway/protocols.py): what its parser refuses is answered in
JSON (431 past MAX_HEAD_BYTES of request line and headers, else 400), and what it accepts is served, keep-alive
and large bodies included."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn
from litestar import Litestar, Request, post

from contracts.api import MAX_BODY_BYTES, MAX_HEAD_BYTES
from services.embedded.redis import free_port
from services.gateway.protocols import CountedWSProtocol, JsonHttpToolsProtocol, uvicorn_config
from services.runtime.config import Settings


@post("/echo", status_code=200, request_max_body_size=MAX_BODY_BYTES)
async def echo(request: Request) -> dict:
    return {"bytes": len(await request.body()), "headers": sum(len(k) + len(v) for k, v in request.scope["headers"])}


@contextlib.contextmanager
def serving() -> Iterator[int]:
    port = free_port()
    server = uvicorn.Server(uvicorn_config(Litestar([echo]), Settings(), host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive()
        time.sleep(0.01)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(10)


def exchange(port: int, data: bytes, answers: int = 1) -> list[tuple[int, dict[str, str], bytes]]:
    """Sends ``data`` in one piece on a new connection; reads ``answers`` answers (or until it is closed)."""
    out, buffer = [], b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(data)
        while len(out) < answers:
            while b"\r\n\r\n" not in buffer:
                chunk = sock.recv(65536)
                if not chunk:
                    return out
                buffer += chunk
            top, _, buffer = buffer.partition(b"\r\n\r\n")
            lines = top.decode().split("\r\n")
            headers = {k.lower(): v for k, v in (line.split(": ", 1) for line in lines[1:])}
            length = int(headers.get("content-length", 0))
            while len(buffer) < length:
                buffer += sock.recv(65536)
            out.append((int(lines[0].split()[1]), headers, buffer[:length]))
            buffer = buffer[length:]
    return out


def test_the_gateway_runs_on_httptools_with_json_refusals():
    config = uvicorn_config(Litestar([echo]), Settings())
    assert config.http is JsonHttpToolsProtocol and config.ws is CountedWSProtocol
    assert not config.proxy_headers  # X-Forwarded-For believed from nobody unless SOUK_TRUSTED_PROXIES names it


@pytest.mark.parametrize("size", [MAX_HEAD_BYTES + 1, 200 * 1024, 2 * 1024 * 1024])
def test_a_head_over_the_limit_gets_a_json_431_however_its_bytes_arrive(size):
    head = f"GET /echo HTTP/1.1\r\nHost: souk\r\nX-Big: {'a' * size}\r\n\r\n".encode()
    with serving() as port:
        [(status, headers, body)] = exchange(port, head)
        assert status == 431 and headers["content-type"] == "application/json"
        assert json.loads(body)["code"] == "headers_too_large"
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:  # sent in small pieces
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                for i in range(0, len(head), 4096):
                    sock.sendall(head[i:i + 4096])
            assert sock.recv(65536).startswith(b"HTTP/1.1 431 ")


def test_what_is_not_http_gets_a_json_400():
    with serving() as port:
        for data in (b"GET /echo HTTP/1.1\r\nHost: souk\r\nBad Header\r\n\r\n",
                     b"GET /echo HTTP/1.1\r\nHost: souk\r\nX-Nul: a\x00b\r\n\r\n",
                     b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n"):
            [(status, headers, body)] = exchange(port, data)
            assert status == 400 and headers["content-type"] == "application/json", data
            assert json.loads(body)["code"] == "bad_request"


def test_a_body_as_large_as_allowed_in_one_piece_with_its_head_is_served_and_keep_alive_goes_on():
    body = b"x" * MAX_BODY_BYTES
    request = (b"POST /echo HTTP/1.1\r\nHost: souk\r\nContent-Type: application/octet-stream\r\n"
               b"Content-Length: %d\r\nX-Pad: %s\r\n\r\n" % (len(body), b"p" * 60_000)) + body
    with serving() as port:
        answers = exchange(port, request * 3, answers=3)  # three in a row on one connection, pipelined
        assert [a[0] for a in answers] == [200, 200, 200]
        assert all(json.loads(a[2])["bytes"] == MAX_BODY_BYTES for a in answers)


def test_the_door_counts_connections_per_address_and_not_a_trusted_proxys():
    from services.gateway.protocols import Door

    door = Door(connections_per_client=2, trusted_proxies=("10.0.0.0/8",))
    assert [door.enter("192.0.2.1") for _ in range(3)] == [True, True, False]
    assert door.enter("192.0.2.2")  # another address has its own share
    door.leave("192.0.2.1")
    assert door.enter("192.0.2.1") and not door.enter("192.0.2.1")
    assert all(door.enter("10.1.2.3") for _ in range(10))
    for _ in range(10):
        door.leave("10.1.2.3")
    assert "10.1.2.3" not in door.open


def test_the_config_goes_to_the_gateways_processes_with_its_door():
    import pickle

    settings = Settings(trusted_proxies=("172.16.0.0/12",), connections_per_client=7, head_timeout_s=3.0)
    config = pickle.loads(pickle.dumps(uvicorn_config("services.gateway.app:from_env", settings, factory=True)))
    assert config.door.connections_per_client == 7 and config.door.head_timeout_s == 3.0
    assert config.door.trusted("172.18.0.1") and not config.door.trusted("192.0.2.1")
    assert config.proxy_headers and config.forwarded_allow_ips == ["172.16.0.0/12"]
