"""A small HTTP/1.1 client for the chaos driver: keep-alive connections over asyncio streams, JSON bodies.

httpx spent about 2 ms of CPU a request on the 2-core machine, which made the driver the busiest process of a
run; this costs a tenth of it. It speaks just what the gateway answers (``content-length`` or chunked bodies) and
raises ``TransportError`` (a subclass per cause) when no complete answer came: the caller decides to resend.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlencode, urlsplit

import msgspec

_encode = msgspec.json.encode
_decode = msgspec.json.decode


class TransportError(Exception):
    """No complete HTTP answer."""


class ConnectError(TransportError):
    pass


class ReadError(TransportError):
    """The connection broke before the whole answer came (the server died, or closed an idle connection)."""


class ReadTimeout(TransportError):
    pass


class Response:
    __slots__ = ("content", "headers", "status_code")

    def __init__(self, status_code: int, headers: dict[str, str], content: bytes) -> None:
        self.status_code, self.headers, self.content = status_code, headers, content

    def json(self) -> Any:
        return _decode(self.content)

    @property
    def text(self) -> str:
        return self.content.decode(errors="replace")


class Client:
    def __init__(self, base_url: str, timeout: float = 20.0, connect_timeout: float = 3.0,
                 max_idle: int = 256) -> None:
        url = urlsplit(base_url)
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 80
        self.host_header = f"{self.host}:{self.port}".encode()
        self.timeout, self.connect_timeout, self.max_idle = timeout, connect_timeout, max_idle
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for _, writer in idle:
            writer.close()

    async def get(self, path: str, **kw: Any) -> Response:
        return await self.request("GET", path, **kw)

    async def post(self, path: str, **kw: Any) -> Response:
        return await self.request("POST", path, **kw)

    async def request(self, method: str, path: str, params: dict[str, Any] | None = None, json: Any = None,
                      headers: dict[str, str] | None = None, timeout: float | None = None) -> Response:
        if params:
            path = f"{path}?{urlencode(params)}"
        body = b"" if json is None else _encode(json)
        head = [f"{method} {path} HTTP/1.1".encode(), b"host: " + self.host_header]
        if json is not None:
            head += [b"content-type: application/json", b"content-length: " + str(len(body)).encode()]
        head += [f"{k}: {v}".encode() for k, v in (headers or {}).items()]
        request = b"\r\n".join(head) + b"\r\n\r\n" + body
        reader, writer = await self._connection()
        try:
            writer.write(request)
            response, keep = await asyncio.wait_for(self._read(reader), timeout or self.timeout)
        except TimeoutError:
            writer.close()
            raise ReadTimeout(f"no answer to {method} {path} within {timeout or self.timeout} s") from None
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
            writer.close()
            raise ReadError(f"{method} {path}: {type(exc).__name__}: {exc}") from None
        except BaseException:
            writer.close()
            raise
        if keep and len(self._idle) < self.max_idle:
            self._idle.append((reader, writer))
        else:
            writer.close()
        return response

    async def _connection(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        while self._idle:
            reader, writer = self._idle.pop()
            if not writer.is_closing() and not reader.at_eof():
                return reader, writer
            writer.close()
        try:
            return await asyncio.wait_for(asyncio.open_connection(self.host, self.port), self.connect_timeout)
        except (OSError, TimeoutError) as exc:
            raise ConnectError(f"cannot connect to {self.host}:{self.port}: {exc or type(exc).__name__}") from None

    @staticmethod
    async def _read(reader: asyncio.StreamReader) -> tuple[Response, bool]:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head[:-4].decode("latin-1").split("\r\n")
        version, status, *_ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await reader.readuntil(b"\r\n")  # no trailers expected
                    break
                parts.append(await reader.readexactly(size))
                await reader.readexactly(2)
            content = b"".join(parts)
        elif "content-length" in headers:
            content = await reader.readexactly(int(headers["content-length"]))
        else:
            content = await reader.read()
            return Response(int(status), headers, content), False
        keep = headers.get("connection", "").lower() != "close" and version == "HTTP/1.1"
        return Response(int(status), headers, content), keep
