"""WebFetcher's SSRF guard (deepresearch/web/netguard.py), against real HTTP servers on 127.0.0.1
(peers/static_site.py): blocked targets, the allowlist, connection pinning and TLS through a pin.

Allowlist semantics under test: ``fetch_allow_hosts`` entries match the URL's host as written
(after canonicalising IP literals, so ``127.1`` == ``127.0.0.1``) and its port. A different spelling
that merely *resolves* to an allowlisted address (``localhost``, ``[::ffff:127.0.0.1]``) is blocked,
and so is another port on the same host.
"""

from __future__ import annotations

import asyncio
import ipaddress
import shutil
import ssl
import subprocess

import httpx
import pytest

from config import Settings
from deepresearch.web.fetch import BlockedURLError, WebFetcher, check_url_allowed
from deepresearch.web.netguard import (
    AllowList,
    PinnedTransport,
    address_problem,
    parse_numeric_ipv4,
    pinned,
    resolve_and_check,
    system_resolver,
)
from peers import free_port
from peers.static_site import PLAIN_TEXT, StaticSite
from tests._fetch_helpers import _fetch_error, _settings


class RecordingResolver:
    """The real system resolver, plus a log of what was asked (to prove what did or did not hit DNS)."""

    def __init__(self, answers: dict[str, list[str]] | None = None) -> None:
        self.answers = answers or {}
        self.calls: list[tuple[str, int]] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append((host, port))
        if host in self.answers:
            return list(self.answers[host])
        return await system_resolver(host, port)


# --- SSRF guard without any allowlist ----------------------------------------------------------------
SSRF_URLS = [
    "http://127.0.0.1/",
    "http://10.0.0.1/",
    "http://169.254.169.254/latest/meta-data",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://2130706433/",
    "http://0x7f.1/",
    "http://127.1/",
    "http://0177.0.0.1/",
    "http://127.0.0.1./",
    "http://[2002:7f00:1::]/",  # 6to4 of 127.0.0.1
    "http://[64:ff9b::a00:1]/",  # NAT64 of 10.0.0.1
    "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",  # Teredo, client 127.0.0.1
    "http://[fe80::1]/",
    "http://0.0.0.0/",
    "http://100.64.1.1/",
    "http://224.0.0.1/",
    "http://192.0.0.8/",  # IETF protocol assignment that Python 3.11 calls global
    "http://1.2.3.999/",  # numeric but invalid: refused rather than guessed
    "http://example.0x10/",  # last label numeric: an IPv4 spelling or nothing
    "file:///etc/passwd",
    "ftp://x/",
    "gopher://example.com/",
    "data:text/html,hello",
    "http://user:pw@example.com/",
    "http://user@example.com/",
    "http://exa%20mple.com/",
    "http:///nohost",
]


@pytest.mark.parametrize("url", SSRF_URLS)
async def test_ssrf_targets_are_blocked_before_dns(url: str) -> None:
    resolver = RecordingResolver()
    async with WebFetcher(Settings(), resolver=resolver) as fetcher:
        error = await _fetch_error(fetcher, url)
    assert isinstance(error, BlockedURLError)
    assert error.reason == "blocked"
    assert error.url == url
    assert str(error).startswith("Blocked")
    assert resolver.calls == []  # literal / syntactic: decided without any DNS lookup
    with pytest.raises(BlockedURLError):
        check_url_allowed(url, [])


@pytest.mark.parametrize(
    ("host", "answers"),
    [
        ("localhost", None),  # the real system resolver: /etc/hosts says 127.0.0.1
        ("rebind.test", ["127.0.0.1"]),
        ("mixed.test", ["93.184.215.14", "10.1.2.3"]),  # one private answer taints the host
        ("metadata.test", ["169.254.169.254"]),
        ("mapped.test", ["::ffff:192.168.0.1"]),
    ],
)
async def test_hostnames_resolving_to_internal_addresses_are_blocked(
    site: StaticSite, base: str, host: str, answers: list[str] | None
) -> None:
    port = base.rsplit(":", 1)[1]
    resolver = RecordingResolver({host: answers} if answers else None)
    async with WebFetcher(_settings(base), resolver=resolver) as fetcher:
        error = await _fetch_error(fetcher, f"http://{host}:{port}/articles/sqlite-wal")
    assert isinstance(error, BlockedURLError)
    assert f"{host} resolves to" in str(error)
    assert resolver.calls == [(host, int(port))]
    assert site.total_hits == 0


