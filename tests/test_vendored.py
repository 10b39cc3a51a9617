"""The dependency internals store/vendored.py copies or leans on are still the ones it was checked against.

An upgrade of aiosqlite, langgraph-checkpoint-sqlite or langgraph-checkpoint-postgres fails here, saying which
upstream piece changed and which of our code to re-read against it. To re-pin after that re-check: record
the new version and the digest the failure names in `vendored.PINS`, and run tests/test_saver_conformance.py
and the store tests (test_store, test_compaction, test_durability)."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from deepresearch.store.vendored import PINS, Pin, upstream_digest


@pytest.mark.parametrize("pin", PINS, ids=lambda pin: pin.target)
def test_upstream_source_is_the_one_copied_or_relied_on(pin: Pin) -> None:
    digest = upstream_digest(pin.target)
    assert digest == pin.sha256, (
        f"{pin.target} changed upstream ({pin.distribution} {version(pin.distribution)}; it was checked at"
        f" {pin.version}). Re-check {pin.recheck} against the new source, then record sha256 {digest}"
        " and the new version in deepresearch/store/vendored.py PINS."
    )


@pytest.mark.parametrize("distribution", sorted({pin.distribution for pin in PINS}))
def test_installed_version_is_the_pinned_one(distribution: str) -> None:
    pinned = sorted({pin.version for pin in PINS if pin.distribution == distribution})
    assert len(pinned) == 1, f"PINS records {distribution} at several versions: {pinned}"
    installed = version(distribution)
    assert installed == pinned[0], (
        f"{distribution} {installed} is installed; store/vendored.py was checked against {pinned[0]}."
        " If the source tests above pass, the pinned pieces are unchanged: run"
        " tests/test_saver_conformance.py and the store tests, then record the new version in"
        " deepresearch/store/vendored.py PINS."
    )
