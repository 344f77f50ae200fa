"""A real PostgreSQL server for the store tests: `initdb` into a fresh temporary folder
and `pg_ctl start` on a free loopback port, once per test process (each xdist worker has
its own), stopped at the end. Each test gets a database of its own (`dsn`).

The fixtures live here, not in tests/serve/pg/conftest.py, so the store contract tests
(tests/serve/test_store_contract.py) can run on PostgreSQL too; tests/serve/conftest.py
registers them for everything under tests/serve.

PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user
(`runuser`), which Debian's `postgresql` package creates. Tests are skipped, with the
reason, when psycopg or the server's binaries are missing (failed under
`WISP_REQUIRE_PG=1`).

With `WISP_TEST_PG_DSN` (a superuser's `postgresql://` URL) the tests use that running
server instead, e.g. the cluster `.ci/run` started: each test still creates its own
database on it, and drops it.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit, urlunsplit

import pytest


def unavailable(reason: str) -> NoReturn:
    """Skips the test, unless `.ci/run` said PostgreSQL is there (`WISP_REQUIRE_PG=1`):
    then the scale-out acceptance tests must run, and a missing part fails them."""
    if os.environ.get("WISP_REQUIRE_PG") == "1":
        pytest.fail(f"WISP_REQUIRE_PG=1 but {reason}")
    pytest.skip(reason)


def _psycopg() -> Any:
    """psycopg, imported only by a test that needs the server (the SQLite half of the
    contract tests runs without it)."""
    try:
        import psycopg
    except ImportError:
        unavailable("psycopg 3 is not installed (pip install 'psycopg[binary]')")
    return psycopg

SUPERUSER = "wisp"


def _bin_dir() -> Path | None:
    """The folder of initdb/pg_ctl/postgres: $PG_BIN, PATH, or Debian's versioned folder
    (Debian keeps them off PATH, in /usr/lib/postgresql/<major>/bin)."""
    if os.environ.get("PG_BIN"):
        return Path(os.environ["PG_BIN"])
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
                        key=lambda p: int(Path(p).parent.parent.name)
                        if Path(p).parent.parent.name.isdigit() else 0)
    return Path(candidates[-1]).parent if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.as_user: list[str] = []
        owner: pwd.struct_passwd | None = None
        if os.geteuid() == 0:
            try:
                owner = pwd.getpwnam("postgres")
            except KeyError:
                unavailable("running as root and there is no `postgres` user to run the "
                            "server as")
            self.as_user = ["runuser", "-u", "postgres", "--"]
        # Not pytest's tmp_path: its folders are 0700 and root's, out of the server
        # user's reach.
        self.root = Path(tempfile.mkdtemp(prefix="wisp-pg-"))
        if owner is not None:
            os.chown(self.root, owner.pw_uid, owner.pw_gid)
        self.data = self.root / "data"
        self.port = 0

    def run(self, tool: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.as_user, str(self.bin_dir / tool), *args], text=True,
                              capture_output=True, timeout=120, check=False)

    def start(self) -> None:
        done = self.run("initdb", "-D", str(self.data), "-U", SUPERUSER, "-A", "trust",
                        "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
        if done.returncode != 0:
            pytest.fail(f"initdb failed: {done.stderr or done.stdout}")
        for _ in range(5):  # a port found free may be taken before the server binds it
            self.port = _free_port()
            options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
                       "-c fsync=off -c full_page_writes=off -c shared_buffers=32MB "
                       "-c max_connections=300")
            done = self.run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"),
                            "-w", "-t", "60", "-o", options, "start")
            if done.returncode == 0:
                return
        log = (self.root / "log").read_text() if (self.root / "log").exists() else ""
        pytest.fail(f"pg_ctl start failed: {done.stderr or done.stdout}\n{log}")

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"


class ExistingServer:
    """A server someone else started (`WISP_TEST_PG_DSN`, a superuser's URL, e.g. what
    `.ci/run` starts): tests only create and drop their databases on it."""

    def __init__(self, url: str) -> None:
        self.url = urlsplit(url)

    def dsn(self, database: str = "postgres") -> str:
        return urlunsplit(self.url._replace(path=f"/{database}"))


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer | ExistingServer]:
    _psycopg()
    if os.environ.get("WISP_TEST_PG_DSN"):
        yield ExistingServer(os.environ["WISP_TEST_PG_DSN"])
        return
    bin_dir = _bin_dir()
    if bin_dir is None or not (bin_dir / "initdb").exists():
        unavailable("PostgreSQL server binaries (initdb, pg_ctl) not found: "
                    "apt-get install postgresql, or set PG_BIN")
    server = PgServer(bin_dir)
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def dsn(pg_server: PgServer | ExistingServer) -> Iterator[str]:
    """A fresh, empty database for this test."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    psycopg = _psycopg()
    with psycopg.connect(pg_server.dsn(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield pg_server.dsn(name)
    with psycopg.connect(pg_server.dsn(), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
