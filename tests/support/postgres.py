"""A throwaway PostgreSQL 15 server for tests: Debian's binaries, initdb into a temporary directory, listening on
127.0.0.1 at a free port (and a Unix socket in that directory only), trust authentication, stopped with
``pg_ctl stop -m immediate``. initdb refuses to run as root, so as root every step runs as the ``postgres`` system
user (``runuser``) in a directory it owns; unprivileged, it runs as the current user."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

PG_BIN = Path("/usr/lib/postgresql/15/bin")
START_TIMEOUT_S = 60
SUPERUSER = "infercost"


class Unavailable(RuntimeError):
    """PostgreSQL cannot be started here; the message says why (the tests skip with it)."""


@dataclass
class Server:
    directory: Path
    port: int
    as_user: list[str]

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=self.port, user=SUPERUSER, dbname="postgres",
                             autocommit=True, connect_timeout=10) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        stop_keeping_data(self)
        shutil.rmtree(self.directory, ignore_errors=True)


def stop_keeping_data(server: Server, mode: str = "immediate") -> None:
    """Stop the server, leaving its data for ``restart``. ``immediate`` is a crash: with this test server's
    ``synchronous_commit=off`` the last commits may be lost. ``fast`` cuts every client off, as an administrator's
    restart does, and keeps every commit."""
    _run([*server.as_user, str(PG_BIN / "pg_ctl"), "-D", str(server.directory / "data"), "-m", mode,
          "-w", "-t", "30", "stop"], check=False)


def restart(server: Server) -> None:
    """Start a stopped server again on its data and port."""
    options = (f"-c listen_addresses=127.0.0.1 -p {server.port} -k {server.directory} -c fsync=off "
               "-c synchronous_commit=off -c full_page_writes=off -c max_connections=100")
    _run([*server.as_user, str(PG_BIN / "pg_ctl"), "-D", str(server.directory / "data"), "-o", options,
          "-l", str(server.directory / "server.log"), "-w", "-t", str(START_TIMEOUT_S), "start"])
    _wait_accepting(server)


def _run(command: list[str], check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(command, capture_output=True, text=True, timeout=START_TIMEOUT_S)
    if check and result.returncode:
        tool = next((Path(part).name for part in command if part.startswith(str(PG_BIN))), command[0])
        lines = (result.stderr or result.stdout).strip().splitlines() or ["no output"]
        raise Unavailable(f"{tool} failed: {lines[-1]}")
    return result


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _unprivileged() -> list[str]:
    """The command prefix that runs PostgreSQL's tools as a user initdb accepts."""
    if os.geteuid() != 0:
        return []
    runuser = shutil.which("runuser")
    if not runuser:
        raise Unavailable("running as root and `runuser` is missing, so PostgreSQL cannot run as the postgres user")
    try:
        import pwd

        pwd.getpwnam("postgres")
    except KeyError:
        raise Unavailable("running as root and there is no `postgres` system user to run PostgreSQL as") from None
    return [runuser, "-u", "postgres", "--"]


def start() -> Server:
    """Start a fresh server; raises ``Unavailable`` with the reason where it cannot."""
    if not (PG_BIN / "initdb").exists():
        raise Unavailable(f"PostgreSQL 15 is not installed ({PG_BIN / 'initdb'} is missing; "
                          "`apt-get install postgresql-15` provides it, and scripts/test.sh does so as root)")
    as_user = _unprivileged()
    directory = Path(tempfile.mkdtemp(prefix="infercost-pg-"))
    if as_user:
        shutil.chown(directory, "postgres", "postgres")
    server = Server(directory, _free_port(), as_user)
    try:
        _run([*as_user, str(PG_BIN / "initdb"), "-D", str(directory / "data"), "-U", SUPERUSER, "--auth=trust",
              "-E", "UTF8", "--no-sync", "--no-instructions"])
        restart(server)
    except BaseException:
        server.stop()
        raise
    return server


def _wait_accepting(server: Server) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=1):
                return
        except OSError as error:
            if time.monotonic() > deadline:
                raise Unavailable(f"PostgreSQL did not accept connections on port {server.port}: {error}") from None
            time.sleep(0.1)
