"""A throwaway PostgreSQL cluster for tests and benchmarks: initdb into a temp dir, trust auth, 127.0.0.1
only.

`pg_ctl` refuses to run as root, so as root the cluster belongs to the `postgres` system user (created by
Debian's postgresql package) and every server binary runs through `runuser`/`su`. A cluster left behind
by a crashed session is reaped by the next one (its owner process is gone), and a fresh session never
reuses its directory or port.

`start_cluster()` starts one; the pytest fixtures around it are in tests/pg.py.
"""

from __future__ import annotations

import contextlib
import glob
import json
import logging
import os
import pwd
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from psycopg import sql

from peers import free_port

logger = logging.getLogger(__name__)

DIR_PREFIX = "deepresearch-pg-"
SUPERUSER = "postgres"
# Members of this role must log in over TCP with a password (scram-sha-256); everyone else is trusted.
PASSWORD_GROUP = "password_login"
_BINARIES = ("initdb", "pg_ctl", "postgres")
_START_ATTEMPTS = 3
_COMMAND_TIMEOUT = 60.0


class PostgresNotInstalled(RuntimeError):
    pass


def find_bindir() -> Path | None:
    """The directory holding initdb, pg_ctl and postgres, newest major version first."""
    candidates: list[str] = []
    if override := os.environ.get("DEEPRESEARCH_PG_BINDIR"):
        candidates.append(override)
    if pg_config := shutil.which("pg_config"):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=True
            )
            candidates.append(out.stdout.strip())
    versioned = glob.glob("/usr/lib/postgresql/*/bin")
    candidates += sorted(versioned, key=lambda p: [int(n) for n in re.findall(r"\d+", p)], reverse=True)
    if initdb := shutil.which("initdb"):  # e.g. /usr/local/bin/initdb, a symlink into the versioned dir
        candidates.append(str(Path(initdb).resolve().parent))
    for candidate in candidates:
        if candidate and all((Path(candidate) / name).is_file() for name in _BINARIES):
            return Path(candidate)
    return None


