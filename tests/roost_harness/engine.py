"""Which storage engine the roostd the tests start uses.

`ROOST_TEST_ENGINE=postgresql` runs every roostd on a throwaway PostgreSQL
(one cluster for the test process, started at the first roostd and
stopped at exit), each data directory with a fresh database of its own that
it keeps across restarts. Unset or `sqlite`: SQLite in the data directory,
as roostd runs by default. `make test` runs the API suite both ways."""

import atexit
import os

from .postgres import ThrowawayPostgres

_cluster = None
_databases = {}  # data directory → its database URL


def name():
    engine = os.environ.get("ROOST_TEST_ENGINE", "sqlite") or "sqlite"
    if engine not in ("sqlite", "postgresql"):
        raise RuntimeError(f"ROOST_TEST_ENGINE must be sqlite or postgresql, not {engine!r}")
    return engine


def cluster():
    """The test process's PostgreSQL cluster, started on first use."""
    global _cluster
    if _cluster is None:
        _cluster = ThrowawayPostgres().start()
        atexit.register(_cluster.stop)
    return _cluster


def database_url(data_dir):
    """The database of `data_dir` on the PostgreSQL engine, else None."""
    if name() != "postgresql":
        return None
    key = os.path.realpath(str(data_dir))
    if key not in _databases:
        _databases[key] = cluster().database("api")
    return _databases[key]


def _literal(value):
    if value is None:
        return "NULL"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def sql(data_dir, statement, params=()):
    """Runs `statement` (placeholders `?`) on the database of `data_dir`,
    whichever engine holds it; returns the rows as tuples of text (numbers
    as text on PostgreSQL, NULL as None on SQLite and "" on PostgreSQL).
    For tests that look at or repair stored rows directly."""
    url = database_url(data_dir)
    if url is None:
        import contextlib
        import sqlite3
        # Closed here, not whenever it is collected (a `with` on the connection only commits):
        # its close removes the WAL, which a later look at the files must not race.
        with contextlib.closing(sqlite3.connect(str(os.path.join(str(data_dir), "roost.db")), timeout=10)) as db, db:
            return [tuple(r) for r in db.execute(statement, tuple(params)).fetchall()]
    parts = statement.split("?")
    if len(parts) - 1 != len(params):
        raise ValueError("placeholder count does not match the parameters")
    text = parts[0] + "".join(_literal(p) + rest for p, rest in zip(params, parts[1:]))
    import subprocess
    out = subprocess.run([str(cluster().bin / "psql"), url, "-X", "-At", "-F", "\x1f", "-R", "\x1e", "-v", "ON_ERROR_STOP=1",
                          "-c", text], capture_output=True, timeout=60, check=True).stdout.decode()
    return [tuple(row.split("\x1f")) for row in out.rstrip("\n").split("\x1e") if row]


def dump(data_dir):
    """Every byte the database of `data_dir` holds, as the engine stores it:
    SQLite's files (database, WAL), or `pg_dump` of the PostgreSQL database."""
    url = database_url(data_dir)
    if url is None:
        import pathlib

        def read(p):
            try:
                return p.read_bytes()
            except FileNotFoundError:  # a WAL removed as the last connection to it closed
                return b""
        return b"".join(read(p) for p in sorted(pathlib.Path(data_dir).iterdir()) if p.name.startswith("roost.db"))
    import subprocess
    return subprocess.run([str(cluster().bin / "pg_dump"), url], capture_output=True, timeout=120, check=True).stdout
