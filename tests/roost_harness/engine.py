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