@pytest.mark.parametrize(
    "spelling", ["localhost:{port}", "[::ffff:127.0.0.1]:{port}", "127.0.0.1:{other}", "[::1]:{port}"]
)
async def test_allowlist_is_host_and_port_specific(
    site: StaticSite, base: str, other_served: tuple[StaticSite, str], spelling: str
) -> None:
    other_site, other_base = other_served
    other_site.reset()
    url = "http://" + spelling.format(port=base.rsplit(":", 1)[1], other=other_base.rsplit(":", 1)[1]) + "/"
    async with WebFetcher(_settings(base)) as fetcher:
        error = await _fetch_error(fetcher, url)
    assert error.reason == "blocked"
    assert site.total_hits == 0
    assert other_site.total_hits == 0


@pytest.mark.parametrize("spelling", ["127.1", "2130706433", "0x7f.0.0.1"])
async def test_numeric_spellings_are_normalised(site: StaticSite, base: str, spelling: str) -> None:
    port = base.rsplit(":", 1)[1]
    async with WebFetcher(_settings(base)) as fetcher:
        page = await fetcher.fetch(f"http://{spelling}:{port}/notes.txt")
    assert page.url == f"http://127.0.0.1:{port}/notes.txt"
    assert page.requested_url == f"http://{spelling}:{port}/notes.txt"
    assert site.hosts[f"127.0.0.1:{port}"] == 1


# --- connection pinning ----------------------------------------------------------------------------
async def test_connection_goes_to_the_checked_address_without_a_second_lookup(
    site: StaticSite, base: str
) -> None:
    # ".test" never resolves in real DNS: the fetch can only succeed if the connection is made to the
    # address our resolver returned, with no lookup of its own by the HTTP stack.
    port = int(base.rsplit(":", 1)[1])
    resolver = RecordingResolver({"pinned.test": ["127.0.0.1"]})
    settings = Settings(fetch_allow_hosts=[f"pinned.test:{port}"])
    async with WebFetcher(settings, resolver=resolver) as fetcher:
        page = await fetcher.fetch(f"http://pinned.test:{port}/articles/sqlite-wal")
    assert page.url == f"http://pinned.test:{port}/articles/sqlite-wal"
    assert resolver.calls == [("pinned.test", port)]
    assert site.hosts == {f"pinned.test:{port}": 1}  # original Host header kept


async def test_allowlisted_hostname_uses_the_system_resolver(site: StaticSite, base: str) -> None:
    port = base.rsplit(":", 1)[1]
    async with WebFetcher(Settings(fetch_allow_hosts=[f"localhost:{port}"])) as fetcher:
        page = await fetcher.fetch(f"http://localhost:{port}/notes.txt")
    assert page.text.startswith("Field notes")
    assert site.hosts[f"localhost:{port}"] == 1


async def test_pinned_transport_refuses_unchecked_hosts(site: StaticSite, base: str) -> None:
    async with httpx.AsyncClient(transport=PinnedTransport()) as client:
        with pytest.raises(BlockedURLError, match="unchecked host"):
            await client.get(f"{base}/notes.txt")
    assert site.total_hits == 0


async def test_pinned_transport_connects_to_the_pinned_address(site: StaticSite, base: str) -> None:
    # The URL names 10.0.0.1; the pin sends the TCP connection to our loopback server instead,
    # which shows the backend dials the checked address, never the name in the URL. 127.0.0.2 has
    # no listener (the server is bound to 127.0.0.1): the next pinned address is tried.
    port = int(base.rsplit(":", 1)[1])
    async with httpx.AsyncClient(transport=PinnedTransport()) as client:
        with pinned("10.0.0.1", port, ["127.0.0.2", "127.0.0.1"]):
            response = await client.get(f"http://10.0.0.1:{port}/notes.txt")
        assert response.text == PLAIN_TEXT
        with pytest.raises(BlockedURLError):  # the pin ends with the block
            await client.get(f"http://10.0.0.2:{port}/notes.txt")
    assert site.hosts == {f"10.0.0.1:{port}": 1}


async def test_resolve_and_check_returns_every_checked_address() -> None:
    target = check_url_allowed("http://multi.test/", [])
    answers = {"multi.test": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "93.184.215.14"]}
    addresses = await resolve_and_check(target, resolver=RecordingResolver(answers))
    assert addresses == ("93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c")


