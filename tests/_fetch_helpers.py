"""The static site (peers/static_site.py) on 127.0.0.1 for the fetch test modules (test_fetch_*.py), and the
settings and error helpers they share.

A pytest plugin of tests/conftest.py, so its fixtures are found by name in every test module: `site` and
`base` (the site, its hits reset, and its URL), `other_served` (a second site that is never allowlisted).
The module-scoped server under them is named for what it serves (`static_site_served`): a plugin's
fixture names share one namespace with the other plugins'."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from config import Settings
from deepresearch.web.fetch import FetchError, WebFetcher
from peers import serve_app
from peers.static_site import StaticSite, make_static_site


# --- fixtures --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def static_site_served() -> Iterator[tuple[StaticSite, str]]:
    site = make_static_site(slow_delay=3.0)
    with serve_app(site.app) as base:
        yield site, base


@pytest.fixture(scope="module")
def other_served() -> Iterator[tuple[StaticSite, str]]:
    """A second site on another loopback port that is never allowlisted."""
    site = make_static_site()
    with serve_app(site.app) as base:
        yield site, base


@pytest.fixture
def site(static_site_served: tuple[StaticSite, str]) -> StaticSite:
    # A request an earlier test gave up on (a timeout on /slow) stays in flight on the server until its
    # handler notices the disconnect (it polls every 50 ms); reset() counts it into this test's peak
    # concurrency (test_per_host_concurrency_limit saw 3 instead of 2 right after the timeout tests).
    # So wait for it, bounded: a handler lives at most the site's slow_delay.
    deadline = time.monotonic() + 5
    while static_site_served[0].in_flight and time.monotonic() < deadline:
        time.sleep(0.01)
    static_site_served[0].reset()
    return static_site_served[0]


@pytest.fixture
def base(static_site_served: tuple[StaticSite, str]) -> str:
    return static_site_served[1]


def _hostport(base: str) -> str:
    return base.removeprefix("http://")


def _settings(base: str | None = None, **overrides: object) -> Settings:
    allow = [_hostport(base)] if base else []
    return Settings(fetch_allow_hosts=allow, **overrides)  # type: ignore[arg-type]


async def _fetch_error(fetcher: WebFetcher, url: str) -> FetchError:
    with pytest.raises(FetchError) as info:
        await fetcher.fetch(url)
    return info.value
