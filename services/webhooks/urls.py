"""Which webhook URLs Souk posts to: https (http only when the operator allows it), on a public address unless the
operator allows private ones (``SOUK_WEBHOOKS_ALLOW_PRIVATE``). Checked when a URL is registered, and again at each
delivery on the addresses the name resolves to then, which are the ones connected to (``GuardedBackend``): a name
that resolved to a public address at registration and to 127.0.0.1 later (DNS rebinding) is refused then too."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
import typing
from urllib.parse import urlsplit

import httpcore
import httpx

MAX_URL_LENGTH = 2048


class WebhookRefused(ValueError):
    """A URL Souk will not post to, with a stable code (``bad_webhook``, ``webhook_not_public``) and a sentence."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def check_url(url: str, allow_http: bool) -> tuple[str, int]:
    """The URL's host and port, or WebhookRefused (``bad_webhook``) for a URL Souk does not post to."""
    if len(url) > MAX_URL_LENGTH:
        raise WebhookRefused("bad_webhook", f"a webhook URL has at most {MAX_URL_LENGTH} characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise WebhookRefused("bad_webhook", "the webhook is not a URL") from None
    schemes = ("https", "http") if allow_http else ("https",)
    if parts.scheme not in schemes:
        allowed = "https:// or http://" if allow_http else "https:// (http:// only if the operator allows it)"
        raise WebhookRefused("bad_webhook", f"a webhook URL starts with {allowed}")
    if not parts.hostname:
        raise WebhookRefused("bad_webhook", "a webhook URL names a host")
    if parts.username is not None or parts.password is not None:
        raise WebhookRefused("bad_webhook", "a webhook URL carries no user or password (the signature authenticates)")
    if parts.fragment or any(c.isspace() or ord(c) < 32 for c in url):
        raise WebhookRefused("bad_webhook", "a webhook URL has no fragment and no spaces")
    return parts.hostname, port or (443 if parts.scheme == "https" else 80)


def is_public(address: str) -> bool:
    """A global unicast address: not private, loopback, link-local (169.254/16: cloud metadata), shared (CGNAT),
    reserved, multicast or unspecified; an IPv4-mapped IPv6 address is judged by its IPv4 address."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


async def resolve(host: str, port: int, allow_private: bool) -> list[str]:
    """The addresses of ``host`` Souk may connect to: every one it resolves to, or WebhookRefused
    (``webhook_not_public``) when one of them is not public and the operator does not allow private ones (a name
    resolving to a public and a private address is refused whole), or ``bad_webhook`` when it does not resolve."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise WebhookRefused("bad_webhook", f"the webhook's host {host!r} does not resolve ({exc})") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise WebhookRefused("bad_webhook", f"the webhook's host {host!r} does not resolve")
    if not allow_private:
        for address in addresses:
            if not is_public(address):
                raise WebhookRefused("webhook_not_public",
                                     f"the webhook's host {host!r} is at {address}, not a public address (the "
                                     f"operator may allow private ones: SOUK_WEBHOOKS_ALLOW_PRIVATE)")
    return addresses


async def check(url: str, allow_http: bool, allow_private: bool) -> None:
    """``url`` is one Souk posts to now (WebhookRefused otherwise)."""
    host, port = check_url(url, allow_http)
    await resolve(host, port, allow_private)


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend with the address check at each connection: the name is resolved here, checked,
    and the connection made to the address checked (never resolved again by the socket layer). TLS still checks
    the certificate against the URL's host name (httpcore starts TLS with it after this connection)."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend, allow_private: bool) -> None:
        self.inner = inner
        self.allow_private = allow_private

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: typing.Iterable[typing.Any] | None = None) -> httpcore.AsyncNetworkStream:
        try:
            addresses = await resolve(host, port, self.allow_private)
        except WebhookRefused as exc:
            raise httpcore.ConnectError(f"{exc.code}: {exc.message}") from None
        error: Exception | None = None
        for address in addresses:
            try:
                return await self.inner.connect_tcp(address, port, timeout=timeout, local_address=local_address,
                                                    socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
        assert error is not None
        raise error

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: typing.Iterable[typing.Any] | None = None
                                  ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("webhooks are posted over TCP only")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def guarded_client(allow_private: bool, timeout_s: float, verify: ssl.SSLContext | bool = True) -> httpx.AsyncClient:
    """The webhook worker's HTTP client: every connection through ``GuardedBackend``; no proxy from the
    environment (it would connect on our behalf, unchecked), no redirect followed (a 3xx is a failed attempt: a
    redirect to an internal address is exactly what the check is for). ``verify``: the certificates trusted (tests)."""
    transport = httpx.AsyncHTTPTransport(verify=verify, trust_env=False, retries=0)
    pool = transport._pool  # httpx takes no network backend: the guard is put in its connection pool
    pool._network_backend = GuardedBackend(pool._network_backend, allow_private)
    return httpx.AsyncClient(transport=transport, timeout=timeout_s, follow_redirects=False, trust_env=False,
                             headers={"User-Agent": "Souk-Webhooks/1"})
