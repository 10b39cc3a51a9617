#!/usr/bin/env bash
# Installs the PostgreSQL server binaries that peers/pg.py runs a throwaway cluster from (Debian/Ubuntu).
# Idempotent: a quick no-op when initdb, pg_ctl and postgres are already present. Run as root (or with sudo).
# It never starts a server: the Debian "main" cluster is not created, the tests make their own.
set -euo pipefail

have_server() {
    local bindir
    for bindir in /usr/lib/postgresql/*/bin; do
        if [[ -x "$bindir/initdb" && -x "$bindir/pg_ctl" && -x "$bindir/postgres" ]]; then
            echo "$bindir"
            return 0
        fi
    done
    return 1
}

if bindir="$(have_server)" && id -u postgres >/dev/null 2>&1; then
    echo "install-postgres: PostgreSQL server already installed ($bindir)"
    exit 0
fi

# shellcheck source=.ci/apt.sh
source "$(dirname "$0")/apt.sh"
apt_ready install-postgres "the PostgreSQL server (initdb, pg_ctl)"
apt_install=(apt-get install -y -q --no-install-recommends --no-upgrade
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)

as_root apt-get update -q
# postgresql-common first, so the package's automatic "main" cluster (and its service) can be switched off
# before the server package is configured: CI only needs the binaries.
as_root "${apt_install[@]}" postgresql-common
if [[ -f /etc/postgresql-common/createcluster.conf ]]; then
    as_root sed -ri 's/^#?\s*(create_main_cluster)\s*=.*$/\1 = false/' \
        /etc/postgresql-common/createcluster.conf
fi
as_root "${apt_install[@]}" postgresql

if ! bindir="$(have_server)"; then
    echo "install-postgres: postgresql installed but no /usr/lib/postgresql/*/bin/initdb found" >&2
    exit 1
fi
if ! id -u postgres >/dev/null 2>&1; then
    echo "install-postgres: the postgresql package did not create the 'postgres' system user" >&2
    exit 1
fi
echo "install-postgres: installed PostgreSQL server ($bindir)"
