"""How many PostgreSQL connections one roostd holds (docs/SCALING.md,
connections per node): readers + slow readers + 4 (the writer, the LISTEN
connection, the live fan-out, the webhook scheduler), at rest and while
uploads run (the ANALYZE connection comes only with bulk loads), plus up to
scripts.workers once a script's function, job or after hook has run (each
scripts thread opens its reader at its first call). Upload and hash workers
hold none. Always on PostgreSQL (the test process's throwaway cluster,
whatever ROOST_TEST_ENGINE says)."""

import pathlib
import subprocess
import threading
import time

from roost_harness import ADMIN_TOKEN, FAST_HASHING, engine, png, running_roostd

READERS, SLOW_READERS, UPLOAD_WORKERS, SCRIPT_WORKERS = 2, 1, 32, 2
CONFIG = FAST_HASHING + f"""admin_token: {ADMIN_TOKEN}
readers: {READERS}
slow_readers: {SLOW_READERS}
upload_workers: {UPLOAD_WORKERS}
files_permission: shared
thumbnail_workers: 1
"""
# Each connection names its role in application_name (roostd-<role>).
EXPECTED = {"roostd-reader": READERS, "roostd-slow-reader": SLOW_READERS, "roostd-writer": 1, "roostd-listen": 1,
            "roostd-live": 1, "roostd-webhooks": 1}
BOUND = sum(EXPECTED.values())
UPLOADERS, UPLOADS_EACH = 40, 3


def query(url, statement):
    """The rows of `statement` on `url`, as lists of text."""
    out = subprocess.run([str(engine.cluster().bin / "psql"), url, "-X", "-At", "-F", "|", "-c", statement],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    return [line.split("|") for line in out.splitlines() if line]


def connections(url):
    """roostd's connections to its database by application_name (this query's own left out)."""
    return {name: int(n) for name, n in query(url, "SELECT application_name, count(*) FROM pg_stat_activity "
                                                   "WHERE datname = current_database() AND pid <> pg_backend_pid() GROUP BY 1")}


def settled(url, timeout=10, expected=EXPECTED):
    """The connections once startup's have all opened (they open before /healthz answers; give them a moment)."""
    deadline = time.monotonic() + timeout
    seen = connections(url)
    while seen != expected and time.monotonic() < deadline:
        time.sleep(0.2)
        seen = connections(url)
    return seen


def webhook_backlog(roost, timeout=10):
    """The console's latest webhook backlog (counted on a reader; None until one sample has it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = roost.call("GET", "/admin/stats?after=0", token=ADMIN_TOKEN)
        assert r.status == 200, r
        counted = [s["webhookBacklog"] for s in r.body["samples"] if s["webhookBacklog"] is not None]
        if counted:
            return counted[-1]
        time.sleep(0.5)
    return None


def test_connections_stay_bounded_at_rest_and_under_uploads():
    url = engine.cluster().database("conns")
    with running_roostd(CONFIG, env={"ROOST_DATABASE_URL": url}) as roost:
        assert settled(url) == EXPECTED
        _, token = roost.new_user("uploader")
        assert roost.call("POST", "/files", raw_body=png(8, 8, 1), token="not-a-session",
                          headers={"Content-Type": "image/png"}).status == 401

        statuses, lock, done = [], threading.Lock(), threading.Event()
        in_flight = [0]

        def upload(k):
            client = roost.api(token=token, timeout=60)
            for i in range(UPLOADS_EACH):
                with lock:
                    in_flight[0] += 1
                r = client.call("POST", "/files", raw_body=png(400, 300, 1000 * k + i), headers={"Content-Type": "image/png"})
                with lock:
                    in_flight[0] -= 1
                    statuses.append(r.status)
            client.close()

        samples = []  # counts taken while uploads were in flight (before and after the query)

        def sample():
            while not done.is_set():
                before = in_flight[0]
                seen = connections(url)
                if before and in_flight[0]:
                    samples.append(seen)
                time.sleep(0.05)

        uploaders = [threading.Thread(target=upload, args=(k,)) for k in range(UPLOADERS)]
        sampler = threading.Thread(target=sample)
        sampler.start()
        for t in uploaders:
            t.start()
        for t in uploaders:
            t.join(timeout=300)
        done.set()
        sampler.join(timeout=60)

        assert statuses == [201] * (UPLOADERS * UPLOADS_EACH)
        assert samples, "no count was taken while uploads were in flight"
        busiest = max(samples, key=lambda s: sum(s.values()))
        assert sum(busiest.values()) <= BOUND, busiest
        assert set(busiest) <= set(EXPECTED), busiest
        # Every upload has its row, and the node is back at its resting set.
        assert query(url, "SELECT count(*) FROM _files") == [[str(UPLOADERS * UPLOADS_EACH)]]
        assert settled(url) == EXPECTED
        # The console still counts the webhook backlog, without a connection of its own.
        assert webhook_backlog(roost) == 0


FUNCTION = """roost.route("GET", "slow-count", function(req)
  local t = os.clock()
  while os.clock() - t < 0.3 do end  -- hold the scripts thread a moment, so both threads get a call
  return { ok = true }
end)
"""


def test_scripts_open_their_readers_at_their_first_call_only(tmp_path):
    """A node with scripts holds no scripts connection until a function runs; then at most scripts.workers."""
    url = engine.cluster().database("conns_scripts")
    scripts = pathlib.Path(tmp_path) / "scripts"
    scripts.mkdir()
    (scripts / "fn.lua").write_text(FUNCTION)
    config = CONFIG + f"scripts_dir: {scripts}\nscripts:\n  workers: {SCRIPT_WORKERS}\n"
    with running_roostd(config, env={"ROOST_DATABASE_URL": url}) as roost:
        assert settled(url) == EXPECTED
        time.sleep(1.5)  # the jobs' clock ticks; no job, no connection
        assert connections(url) == EXPECTED
        statuses = []
        calls = [threading.Thread(target=lambda: statuses.append(roost.api().call("GET", "/fn/slow-count").status))
                 for _ in range(2 * SCRIPT_WORKERS)]
        for t in calls:
            t.start()
        for t in calls:
            t.join(timeout=60)
        assert statuses == [200] * (2 * SCRIPT_WORKERS)
        seen = connections(url)
        assert 1 <= seen.get("roostd-scripts", 0) <= SCRIPT_WORKERS, seen
        assert sum(seen.values()) <= BOUND + SCRIPT_WORKERS, seen
        assert {k: v for k, v in seen.items() if k != "roostd-scripts"} == EXPECTED
