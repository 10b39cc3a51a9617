#!/usr/bin/env bash
# Installs Debian's headless Chromium for the browser tests (tests/test_workbench.py drives it with
# Playwright's Python package; Playwright's own browser downloads are not used): chromium-headless-shell,
# what Playwright itself runs for headless Chromium, under which the tests cost ~16 % less CPU than under the
# full browser (docs/profile.md). Where it cannot be installed but the full browser is there, the tests use
# that. Idempotent: a quick no-op when the headless shell is there. Run as root (or with sudo).
set -euo pipefail

shell=/usr/bin/chromium-headless-shell
if [[ -x "$shell" ]]; then
    echo "install-browser: Chromium's headless shell already installed ($("$shell" --version 2>/dev/null || echo "$shell"))"
    exit 0
fi

if [[ -x /usr/bin/chromium && "$(id -u)" -ne 0 ]] && ! command -v sudo >/dev/null 2>&1; then
    echo "install-browser: no root to install chromium-headless-shell; the tests use /usr/bin/chromium" >&2
    exit 0
fi

# shellcheck source=.ci/apt.sh
source "$(dirname "$0")/apt.sh"
apt_ready install-browser "chromium-headless-shell (or chromium)"
install() {
    # fonts-liberation: readable metric-compatible fonts for the screenshots
    as_root apt-get install -y -q --no-install-recommends --no-upgrade \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$1" fonts-liberation
}
as_root apt-get update -q || echo "install-browser: apt-get update failed; trying the package lists there are" >&2
if install chromium-headless-shell && [[ -x "$shell" ]]; then
    echo "install-browser: installed $("$shell" --version 2>/dev/null || echo chromium-headless-shell)"
elif [[ -x /usr/bin/chromium ]] || install chromium; then
    echo "install-browser: no chromium-headless-shell; the tests use /usr/bin/chromium" >&2
else
    echo "install-browser: neither chromium-headless-shell nor chromium could be installed" >&2
    exit 1
fi