def _process_start_time(pid: int) -> str | None:
    """Start time of a process (clock ticks since boot), so a recycled pid is not mistaken for it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]


def _owner_alive(marker: Path) -> bool:
    try:
        owner = json.loads(marker.read_text())
    except (OSError, ValueError):
        return False
    start = _process_start_time(int(owner["pid"]))
    return start is not None and start == owner.get("start")


def _as_user(cmd: list[str], user: str | None) -> list[str]:
    if user is None:
        return cmd
    if runuser := shutil.which("runuser"):
        return [runuser, "-u", user, "--", *cmd]
    return ["su", user, "-s", "/bin/sh", "-c", shlex.join(cmd)]


def _run(cmd: list[str], user: str | None, cwd: Path, timeout: float = _COMMAND_TIMEOUT) -> None:
    # stdin closed and output captured: the server itself logs to a file, so nothing holds our pipes open.
    proc = subprocess.run(
        _as_user(cmd, user),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")


def _postmaster_pid(data_dir: Path) -> int | None:
    try:
        return int((data_dir / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _stop_server(bindir: Path, data_dir: Path, user: str | None) -> None:
    """Immediate shutdown (the data is throwaway); SIGKILL the postmaster of this data dir if that fails."""
    pid = _postmaster_pid(data_dir)
    if pid is None:
        return
    try:
        _run(
            [str(bindir / "pg_ctl"), "-D", str(data_dir), "-m", "immediate", "-w", "-t", "20", "stop"],
            user,
            data_dir.parent,
            timeout=30,
        )
        return
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        logger.warning("pg_ctl stop failed for %s: %s", data_dir, exc)
    # Only kill the pid if it really is the postmaster of this data directory.
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return
    if "postgres" in cmdline and str(data_dir) in cmdline:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
            time.sleep(0.05)


def reap_stale_clusters(bindir: Path, user: str | None, uid: int) -> None:
    """Stop and remove clusters (of this uid) whose test session died without tearing them down."""
    for path in glob.glob(os.path.join(_temp_root(), DIR_PREFIX + "*")):
        base = Path(path)
        try:
            info = base.stat()
        except OSError:
            continue
        if info.st_uid != uid:
            continue  # another user's clusters are not ours to stop
        if _owner_alive(base / "owner.json"):
            continue  # another live session (e.g. a colleague's run) owns it
        if not (base / "owner.json").exists() and time.time() - info.st_mtime < 120:
            continue  # a session that is still creating it
        logger.info("removing stale test cluster %s", base)
        _stop_server(bindir, base / "data", user)
        shutil.rmtree(base, ignore_errors=True)


def _temp_root() -> str:
    # Unix socket paths are limited to ~107 bytes, so keep the socket dir short.
    return "/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir()


@dataclass
class PostgresCluster:
    bindir: Path
    base: Path
    port: int
    run_as: str | None
    host: str = "127.0.0.1"
    _stopped: bool = field(default=False, repr=False)

    @property
    def data_dir(self) -> Path:
        return self.base / "data"

    def dsn(self, dbname: str = "postgres", user: str = SUPERUSER, password: str | None = None) -> str:
        auth = f"{user}:{password}" if password is not None else user
        return f"postgresql://{auth}@{self.host}:{self.port}/{dbname}"

    @contextlib.contextmanager
    def admin(self) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
        with psycopg.connect(self.dsn(), autocommit=True, connect_timeout=5) as conn:
            yield conn

    def create_database(self, name: str | None = None) -> str:
        name = name or f"t_{uuid.uuid4().hex[:16]}"
        with self.admin() as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return name

    def drop_database(self, name: str) -> None:
        with self.admin() as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))

    def create_password_role(self, name: str, password: str) -> None:
        """A login role that must authenticate with its password over TCP (scram-sha-256)."""
        with self.admin() as conn:
            conn.execute(
                sql.SQL("CREATE ROLE {} LOGIN SUPERUSER PASSWORD {} IN ROLE {}").format(
                    sql.Identifier(name), sql.Literal(password), sql.Identifier(PASSWORD_GROUP)
                )
            )

    def restart(self) -> None:
        """Restart the server (fast mode: open connections are cut), on the same port."""
        log = self.base / "postgres.log"
        pg_ctl = [str(self.bindir / "pg_ctl"), "-D", str(self.data_dir), "-l", str(log)]
        _run(
            [*pg_ctl, "-m", "fast", "-w", "-t", "30", "restart"],
            self.run_as,
            self.base,
            timeout=45,
        )

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        _stop_server(self.bindir, self.data_dir, self.run_as)
        shutil.rmtree(self.base, ignore_errors=True)


_HBA = f"""\
# written by peers/pg.py: throwaway cluster, local use only
local all all trust
host all +{PASSWORD_GROUP} 127.0.0.1/32 scram-sha-256
host all all 127.0.0.1/32 trust
"""


def start_cluster() -> PostgresCluster:
    bindir = find_bindir()
    if bindir is None:
        raise PostgresNotInstalled(
            "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found in /usr/lib/postgresql/*/bin,"
            " pg_config --bindir or PATH; install them with .ci/install-postgres.sh"
        )
    run_as: str | None = None
    owner: pwd.struct_passwd | None = None
    if os.geteuid() == 0:  # pg_ctl and postgres refuse to run as root
        run_as = SUPERUSER
        try:
            owner = pwd.getpwnam(run_as)
        except KeyError:
            raise PostgresNotInstalled(
                "running as root but there is no 'postgres' system user to own the test cluster;"
                " install Debian's postgresql package (.ci/install-postgres.sh)"
            ) from None
    reap_stale_clusters(bindir, run_as, owner.pw_uid if owner is not None else os.geteuid())
    base = Path(tempfile.mkdtemp(prefix=DIR_PREFIX, dir=_temp_root()))
    (base / "owner.json").write_text(
        json.dumps({"pid": os.getpid(), "start": _process_start_time(os.getpid())})
    )
    if owner is not None:
        os.chown(base, owner.pw_uid, owner.pw_gid)
    cluster = PostgresCluster(bindir=bindir, base=base, port=0, run_as=run_as)
    try:
        _init_and_start(cluster)
        with cluster.admin() as conn:
            conn.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(PASSWORD_GROUP)))
    except BaseException:
        cluster.stop()
        raise
    logger.info("test PostgreSQL cluster on %s:%s in %s", cluster.host, cluster.port, base)
    return cluster


def _init_and_start(cluster: PostgresCluster) -> None:
    data, bindir, user = cluster.data_dir, cluster.bindir, cluster.run_as
    initdb = [str(bindir / "initdb"), "-D", str(data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8"]
    _run([*initdb, "--locale=C", "--no-sync"], user, cluster.base)
    (data / "pg_hba.conf").write_text(_HBA)
    settings = {
        "listen_addresses": "'127.0.0.1'",
        "unix_socket_directories": f"'{cluster.base}'",
        # durability is pointless for a throwaway cluster, and fsync makes CREATE DATABASE slow
        "fsync": "off",
        "synchronous_commit": "off",
        "full_page_writes": "off",
        "max_connections": "200",
        "shared_buffers": "32MB",
        "password_encryption": "'scram-sha-256'",
    }
    with (data / "postgresql.conf").open("a") as conf:
        conf.write("\n# peers/pg.py\n" + "".join(f"{k} = {v}\n" for k, v in settings.items()))
    log = cluster.base / "postgres.log"
    for attempt in range(1, _START_ATTEMPTS + 1):
        # The port is free when picked but another process may take it first: retry with a new one.
        cluster.port = free_port()
        with (data / "postgresql.conf").open("a") as conf:
            conf.write(f"port = {cluster.port}\n")  # the last setting wins
        try:
            _run(
                [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "30", "start"],
                user,
                cluster.base,
                timeout=45,
            )
            return
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            if attempt < _START_ATTEMPTS and "could not bind" in tail:
                logger.warning("port %s taken, retrying: %s", cluster.port, exc)
                _stop_server(bindir, data, user)
                continue
            raise RuntimeError(f"test PostgreSQL did not start: {exc}\n{tail}") from None
