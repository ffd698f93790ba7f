"""The throwaway PostgreSQL the API suite will run the PostgreSQL engine on
(issue #17): it starts from Debian's packages with no manual step, gives each
caller its own database, and listens on loopback only."""

import subprocess

from roost_harness.postgres import ThrowawayPostgres, postgres_cluster  # noqa: F401 (fixture)


def psql(url, sql):
    done = subprocess.run(["psql", url, "-XAtc", sql], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_fresh_database_per_caller(postgres_cluster):
    a, b = postgres_cluster.database(), postgres_cluster.database()
    assert a != b
    psql(a, "CREATE TABLE only_in_a (x int)")
    assert psql(a, "SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'") == "1"
    assert psql(b, "SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'") == "0"


def test_loopback_only_utf8_and_the_contrib_extensions(postgres_cluster):
    url = postgres_cluster.database()
    assert psql(url, "SHOW listen_addresses") == "127.0.0.1"
    assert psql(url, "SHOW server_encoding") == "UTF8"
    assert psql(url, "SHOW server_version_num").isdigit() and int(psql(url, "SHOW server_version_num")) >= 150000
    # cube and earthdistance (for geo, docs/ENGINES.md) ship with the server package.
    psql(url, "CREATE EXTENSION cube; CREATE EXTENSION earthdistance;")
    metres = float(psql(url, "SELECT earth_distance(ll_to_earth(0, 0), ll_to_earth(0, 1))"))
    assert 111_000 < metres < 111_500


def test_stop_removes_everything():
    cluster = ThrowawayPostgres().start()
    url = cluster.database()
    assert psql(url, "SELECT 1") == "1"
    cluster.stop()
    assert not cluster.dir.exists()
    done = subprocess.run(["psql", url, "-XAtc", "SELECT 1"], capture_output=True, text=True, timeout=30)
    assert done.returncode != 0
