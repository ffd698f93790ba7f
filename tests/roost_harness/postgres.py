"""A throwaway PostgreSQL for tests: initdb into a temporary directory, pg_ctl
start on a free loopback port (fsync off), one database per caller, and
pg_ctl stop -m immediate plus removal at the end. The Python twin of
Tests/Support/ThrowawayPostgres.swift, for running the API suite on the
PostgreSQL engine (issue #17).

As root (CI runs `make test` as root), the server tools run as the `postgres`
user Debian's postgresql-15 package creates: initdb refuses root. When
PostgreSQL is not installed the fixture raises, so the tests that need it
fail; they never skip."""

import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

from .paths import free_port


class PostgresMissing(RuntimeError):
    pass


def server_bin() -> Path:
    """$ROOST_PG_BINDIR, else the newest /usr/lib/postgresql/<version>/bin (15 or later)."""
    if os.environ.get("ROOST_PG_BINDIR"):
        return Path(os.environ["ROOST_PG_BINDIR"])
    root = Path("/usr/lib/postgresql")
    versions = sorted((int(p.name) for p in root.iterdir() if p.name.isdigit() and int(p.name) >= 15), reverse=True) if root.is_dir() else []
    for version in versions:
        if (root / str(version) / "bin" / "initdb").exists():
            return root / str(version) / "bin"
    raise PostgresMissing("PostgreSQL 15 or later is not installed (no /usr/lib/postgresql/<version>/bin/initdb): run `make deps`.")


def stop_orphans(bin_dir: Path):
    """Stops and removes clusters whose test process died without stopping
    them (each cluster's directory names its owner's pid)."""
    for owner in Path(tempfile.gettempdir()).glob("roost-pg-*/owner"):
        try:
            os.kill(int(owner.read_text().strip()), 0)
            continue  # still running
        except ProcessLookupError:
            pass
        except (ValueError, OSError):
            continue
        cmd = [str(bin_dir / "pg_ctl"), "-D", str(owner.parent / "data"), "-m", "immediate", "stop"]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/", timeout=60)
        shutil.rmtree(owner.parent, ignore_errors=True)


# Test settings: nothing is flushed to disk (a crash of the machine loses the cluster, a test never cares).
FAST = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
# Benchmark settings: PostgreSQL's defaults, so a commit is on disk before roostd's 201 (as SQLite's is).
DURABLE = "-c fsync=on -c synchronous_commit=on -c full_page_writes=on"


class ThrowawayPostgres:
    """`durability`: FAST (tests) or DURABLE (benchmarks); `settings` more `-c name=value` options."""

    def __init__(self, durability=FAST, settings=""):
        self.durability, self.settings = durability, settings
        self.bin = server_bin()
        stop_orphans(self.bin)
        self.dir = Path(tempfile.mkdtemp(prefix="roost-pg-"))
        (self.dir / "owner").write_text(str(os.getpid()))
        self.port = None
        self._databases = 0

    def _run(self, tool, *args):
        cmd = [str(self.bin / tool), *args]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        # Output to a file: the server pg_ctl starts would hold a pipe open.
        with tempfile.TemporaryFile() as out:
            done = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd="/", timeout=120)
            if done.returncode != 0:
                out.seek(0)
                raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}: {out.read().decode(errors='replace')}")

    def start(self):
        if os.geteuid() == 0:
            shutil.chown(self.dir, user="postgres")
        data = str(self.dir / "data")
        self._run("initdb", "-D", data, "-U", "roost", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
        last = None
        for _ in range(5):
            port = free_port()
            try:
                self._start_server(port)
                self.port = port
                return self
            except RuntimeError as error:  # most likely the port was taken meanwhile
                last = error
        raise RuntimeError(f"pg_ctl start failed: {last}")

    def _start_server(self, port):
        self._run("pg_ctl", "-D", str(self.dir / "data"), "-l", str(self.dir / "log"), "-w", "-t", "60", "-o",
                  f"-p {port} -k {self.dir} -c listen_addresses=127.0.0.1 {self.durability} "
                  f"-c max_connections=200 {self.settings}", "start")

    def shut_down(self):
        """Stops the server (`pg_ctl stop -m fast`: every session is ended), keeping its data: an outage."""
        self._run("pg_ctl", "-D", str(self.dir / "data"), "-m", "fast", "-w", "stop")

    def bring_back(self):
        """Starts the server again on the same port after `shut_down`."""
        self._start_server(self.port)

    def database(self, prefix="t") -> str:
        """A fresh empty database; returns its libpq URL."""
        self._databases += 1
        name = f"{prefix}_{self._databases}_{uuid.uuid4().hex[:8]}"
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "roost", name)
        return self.url(name)

    def url(self, database="postgres") -> str:
        return f"postgresql://roost@127.0.0.1:{self.port}/{database}"

    def stop(self):
        try:
            self._run("pg_ctl", "-D", str(self.dir / "data"), "-m", "immediate", "stop")
        except RuntimeError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


@pytest.fixture(scope="session")
def postgres_cluster():
    """One throwaway cluster per test session; call `.database()` for a fresh database."""
    with ThrowawayPostgres() as cluster:
        yield cluster
