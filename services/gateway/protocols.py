"""uvicorn's HTTP/1.1 protocol on httptools (llhttp, in C) with the gateway's JSON refusals.

uvicorn's default parser, h11, is pure Python: it took 27% of the gateway's CPU per command (issue #9 item 12).
``JsonHttpToolsProtocol`` (replacing the earlier JSON refusals on h11) answers what its parser refuses with
``{"code", "message"}`` with 431 ``headers_too_large`` when the request line and headers outgrow
``MAX_HEAD_BYTES`` (llhttp sets no such bound: the bytes of a head still incomplete are counted here), else 400
``bad_request`` (a request in another version than HTTP/1.0 and HTTP/1.1 too, which llhttp reads like the rest);
then it half-closes and drops what the client still sends for ``LINGER_S`` at most (closed at
once with unread data, the connection would be reset and the client would lose the answer).

The door of a gateway process (``Door``, issue #18 item 7), given by its uvicorn config (``uvicorn_config``):

- a connection that has not sent a whole request head ``head_timeout_s`` after it opened, or after the first byte
  of its next request, gets 408 ``request_timeout`` and is closed (uvicorn closes a connection idle between
  requests after its keep-alive timeout, 5 s, but not one that trickles a header line every few seconds);
- one client address holds at most ``connections_per_client`` connections open to the process (HTTP and
  WebSocket alike); one more gets 429 ``too_many_connections`` and is closed. Connections from a trusted proxy
  (``trusted_proxies``) are not counted: they carry many clients (cap them at the proxy);
- ``X-Forwarded-For`` is believed only from ``trusted_proxies`` (uvicorn's proxy headers; its own default,
  127.0.0.1, would let any local client pick the address the limits count).
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections import Counter
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import msgspec
import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.wsproto_impl import WSProtocol

from contracts.api import MAX_HEAD_BYTES, ApiErrorBody


@dataclass
class Door:
    """What one gateway process lets in (see the module); the open connections per client address are counted
    here, so a process has one ``Door``: its uvicorn config's."""

    head_timeout_s: float = 0.0  # 0: no deadline for a request head
    connections_per_client: int = 0  # 0: any number
    trusted_proxies: tuple[str, ...] = ()
    open: Counter = field(default_factory=Counter)  # client address -> connections open
    _networks: tuple = field(default=(), init=False, repr=False)

    def __post_init__(self) -> None:
        self._networks = tuple(ipaddress.ip_network(p, strict=False) for p in self.trusted_proxies)

    def trusted(self, host: str) -> bool:
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self._networks)

    def enter(self, host: str) -> bool:
        """Counts a connection from ``host``; False (not counted) when that address holds its share already."""
        if (self.connections_per_client > 0 and self.open[host] >= self.connections_per_client
                and not self.trusted(host)):
            return False
        self.open[host] += 1
        return True

    def leave(self, host: str) -> None:
        self.open[host] -= 1
        if self.open[host] <= 0:
            del self.open[host]


class GatewayConfig(uvicorn.Config):
    """uvicorn's config with the process's ``Door`` (pickled with it to the processes of ``--processes N``,
    where each gets its own count)."""

    def __init__(self, app: Any, door: Door, **options: Any) -> None:
        self.door = door
        super().__init__(app, **options)


def uvicorn_config(app: Any, settings: Any, **options: Any) -> GatewayConfig:
    """The gateway's uvicorn config (``settings``: a ``Settings``): the protocols below, and proxy headers believed
    from ``settings.trusted_proxies`` only (none: never)."""
    door = Door(settings.head_timeout_s, settings.connections_per_client, settings.trusted_proxies)
    return GatewayConfig(app, door, http=JsonHttpToolsProtocol, ws=CountedWSProtocol,
                         proxy_headers=bool(settings.trusted_proxies),
                         forwarded_allow_ips=list(settings.trusted_proxies), **options)


