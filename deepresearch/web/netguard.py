"""SSRF guard for the web fetcher: decide whether a URL may be fetched, resolve its host once, and
pin the TCP connection to exactly the addresses that were checked.

Why pinning: checking a hostname and then letting the HTTP client resolve it again opens a DNS
rebinding window (the second answer can be 127.0.0.1). Here the HTTP client never resolves names:
its network backend only connects to addresses registered by :func:`pinned` for the current task,
and refuses any (host, port) that was not registered — so an unchecked connection cannot happen.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import re
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

from deepresearch.web.tls import shared_ssl_context

logger = logging.getLogger(__name__)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[str]]]
"""``async (host, port) -> [ip, ...]``; the default is the event loop's getaddrinfo."""

ALLOWED_SCHEMES = frozenset({"http", "https"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_HOSTNAME_RE = re.compile(r"^[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*$")
# A label that inet_aton / the WHATWG URL parser would read as a number (decimal, octal or 0x hex).
_NUMERIC_LABEL_RE = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_IPV4_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")
# IANA's IETF protocol assignments are not globally routable, but for two anycast addresses. Python 3.11's
# tables know only parts of the block (192.0.0.8, the IPv4 dummy address of RFC 7600, passes as global).
_IETF_PROTOCOL = ipaddress.IPv4Network("192.0.0.0/24")
_GLOBAL_IN_IETF_PROTOCOL = frozenset(map(ipaddress.IPv4Address, ("192.0.0.9", "192.0.0.10")))


class FetchError(Exception):
    """A page could not be fetched. ``reason`` is a short machine code, ``str()`` a human message."""

    def __init__(self, url: str, reason: str, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.url = url
        self.reason = reason
        self.message = message
        self.status_code = status_code

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only status_code breaks default exception pickling (used across processes).
        return (_rebuild_error, (type(self), self.url, self.reason, self.message, self.status_code))


class BlockedURLError(FetchError):
    """The URL (or a redirect, or a resolved address) is not allowed to be fetched."""

    def __init__(self, url: str, message: str) -> None:
        super().__init__(url, "blocked", message)


def _rebuild_error(
    cls: type[FetchError], url: str, reason: str, message: str, status_code: int | None
) -> FetchError:
    error = cls.__new__(cls)
    FetchError.__init__(error, url, reason, message, status_code=status_code)
    return error


# --- allow list ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class AllowList:
    """``host`` or ``host:port`` entries that skip the public-address check (intranet, tests)."""

    entries: frozenset[tuple[str, int | None]] = frozenset()

    @classmethod
    def parse(cls, items: Iterable[str] | AllowList | None) -> AllowList:
        if isinstance(items, AllowList):
            return items
        entries: set[tuple[str, int | None]] = set()
        for raw in items or ():
            item = raw.strip().lower()
            if not item:
                continue
            host, port = item, None
            try:
                if item.startswith("["):  # [v6] or [v6]:port
                    host, _, rest = item[1:].partition("]")
                    port = int(rest[1:]) if rest.startswith(":") else None
                elif item.count(":") == 1:
                    host, _, port_text = item.partition(":")
                    port = int(port_text)
                literal = _parse_ip_literal(host.rstrip("."))
            except ValueError as exc:
                raise ValueError(f"invalid fetch_allow_hosts entry {raw!r}: {exc}") from exc
            entries.add((str(literal) if literal else host.rstrip("."), port))
        return cls(frozenset(entries))

    def allows(self, host: str, port: int) -> bool:
        return (host, port) in self.entries or (host, None) in self.entries


# --- syntactic checks ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CheckedURL:
    """A URL that passed the syntactic checks. ``url`` is normalised: numeric IPv4 spellings are
    rewritten to dotted quads and the trailing dot of a hostname is dropped, so ``url.raw_host``
    is exactly ``host`` (the key the pinned backend looks up)."""

    url: httpx.URL
    scheme: str
    host: str
    port: int
    ip: IPAddress | None
    allowlisted: bool


def parse_numeric_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """Read inet_aton spellings (``2130706433``, ``0x7f.1``, ``127.1``, ``0177.0.0.1``) as IPv4.

    Returns None when the host is not numeric. Raises ValueError for a host that *looks* numeric
    but is not a valid address (``1.2.3.999``): browsers refuse those, and so do we.
    """
    labels = host.lower().split(".")
    if len(labels) > 1 and labels[-1] == "":
        labels.pop()
    # Like the WHATWG parser: a host whose last label is a number is an IPv4 address or invalid.
    if not labels or not _NUMERIC_LABEL_RE.match(labels[-1]):
        return None
    if len(labels) > 4 or not all(_NUMERIC_LABEL_RE.match(label) for label in labels):
        raise ValueError(f"{host!r} is not a valid IPv4 address")
    values = []
    for label in labels:
        if label.startswith("0x"):
            values.append(int(label[2:] or "0", 16))
        elif len(label) > 1 and label.startswith("0"):
            values.append(int(label, 8))  # ValueError on 8/9 digits, as wanted
        else:
            values.append(int(label))
    if any(value > 255 for value in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        raise ValueError(f"{host!r} is not a valid IPv4 address")
    number = values[-1]
    for index, value in enumerate(values[:-1]):
        number += value << (8 * (3 - index))
    return ipaddress.IPv4Address(number)


def _parse_ip_literal(host: str) -> IPAddress | None:
    if ":" in host:
        return ipaddress.IPv6Address(host)  # ValueError if malformed
    return parse_numeric_ipv4(host)


def check_url_allowed(url: str | httpx.URL, allow_hosts: Iterable[str] | AllowList | None) -> CheckedURL:
    """Syntactic checks, no DNS: scheme, userinfo, host shape, port, and IP literals.

    Hostnames still need :func:`resolve_and_check` before connecting.
    """
    allow = AllowList.parse(allow_hosts)
    text = str(url)
    try:
        parsed = url if isinstance(url, httpx.URL) else httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise BlockedURLError(text, f"Blocked {text!r}: not a valid URL ({exc})") from exc
    scheme = parsed.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise BlockedURLError(text, f"Blocked {text}: scheme {scheme or '(none)'!r} is not http/https")
    if parsed.userinfo:
        raise BlockedURLError(text, f"Blocked {text}: credentials in the URL (user@host) are not allowed")
    raw_host = parsed.raw_host.decode("ascii", "replace").lower()
    if not raw_host:
        raise BlockedURLError(text, f"Blocked {text}: the URL has no host")
    port = parsed.port or _DEFAULT_PORTS[scheme]
    if not 0 < port < 65536:
        raise BlockedURLError(text, f"Blocked {text}: port {port} is out of range")

    if ":" in raw_host and "%" in raw_host:
        raise BlockedURLError(text, f"Blocked {text}: IPv6 zone identifiers are not allowed")
    try:
        ip = _parse_ip_literal(raw_host)
    except ValueError as exc:
        raise BlockedURLError(text, f"Blocked {text}: {exc}") from exc
    host = str(ip) if ip is not None else raw_host.rstrip(".")
    if ip is None and not _HOSTNAME_RE.match(host):
        raise BlockedURLError(text, f"Blocked {text}: {host!r} is not a valid hostname")
    allowlisted = allow.allows(host, port)
    if ip is not None and not allowlisted:
        problem = address_problem(ip)
        if problem:
            raise BlockedURLError(text, f"Blocked {text}: {ip} is {problem}")
    if host != raw_host:
        parsed = parsed.copy_with(host=host)
    return CheckedURL(parsed, scheme, host, port, ip, allowlisted)


# --- address checks ------------------------------------------------------------------------------
def _embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[str, list[ipaddress.IPv4Address]] | None:
    """IPv4 addresses carried inside transition forms; reaching those means reaching the IPv4 host."""
    if ip.ipv4_mapped is not None:
        return "IPv4-mapped", [ip.ipv4_mapped]
    if ip in _IPV4_TRANSLATED or ip in _NAT64:
        return "NAT64/translated", [ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)]
    if ip.sixtofour is not None:
        return "6to4", [ip.sixtofour]
    if ip.teredo is not None:
        return "Teredo", list(ip.teredo)
    return None


def address_problem(ip: IPAddress) -> str | None:
    """Why this address must not be fetched (``"a loopback address"``...), or None if it is public."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            # Judged by the embedded IPv4 only: the wrapper prefixes are reserved/non-global ranges
            # themselves, and Python versions disagree about them.
            kind, inner = embedded
            for address in inner:
                problem = address_problem(address)
                if problem:
                    return f"a {kind} form of {address}, {problem}"
            return None
        if ip.is_site_local:
            return "a site-local address"
    for attribute, label in (
        ("is_unspecified", "an unspecified address"),
        ("is_loopback", "a loopback address"),
        ("is_link_local", "a link-local address"),
        ("is_multicast", "a multicast address"),
        ("is_private", "a private address"),
        ("is_reserved", "a reserved address"),
    ):
        if getattr(ip, attribute):
            return label
    if ip in _IETF_PROTOCOL and ip not in _GLOBAL_IN_IETF_PROTOCOL:
        return "an IETF protocol assignment (not globally routable)"
    if not ip.is_global:
        return "not a globally routable address"
    return None


async def system_resolver(host: str, port: int) -> list[str]:
    """Resolve with the running loop's getaddrinfo (a thread pool, so the loop is not blocked)."""
    infos = await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )
    return [str(info[4][0]) for info in infos]


async def resolve_and_check(
    target: CheckedURL, *, resolver: Resolver | None = None, dns_timeout: float = 10.0
) -> tuple[str, ...]:
    """The addresses to connect to for ``target``; every one of them must be public unless the
    host is allowlisted (one bad answer blocks all: mixed answers are a rebinding trick)."""
    url = str(target.url)
    if target.ip is not None:
        return (str(target.ip),)
    try:
        async with asyncio.timeout(dns_timeout):
            answers = await (resolver or system_resolver)(target.host, target.port)
    except TimeoutError as exc:
        raise FetchError(url, "dns", f"DNS lookup for {target.host} timed out after {dns_timeout}s") from exc
    except (OSError, UnicodeError) as exc:  # socket.gaierror is an OSError
        raise FetchError(url, "dns", f"DNS lookup for {target.host} failed: {exc}") from exc
    addresses: list[str] = []
    for answer in answers:
        try:
            ip = ipaddress.ip_address(answer.split("%", 1)[0])
        except ValueError as exc:
            raise FetchError(url, "dns", f"DNS lookup for {target.host} gave {answer!r}") from exc
        if not target.allowlisted:
            problem = address_problem(ip)
            if problem:
                raise BlockedURLError(url, f"Blocked {url}: {target.host} resolves to {ip}, {problem}")
        if str(ip) not in addresses:
            addresses.append(str(ip))
    if not addresses:
        raise FetchError(url, "dns", f"DNS lookup for {target.host} returned no address")
    logger.debug("resolved %s to %s", target.host, addresses)
    return tuple(addresses)


# --- pinned connections --------------------------------------------------------------------------
_PINS: ContextVar[Mapping[tuple[str, int], tuple[str, ...]] | None] = ContextVar(
    "deepresearch_fetch_pins", default=None
)


@contextlib.contextmanager
def pinned(host: str, port: int, addresses: Sequence[str]) -> Iterator[None]:
    """Within this block (this task), connections to ``host:port`` go to ``addresses`` only."""
    pins = dict(_PINS.get() or {})
    pins[(host.lower(), port)] = tuple(addresses)
    token = _PINS.set(pins)
    try:
        yield
    finally:
        _PINS.reset(token)


class PinnedNetworkBackend(httpcore.AsyncNetworkBackend):
    """httpcore backend that connects only to pinned addresses and never resolves names."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self._inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's backend signature
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = (_PINS.get() or {}).get((host.lower(), port))
        if not addresses:
            raise BlockedURLError(f"//{host}:{port}", f"Blocked connection to unchecked host {host}:{port}")
        last_error: Exception | None = None
        for address in addresses:  # several A/AAAA answers: try each, as a resolver-backed client would
            try:
                logger.debug("connecting to %s:%s as %s", address, port, host)
                return await self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last_error = exc
        assert last_error is not None
        raise last_error

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's backend signature
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise BlockedURLError(path, "Blocked: unix sockets are never used by the fetcher")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class PinnedTransport(httpx.AsyncHTTPTransport):
    """httpx transport whose connection pool uses :class:`PinnedNetworkBackend`."""

    def __init__(self, *, limits: httpx.Limits | None = None, verify: ssl.SSLContext | bool = True) -> None:
        limits = limits or httpx.Limits(max_connections=100, max_keepalive_connections=20)
        if verify is True:
            verify = shared_ssl_context()
        ssl_context = httpx.create_ssl_context(verify=verify, trust_env=False)
        super().__init__(verify=ssl_context, trust_env=False, limits=limits)
        # httpx 0.28 has no network_backend parameter; rebuild its (unused, connection-less) pool with
        # the same settings plus our backend. Covered by tests, so an httpx change is caught.
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=True,
            http2=False,
            network_backend=PinnedNetworkBackend(),
        )
