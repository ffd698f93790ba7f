"""PostgreSQL going away under load and coming back (roostd on PostgreSQL
only; each test runs its own throwaway cluster, whatever ROOST_TEST_ENGINE
says, since it stops that cluster).

While the database is down every request that needs it answers 503 with
`Retry-After` at once (never a 500, never a hang past the client's
timeout); nothing acknowledged is lost; once the database is back roostd
serves again by itself: readers, the writer, live streams, the webhook
scheduler."""

import json
import socket
import subprocess
import threading
import time
import urllib.parse

import pytest

from drills.live_stream import LiveStream
from roost_harness import ADMIN_TOKEN, FAST_HASHING, Client, Roostd, running_roostd
from roost_harness.postgres import ThrowawayPostgres

CONFIG = FAST_HASHING + f"""admin_token: {ADMIN_TOKEN}
live_heartbeat: 1
collections:
  notes: {{permission: public}}
"""


@pytest.fixture
def outage():
    with ThrowawayPostgres() as cluster:
        url = cluster.database("outage")
        cluster.outage_database = url.rsplit("/", 1)[1]
        with running_roostd(CONFIG, env={"ROOST_DATABASE_URL": url}) as roost:
            yield cluster, roost


class Load:
    """Writers and readers on keep-alive clients in threads, bounded, recording every answer."""

    def __init__(self, port, writers=2, readers=1, limit=600):
        self.port, self.limit = port, limit
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.acknowledged = []
        self.answers = []  # (method, status, Retry-After)
        self.threads = [threading.Thread(target=self._write, args=(w,)) for w in range(writers)]
        self.threads += [threading.Thread(target=self._read) for _ in range(readers)]

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=60)

    def _record(self, method, r, ok_id=None):
        with self.lock:
            self.answers.append((method, r.status, r.header("Retry-After")))
            if ok_id is not None:
                self.acknowledged.append(ok_id)

    def _write(self, w):
        client = Client(self.port, timeout=15)
        for i in range(self.limit):
            if self.stop.is_set():
                break
            try:
                r = client.call("POST", "/notes", {"_id": f"w{w}-{i}", "n": i})
            except OSError:  # a dropped keep-alive connection: the write's outcome is unknown, not acknowledged
                client.close()
                client = Client(self.port, timeout=15)
                continue
            self._record("POST", r, f"w{w}-{i}" if r.status == 201 else None)
            time.sleep(0.01)
        client.close()

    def _read(self):
        client = Client(self.port, timeout=15)
        for _ in range(self.limit):
            if self.stop.is_set():
                break
            try:
                r = client.call("GET", "/notes?limit=5&query=" + urllib.parse.quote(json.dumps({"n": {"$gte": 0}})))
            except OSError:
                client.close()
                client = Client(self.port, timeout=15)
                continue
            self._record("GET", r)
            time.sleep(0.01)
        client.close()


