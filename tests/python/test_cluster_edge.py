"""The deployment files docs/SCALING.md ships, run for real: HAProxy with
etc/haproxy/roost.cfg in front of two roostd nodes on one PostgreSQL, and
roostd through PgBouncer with etc/pgbouncer/pgbouncer.ini (session mode).
Each file is used as written, with only its addresses (and PgBouncer's
credentials and TLS) swapped for loopback ones; a swap that no longer
applies fails the test, so the files and the test cannot drift apart."""

import os
import pathlib
import shutil
import subprocess
import tempfile
import uuid

import pytest

from drills.live import LiveStream, live_path
from roost_harness import ADMIN_TOKEN, Client, Roostd, json_query
from roost_harness.cluster import Cluster, wait_until
from roost_harness.paths import free_port
from roost_harness.postgres import postgres_cluster  # noqa: F401 (fixture)
from roost_harness.processes import terminate
from roost_harness.s3 import MotoS3

ETC = pathlib.Path(__file__).resolve().parents[2] / "etc"

NODE_CONFIG = f"""admin_token: {ADMIN_TOKEN}
default_permission: public
live_heartbeat: 1
trusted_proxies: ["127.0.0.1"]
collections:
  notes: {{permission: public}}
"""


def swapped(path, swaps):
    text = path.read_text()
    for old, new in swaps:
        assert old in text, f"{path} no longer has {old!r}"
        text = text.replace(old, new)
    return text


def run_as_postgres(cmd):
    """PgBouncer refuses to run as root (CI runs as root): run it as the postgres user then."""
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


class Program:
    """A foreground server process with its output in `log`."""

    def __init__(self, cmd, log, cwd):
        self.log = log
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=cwd)

    def text(self):
        return pathlib.Path(self.log).read_text(errors="replace")

    def stop(self):
        terminate(self.proc)


def answers(port):
    try:
        client = Client(port, timeout=2)
        try:
            return client.call("GET", "/healthz").status == 200
        finally:
            client.close()
    except OSError:
        return False


@pytest.fixture
def pair(tmp_path, postgres_cluster):  # noqa: F811 (fixture)
    (tmp_path / "moto").mkdir()
    with MotoS3(tmp_path / "moto") as s3:
        with Cluster(tmp_path / "cluster", postgres_cluster.database("edge"), s3, NODE_CONFIG, count=2) as cluster:
            yield cluster


