#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests (tests/test_workbench.py drives it with Playwright's
# Python package; Playwright's own browser downloads are not used). Idempotent: a quick no-op when
# /usr/bin/chromium is already there. Run as root (or with sudo).
set -euo pipefail

if [[ -x /usr/bin/chromium ]]; then
    echo "install-browser: Chromium already installed ($(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium))"
    exit 0
fi

as_root() {
    if [[ "$(id -u)" -eq 0 ]]; then
        "$@"
    else
        sudo "$@"
    fi
}
if [[ "$(id -u)" -ne 0 ]] && ! command -v sudo >/dev/null 2>&1; then
    echo "install-browser: need root (or sudo) to install the chromium package" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-browser: apt-get not found; install Chromium at /usr/bin/chromium yourself" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
as_root apt-get update -q
# fonts-liberation: readable metric-compatible fonts for the screenshots
as_root apt-get install -y -q --no-install-recommends --no-upgrade \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
    chromium fonts-liberation

if [[ ! -x /usr/bin/chromium ]]; then
    echo "install-browser: chromium installed but /usr/bin/chromium is missing" >&2
    exit 1
fi
echo "install-browser: installed $(/usr/bin/chromium --version 2>/dev/null || echo chromium)"