def wait_until(check, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    pytest.fail(f"not within {seconds} s: {what}")


def assert_unavailable(r, what):
    assert r.status == 503, (what, r)
    assert r.header("Retry-After"), (what, r)
    assert set(r.body) == {"error", "description"}, (what, r)


def test_an_outage_answers_503_loses_nothing_acknowledged_and_recovers(outage):
    cluster, roost = outage
    assert roost.call("POST", "/notes", {"_id": "before", "n": -1}).status == 201
    stream = LiveStream(roost.port, "/notes/_live")
    assert stream.status == 200
    with Load(roost.port) as load:
        wait_until(lambda: len(load.acknowledged) >= 20, 30, "20 writes acknowledged before the outage")
        cluster.shut_down()
        for method, path, body in [("GET", "/notes", None), ("GET", "/notes/before", None),
                                   ("GET", "/notes/_count", None), ("POST", "/notes", {"during": True}),
                                   ("PATCH", "/notes/before", {"during": True}), ("DELETE", "/notes/before", None)]:
            # Twice: the first request may meet the broken connection, the second a failed reconnect.
            for attempt in range(2):
                assert_unavailable(roost.call(method, path, body, timeout=10), f"{method} {path} #{attempt}")
        unavailable_during = sum(1 for a in load.answers if a[1] == 503)
        cluster.bring_back()
        wait_until(lambda: roost.call("GET", "/notes/before").status == 200, 30, "reads served again")
        wait_until(lambda: roost.call("POST", "/notes", {"probe": True}).status == 201, 30, "writes served again")
        count_at_return = len(load.acknowledged)
        wait_until(lambda: len(load.acknowledged) >= count_at_return + 20, 30, "the load's writes acknowledged again")
    assert roost.alive()
    statuses = {a[1] for a in load.answers}
    assert statuses <= {200, 201, 503}, statuses
    assert all(a[2] for a in load.answers if a[1] == 503), "a 503 without Retry-After"
    assert unavailable_during > 0 or any(a[1] == 503 for a in load.answers), "the load never met the outage"
    admin = Client(roost.port, token=ADMIN_TOKEN)
    for note in ["before", *load.acknowledged]:
        assert admin.call("GET", f"/notes/{note}").status == 200, f"acknowledged {note} lost"
    # The live stream opened before the outage carries a write made after it.
    assert admin.call("POST", "/notes", {"_id": "after", "n": 1}).status == 201
    wait_until(lambda: any(e.entity_id == "after" for e in list(stream.events)), 30,
               "the stream opened before the outage saw a write made after it")
    assert stream.end is None, stream.end
    stream.close()
    assert " 500 " not in roost.log_text(), "a request answered 500"


def test_killed_connections_answer_503_then_reconnect(outage):
    """Every roostd connection ended by the server (`pg_terminate_backend`,
    as a failover or an operator does): each request meets at most a 503
    with Retry-After, then every part serves again on new connections."""
    cluster, roost = outage
    assert roost.call("POST", "/notes", {"_id": "kept", "n": 1}).status == 201
    stream = LiveStream(roost.port, "/notes/_live")
    assert stream.status == 200
    for round_ in range(2):
        ended = engine_sql(cluster, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                    "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        assert int(ended) >= 3, ended  # readers, the writer, the listener at least
        for method, path, body in [("GET", "/notes/kept", None), ("GET", "/notes/_count", None),
                                   ("POST", "/notes", {"round": round_}), ("GET", "/notes?sort=" + urllib.parse.quote('{"n":1}'), None)]:
            answers = [roost.call(method, path, body, timeout=10) for _ in range(4)]
            for r in answers:
                assert r.status in (200, 201) or r.status == 503 and r.header("Retry-After"), (method, path, r)
            assert answers[-1].status in (200, 201), (method, path, answers)
    assert roost.call("POST", "/notes", {"_id": "after-kill", "n": 2}).status == 201
    wait_until(lambda: any(e.entity_id == "after-kill" for e in list(stream.events)), 30, "the stream carries on")
    stream.close()
    assert roost.call("GET", "/notes/kept").status == 200
    assert " 500 " not in roost.log_text(), "a request answered 500"


def engine_sql(cluster, statement):
    import subprocess
    out = subprocess.run([str(cluster.bin / "psql"), cluster.url(current_database(cluster)), "-X", "-At", "-c", statement],
                         capture_output=True, timeout=60, check=True)
    return out.stdout.decode().strip()


def current_database(cluster):
    return cluster.outage_database


def test_a_database_resource_limit_is_503_not_500(outage):
    """A limit the operator set on the database (here `temp_file_limit`, SQLSTATE
    class 53, insufficient resources) stops a large sort: the client gets 503
    with Retry-After, never a 500, and small reads go on."""
    cluster, roost = outage
    admin = Client(roost.port, token=ADMIN_TOKEN)
    filler = "f" * 2000
    for i in range(0, 1500, 100):
        r = admin.call("POST", "/_batch", {"operations": [{"method": "POST", "path": "/notes", "body": {"n": i + j, "pad": filler}}
                                                          for j in range(100)]})
        assert r.status == 200, r
    engine_sql(cluster, f"ALTER DATABASE {cluster.outage_database} SET temp_file_limit = '64kB'")
    engine_sql(cluster, f"ALTER DATABASE {cluster.outage_database} SET work_mem = '64kB'")
    engine_sql(cluster, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
    big_sort = "/notes?limit=1000&sort=" + urllib.parse.quote('{"pad":-1,"n":1}')
    answers = [roost.call("GET", big_sort, timeout=30) for _ in range(4)]
    assert answers[-1].status == 503 and answers[-1].header("Retry-After"), answers[-1]
    assert set(answers[-1].body) == {"error", "description"}
    assert roost.call("GET", "/notes?limit=1").status == 200
    assert " 500 " not in roost.log_text(), "a request answered 500"


def test_a_database_that_never_answers_is_given_up_on_not_waited_for(tmp_path):
    """A server that accepts TCP but never answers (a hung host, a black hole
    behind a proxy): each connection attempt gives up after libpq's
    `connect_timeout` (5 s by default), so roostd fails its start with the
    reason instead of waiting for the kernel's TCP timeout."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)  # the kernel completes handshakes; nothing ever answers
    try:
        daemon = Roostd(tmp_path, CONFIG, env={"ROOST_DATABASE_URL": f"postgresql://roost@127.0.0.1:{silent.getsockname()[1]}/none"})
        daemon.start(wait=False)
        try:
            daemon.proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            daemon.kill9()
            pytest.fail("roostd still waits for a database that never answers")
        assert daemon.proc.returncode != 0
        assert "timeout" in daemon.log_text().lower(), daemon.log_tail()
    finally:
        silent.close()