class JsonHttpToolsProtocol(HttpToolsProtocol):
    LINGER_S = 2.0
    _door: Door | None = None
    _counted: str | None = None  # the client address this connection is counted for in the door
    _head_timer: asyncio.TimerHandle | None = None
    _refused = False
    _head_done = False  # the current request's head is parsed: what follows is its body
    _head_bytes = 0  # bytes received while the current request's head was incomplete
    _head_size = 0  # the current request's URL and headers as parsed
    _too_large = False
    _version: str | None = None  # an HTTP version refused (not 1.0 nor 1.1)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        door = getattr(self.config, "door", None)
        if door is None:
            return
        self._door = door
        if self.client:
            host = self.client[0]
            if not door.enter(host):
                self._refuse(429, "too_many_connections", f"this address has {door.connections_per_client} "
                             f"connections open; close one first", ("Retry-After", "1"))
                return
            self._counted = host
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        self._leave()
        super().connection_lost(exc)

    def _leave(self) -> None:
        if self._counted is not None and self._door is not None:
            self._door.leave(self._counted)
            self._counted = None

    def handle_websocket_upgrade(self) -> None:
        self._disarm_head_timer()
        super().handle_websocket_upgrade()
        protocol = self.transport.get_protocol()
        if isinstance(protocol, CountedWSProtocol) and self._counted is not None:  # it leaves the door when closed
            protocol.counted = (self._door, self._counted)
            self._counted = None
        else:  # a WebSocket of another kind: this protocol hears of the connection no more
            self._leave()

    def _arm_head_timer(self) -> None:
        if self._door is not None and self._door.head_timeout_s > 0 and self._head_timer is None:
            self._head_timer = self.loop.call_later(self._door.head_timeout_s, self._head_too_slow)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if self._refused or self._head_done or self.transport.is_closing():
            return
        if self.cycle is not None and not self.cycle.response_complete:  # a pipelined head behind an answer
            self._arm_head_timer()
            return
        self._refuse(408, "request_timeout",
                     f"the request head was not complete within {self._door.head_timeout_s:g} s")

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if not self._head_done:
            self._arm_head_timer()  # a new request's first bytes: its head has head_timeout_s to arrive
            self._head_bytes += len(data)
        super().data_received(data)
        if not self._refused and not self._head_done and self._head_bytes > MAX_HEAD_BYTES:
            self._refuse(431, "headers_too_large", f"the request line and headers are over {MAX_HEAD_BYTES} bytes")

    def on_message_begin(self) -> None:
        self._head_size = 0
        super().on_message_begin()

    def on_url(self, url: bytes) -> None:
        self._head_size += len(url)
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._head_size += len(name) + len(value) + 4
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        if self._head_size > MAX_HEAD_BYTES:  # whole, but too large: the parser stops (send_400_response says 431)
            self._too_large = True
            raise ValueError("the request line and headers are too large")
        version = self.parser.get_http_version()
        if version not in ("1.1", "1.0"):  # llhttp reads "HTTP/0.9" and any other digit as a request like the rest
            self._version = version
            raise ValueError(f"HTTP/{version} is not served")
        self._head_done, self._head_bytes = True, 0
        self._disarm_head_timer()
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._head_done = False
        super().on_message_complete()

    def send_400_response(self, msg: str) -> None:
        if self._too_large:
            self._refuse(431, "headers_too_large", f"the request line and headers are over {MAX_HEAD_BYTES} bytes")
        elif self._version is not None:
            self._refuse(400, "bad_request", f"HTTP/{self._version} is not served: HTTP/1.0 and HTTP/1.1 are")
        else:
            self._refuse(400, "bad_request", "the request is not valid HTTP/1.1")

    def _refuse(self, status: int, code: str, message: str, *extra: tuple[str, str]) -> None:
        self._disarm_head_timer()
        body = msgspec.json.encode(ApiErrorBody(code, message))
        head = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n".encode()]
        for name, value in self.server_state.default_headers:
            head.append(name + b": " + value + b"\r\n")
        for name, value in extra:
            head.append(f"{name}: {value}\r\n".encode())
        head.append(b"content-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n" % len(body))
        self.transport.write(b"".join(head) + body)
        self._refused = True
        if self.transport.can_write_eof():
            self.transport.write_eof()
            self.loop.call_later(self.LINGER_S, self.transport.close)
        else:
            self.transport.close()


class CountedWSProtocol(WSProtocol):
    """uvicorn's wsproto WebSocket, which a connection becomes on its upgrade: leaves the door when it closes."""

    counted: tuple[Door, str] | None = None

    def connection_lost(self, exc: Exception | None) -> None:
        if self.counted is not None:
            door, host = self.counted
            self.counted = None
            door.leave(host)
        super().connection_lost(exc)
