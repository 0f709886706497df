"""uvicorn's HTTP/1.1 protocol on httptools (llhttp, in C) with the gateway's JSON refusals.

uvicorn's default parser, h11, is pure Python: it took 27% of the gateway's CPU per command (issue #9 item 12).
``JsonHttpToolsProtocol`` (replacing the earlier JSON refusals on h11) answers what its parser refuses with
``{"code", "message"}`` with 431 ``headers_too_large`` when the request line and headers outgrow
``MAX_HEAD_BYTES`` (llhttp sets no such bound: the bytes of a head still incomplete are counted here), else 400
``bad_request`` (a request in another version than HTTP/1.0 and HTTP/1.1 too, which llhttp reads like the rest);
then it half-closes and drops what the client still sends for ``LINGER_S`` at most (closed at
once with unread data, the connection would be reset and the client would lose the answer).
"""

from __future__ import annotations

from http import HTTPStatus

import msgspec
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from contracts.api import MAX_HEAD_BYTES, ApiErrorBody


class JsonHttpToolsProtocol(HttpToolsProtocol):
    LINGER_S = 2.0
    _refused = False
    _head_done = False  # the current request's head is parsed: what follows is its body
    _head_bytes = 0  # bytes received while the current request's head was incomplete
    _head_size = 0  # the current request's URL and headers as parsed
    _too_large = False
    _version: str | None = None  # an HTTP version refused (not 1.0 nor 1.1)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if not self._head_done:
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

    def _refuse(self, status: int, code: str, message: str) -> None:
        body = msgspec.json.encode(ApiErrorBody(code, message))
        head = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n".encode()]
        for name, value in self.server_state.default_headers:
            head.append(name + b": " + value + b"\r\n")
        head.append(b"content-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n" % len(body))
        self.transport.write(b"".join(head) + body)
        self._refused = True
        if self.transport.can_write_eof():
            self.transport.write_eof()
            self.loop.call_later(self.LINGER_S, self.transport.close)
        else:
            self.transport.close()
