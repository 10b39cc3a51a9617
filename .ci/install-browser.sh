#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests (tests/test_workbench.py drives it with Playwright's
# Python package; Playwright's own browser downloads are not used). Idempotent: a quick no-op when
# /usr/bin/chromium is already there. Run as root (or with sudo).
set -euo pipefail

if [[ -x /usr/bin/chromium ]]; then
    echo "install-browser: Chromium already installed ($(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium))"
    exit 0
fi

# shellcheck source=.ci/apt.sh
source "$(dirname "$0")/apt.sh"
apt_ready install-browser "Chromium at /usr/bin/chromium"
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