# --- pure guard functions ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("2001:4860:4860::8888", True),
        ("2002:808:808::", True),  # 6to4 of a public address
        ("64:ff9b::808:808", True),  # NAT64 of a public address
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("255.255.255.255", False),
        ("224.0.0.251", False),
        ("198.18.0.1", False),
        ("::", False),
        ("::1", False),
        ("::ffff:10.0.0.1", False),
        ("::ffff:0:7f00:1", False),  # IPv4-translated loopback
        ("::7f00:1", False),  # deprecated IPv4-compatible
        ("2002:a9fe:a9fe::", False),  # 6to4 of the metadata address
        ("fc00::1", False),
        ("fec0::1", False),  # site-local: is_global is True on some Pythons
        ("ff02::1", False),
        ("2001:db8::1", False),
    ],
)
def test_address_classification(address: str, public: bool) -> None:
    assert (address_problem(ipaddress.ip_address(address)) is None) is public


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("2130706433", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("0177.0.0.01", "127.0.0.1"),
        ("10.1", "10.0.0.1"),
        ("192.168.257", "192.168.1.1"),
        ("0xA9FEA9FE", "169.254.169.254"),
        ("example.com", None),
        ("1.example", None),
    ],
)
def test_numeric_ipv4_spellings(host: str, expected: str | None) -> None:
    result = parse_numeric_ipv4(host)
    assert (str(result) if result else None) == expected


@pytest.mark.parametrize("host", ["1.2.3.256", "08.0.0.1", "1.2.3.4.5", "4294967296", "foo.1"])
def test_invalid_numeric_hosts_raise(host: str) -> None:
    with pytest.raises(ValueError):
        parse_numeric_ipv4(host)


def test_allowlist_parsing() -> None:
    allow = AllowList.parse(["127.0.0.1:8080", "Intranet.Example", "[::1]:9000", "0x7f.2:81", " "])
    assert allow.allows("127.0.0.1", 8080)
    assert not allow.allows("127.0.0.1", 8081)
    assert allow.allows("intranet.example", 443)
    assert allow.allows("::1", 9000)
    assert allow.allows("127.0.0.2", 81)
    checked = check_url_allowed("http://127.0.0.1:8080/x", allow)
    assert checked.allowlisted and checked.ip == ipaddress.ip_address("127.0.0.1")
    with pytest.raises(ValueError, match="fetch_allow_hosts"):
        AllowList.parse(["host:notaport"])
    assert check_url_allowed("https://Intranet.Example./a", allow).url == httpx.URL(
        "https://intranet.example/a"
    )


async def test_environment_proxies_are_ignored(
    site: StaticSite, base: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A proxy would make the proxy, not us, resolve and connect: trust_env must stay off.
    dead_proxy = f"http://127.0.0.1:{free_port()}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
        monkeypatch.setenv(name, dead_proxy)
    async with WebFetcher(_settings(base)) as fetcher:
        page = await fetcher.fetch(f"{base}/notes.txt")
    assert page.text.startswith("Field notes")


# --- TLS through a pinned connection -------------------------------------------------------------
@pytest.fixture(scope="module")
def tls_cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A self-signed certificate for ``secure.test``, made with the openssl CLI."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl CLI not available")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = str(folder / "cert.pem"), str(folder / "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=secure.test",
         "-addext", "subjectAltName=DNS:secure.test"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


async def _https_server(cert: str, key: str, sni_seen: list[str | None]) -> asyncio.Server:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    context.sni_callback = lambda sock, name, ctx: sni_seen.append(name)  # type: ignore[assignment]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            pass  # the client rejected our certificate
        finally:
            writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0, ssl=context)


async def test_tls_uses_the_url_hostname_for_sni_and_verification(tls_cert: tuple[str, str]) -> None:
    cert, key = tls_cert
    sni_seen: list[str | None] = []
    server = await _https_server(cert, key, sni_seen)
    port = server.sockets[0].getsockname()[1]
    client_context = ssl.create_default_context(cafile=cert)
    try:
        async with httpx.AsyncClient(transport=PinnedTransport(verify=client_context)) as client:
            # Connected to the pinned IP, yet SNI and certificate check use the name from the URL.
            with pinned("secure.test", port, ["127.0.0.1"]):
                response = await client.get(f"https://secure.test:{port}/")
            assert response.text == "ok"
            assert sni_seen == ["secure.test"]
            # Same server and IP under another name: the certificate does not match, so no request.
            with pinned("other.test", port, ["127.0.0.1"]), pytest.raises(httpx.ConnectError):
                await client.get(f"https://other.test:{port}/")
    finally:
        server.close()
        await server.wait_closed()