@pytest.fixture
def haproxy(tmp_path, pair):
    assert shutil.which("haproxy"), "haproxy is not installed: run `make deps`"
    port = free_port()
    a, b = pair
    config = swapped(ETC / "haproxy" / "roost.cfg", [
        ("bind :443 ssl crt /etc/haproxy/roost.pem alpn h2,http/1.1", f"bind 127.0.0.1:{port}"),
        ("server a 10.0.0.11:8080 check", f"server a 127.0.0.1:{a.port} check"),
        ("server b 10.0.0.12:8080 check", f"server b 127.0.0.1:{b.port} check"),
        ("    server c 10.0.0.13:8080 check\n", ""),
    ])
    (tmp_path / "haproxy.cfg").write_text(config)
    check = subprocess.run(["haproxy", "-c", "-f", str(tmp_path / "haproxy.cfg")], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stdout + check.stderr
    program = Program(["haproxy", "-db", "-f", str(tmp_path / "haproxy.cfg")], tmp_path / "haproxy.log", tmp_path)
    try:
        assert wait_until(lambda: answers(port), timeout=20), program.text()
        program.port = port
        yield program
    finally:
        program.stop()


def test_haproxy_serves_every_node_s_writes_and_takes_a_dead_node_out(pair, haproxy):
    a, b = pair
    edge = Client(haproxy.port, timeout=15)
    tag = uuid.uuid4().hex
    _, token = a.new_user("watcher")
    stream = LiveStream(haproxy.port, live_path("notes", {"tag": tag}), token=token)
    try:
        assert stream.status == 200 and stream.wait_ready(10)
        ids = []
        for n in range(10):
            r = edge.call("POST", "/notes", {"tag": tag, "n": n})
            assert r.status == 201, r
            ids.append(r.body["_id"])
        # Wherever each write landed, both nodes serve it.
        for node in pair:
            assert node.call("GET", "/notes/_count?query=" + json_query({"tag": tag})).body["count"] == 10
        # The stream, through the balancer on one node, saw every write whichever node made it.
        assert stream.wait(lambda s: len(s.events) >= 10, 20), stream.snapshot()
        assert [e.entity_id for e in stream.snapshot()] == ids
    finally:
        stream.close()
    a.kill9()
    # A request on its way to A when it died may fail; once the health check
    # marked A down (2 checks, 2 s apart) every request goes to B.
    edge.close()

    def settled():
        c = Client(haproxy.port, timeout=5)
        try:
            return all(c.call("GET", f"/notes/{i}").status == 200 for i in ids)
        except OSError:
            return False
        finally:
            c.close()

    assert wait_until(settled, timeout=20), haproxy.text()
    edge = Client(haproxy.port, timeout=15)
    try:
        for n in range(30):
            assert edge.call("POST", "/notes", {"tag": tag, "after": n}).status == 201
        assert b.call("GET", "/notes/_count?query=" + json_query({"tag": tag})).body["count"] == 40
    finally:
        edge.close()


class PgBouncer:
    """etc/pgbouncer/pgbouncer.ini in front of a throwaway cluster's database,
    with `changes` applied on top of the swaps (e.g. another pool mode)."""

    def __init__(self, tmp_path, postgres, changes=()):
        self.tmp_path, self.postgres, self.changes = tmp_path, postgres, list(changes)

    def __enter__(self):
        binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
        assert os.path.exists(binary), "pgbouncer is not installed: run `make deps`"
        database = self.postgres.database("bouncer").rsplit("/", 1)[1]
        self.port = free_port()
        # Outside pytest's root-only tmp_path: the postgres user must read it.
        self.home = pathlib.Path(tempfile.mkdtemp(prefix="roost-pgbouncer-"))
        (self.home / "userlist.txt").write_text('"roost" ""\n')
        config = swapped(ETC / "pgbouncer" / "pgbouncer.ini", [
            ("roost = host=db.internal port=5432 dbname=roost",
             f"roost = host=127.0.0.1 port={self.postgres.port} dbname={database}"),
            ("listen_addr = 10.0.0.5", "listen_addr = 127.0.0.1\nunix_socket_dir ="),
            ("listen_port = 6432", f"listen_port = {self.port}"),
            ("auth_type = scram-sha-256", "auth_type = trust"),  # the throwaway cluster trusts loopback
            ("auth_file = /etc/pgbouncer/userlist.txt", f"auth_file = {self.home / 'userlist.txt'}"),
            ("server_tls_sslmode = verify-full", "server_tls_sslmode = disable"),
            *self.changes,
        ])
        (self.home / "pgbouncer.ini").write_text(config)
        if os.geteuid() == 0:
            for f in [self.home, *self.home.iterdir()]:
                shutil.chown(f, user="postgres")
        self.program = Program(run_as_postgres([binary, str(self.home / "pgbouncer.ini")]), self.tmp_path / "pgbouncer.log", "/")
        assert wait_until(lambda: "process up" in self.program.text() or self.program.proc.poll() is not None, timeout=20)
        assert self.program.proc.poll() is None, self.program.text()
        return self

    @property
    def url(self):
        return f"postgresql://roost@127.0.0.1:{self.port}/roost"

    def __exit__(self, *exc):
        self.program.stop()
        shutil.rmtree(self.home, ignore_errors=True)


def test_roostd_works_through_pgbouncer_in_session_mode(tmp_path, postgres_cluster):  # noqa: F811 (fixture)
    with PgBouncer(tmp_path, postgres_cluster) as bouncer:
        node = Roostd(tmp_path / "node", f"database_url: {bouncer.url}\n" + NODE_CONFIG)
        node.start(timeout=60)
        try:
            tag = uuid.uuid4().hex
            _, token = node.new_user("watcher")
            stream = LiveStream(node.port, live_path("notes", {"tag": tag}), token=token)
            try:
                assert stream.status == 200 and stream.wait_ready(10)
                made = [node.call("POST", "/notes", {"tag": tag, "n": n}).body["_id"] for n in range(20)]
                page = node.call("GET", "/notes?count=true&limit=5&sort=" + json_query({"n": -1}) + "&query=" + json_query({"tag": tag}))
                assert page.status == 200 and [d["n"] for d in page.body] == [19, 18, 17, 16, 15]
                assert page.headers["x-total-count"] == "20"
                etag = node.call("GET", f"/notes/{made[0]}").headers["etag"]
                assert node.call("PATCH", f"/notes/{made[0]}", {"n": 100}, headers={"If-Match": etag}).status == 200
                assert node.call("PATCH", f"/notes/{made[0]}", {"n": 101}, headers={"If-Match": etag}).status == 412
                assert node.call("DELETE", f"/notes/{made[1]}").status == 200
                # LISTEN holds in session mode: the stream saw the 20 creates, the update and the delete.
                assert stream.wait(lambda s: len(s.events) >= 22, 20), stream.snapshot()
                assert [e.kind for e in stream.snapshot()][-2:] == ["update", "delete"]
            finally:
                stream.close()
            node.stop()
            node.start(timeout=60)  # migrations already applied, through the pooler again
            assert node.call("GET", "/notes/_count?query=" + json_query({"tag": tag})).body["count"] == 19
        finally:
            node.stop(strict=False)
            node.close()
        # Every roostd connection went through PgBouncer.
        assert "login attempt: db=roost user=roost" in bouncer.program.text(), bouncer.program.text()[-2000:]


def test_a_transaction_pool_under_roostd_is_a_503_that_names_the_cause(tmp_path, postgres_cluster):  # noqa: F811 (fixture)
    """PgBouncer 1.18 in transaction mode hands each transaction any server
    session, where roostd's prepared statements do not exist: a deployment
    error, so every affected request answers 503 (never 500) and the log
    says to use session mode."""
    with PgBouncer(tmp_path, postgres_cluster, [("pool_mode = session", "pool_mode = transaction")]) as bouncer:
        node = Roostd(tmp_path / "node", f"database_url: {bouncer.url}\n" + NODE_CONFIG)
        try:
            node.start(timeout=60)
        except Exception:  # noqa: BLE001 - refusing to start is an acceptable answer too, if the log says why
            assert "session mode" in node.log_text(), node.log_text()[-3000:]
            return
        try:
            statuses = set()
            for n in range(30):
                statuses.add(node.call("POST", "/notes", {"n": n}).status)
                statuses.add(node.call("GET", "/notes?count=true").status)
            assert 500 not in statuses and statuses <= {200, 201, 503}, statuses
            assert 503 in statuses, "the pooler did not get in the way: is it in transaction mode?"
            assert "use PgBouncer in session mode" in node.log_text()
        finally:
            node.stop(strict=False)
            node.close()
