# Sourced by .ci/install-*.sh: run apt-get as root (directly, or through sudo), or say why it cannot.
# Usage: apt_ready NAME WHAT — NAME prefixes messages, WHAT is what to install by hand without apt-get.

as_root() {
    if [[ "$(id -u)" -eq 0 ]]; then
        "$@"
    else
        sudo "$@"
    fi
}

apt_ready() {
    local name="$1" what="$2"
    if [[ "$(id -u)" -ne 0 ]] && ! command -v sudo >/dev/null 2>&1; then
        echo "$name: need root (or sudo) to install packages" >&2
        exit 1
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "$name: apt-get not found; install $what yourself" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
}
