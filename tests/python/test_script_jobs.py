"""Scripts' scheduled jobs (roost.every / roost.cron, docs/SCRIPTING.md):
once per period on one node, a period missed while the daemon was down
runs once at the next start, and on nodes sharing PostgreSQL each period
runs once across all of them, including across kill -9 of the node running it."""

import os
import pathlib
import signal
import tempfile
import time
import uuid

import pytest

from roost_harness import ADMIN_TOKEN as ADMIN, Roostd, engine, json_query
from roost_harness.cluster import wait_until

TICKS = """
roost.every("2s", function(ctx)
  roost.create("ticks", { fire = ctx.fire, node = roost.env("NODE_NAME") or "solo" })
end)
"""

HOURLY = """
roost.every("1h", function(ctx)
  roost.create("hourly", { fire = ctx.fire })
end)
"""

SLOW = """
roost.every("15s", function(ctx)
  roost.create("slow", { fire = ctx.fire, phase = "started", node = roost.env("NODE_NAME") })
  local t = os.time()
  while os.time() - t < 2 do end  -- one to two seconds of wall time
  roost.create("slow", { fire = ctx.fire, phase = "done", node = roost.env("NODE_NAME") })
end)
"""


def config(scripts_dir, extra=""):
    return f"""admin_token: {ADMIN}
default_permission: public
scripts_dir: {scripts_dir}
scripts:
  job_timeout_ms: 3000
  env: [NODE_NAME]
{extra}"""


def docs(node, collection, query=None):
    r = node.call("GET", f"/{collection}?limit=1000&query={json_query(query or {})}", token=ADMIN)
    assert r.status == 200, r
    return r.body


def scripts_dir(tmp, text):
    d = pathlib.Path(tmp) / "scripts"
    d.mkdir(exist_ok=True)
    (d / "jobs.lua").write_text(text)
    return d


def test_a_job_runs_once_per_period_and_shows_in_metrics():
    with tempfile.TemporaryDirectory(prefix="roost-jobs-") as tmp:
        node = Roostd(pathlib.Path(tmp) / "d", config(scripts_dir(tmp, TICKS))).start()
        try:
            time.sleep(7.5)
            fires = [d["fire"] for d in docs(node, "ticks")]
            assert len(fires) == len(set(fires)), fires
            assert 2 <= len(fires) <= 5, fires
            assert all(f % 2 == 0 for f in fires)
            assert sorted(fires) == list(range(min(fires), max(fires) + 1, 2)), fires
            metrics = node.request("GET", "/metrics", headers={"Authorization": f"Bearer {ADMIN}"})[2].decode()
            line = next(l for l in metrics.splitlines() if l.startswith('roost_script_calls_total{') and 'kind="every"' in l
                        and 'outcome="ok"' in l)
            assert int(float(line.split()[-1])) >= 2
        finally:
            node.stop(strict=False)


def test_a_missed_period_runs_once_at_the_next_start():
    with tempfile.TemporaryDirectory(prefix="roost-jobs-") as tmp:
        node = Roostd(pathlib.Path(tmp) / "d", config(scripts_dir(tmp, HOURLY)))
        node.start()
        try:
            time.sleep(2)
            assert docs(node, "hourly") == []  # a new job waits for its next period
            node.stop()
            # as if the daemon had been down for the last two hourly periods
            engine.sql(node.data_dir, "UPDATE _script_jobs SET last_fire = last_fire - 7200")
            node.start()
            assert wait_until(lambda: len(docs(node, "hourly")) == 1, timeout=10), node.log_tail()
            time.sleep(3)
            rows = docs(node, "hourly")
            assert len(rows) == 1
            assert rows[0]["fire"] == int(time.time()) // 3600 * 3600
        finally:
            node.stop(strict=False)


@pytest.fixture
def shared_nodes(tmp_path):
    if engine.name() != "postgresql":
        pytest.skip("nodes share a database on PostgreSQL only (ROOST_TEST_ENGINE=postgresql)")
    url = engine.cluster().database("jobs")

    def make(text):
        scripts = scripts_dir(tmp_path, text)
        return [Roostd(tmp_path / name, config(scripts, f"database_url: {url}\n"), env={"NODE_NAME": name})
                for name in "abc"]
    nodes = []
    yield lambda text: nodes.extend(make(text)) or nodes
    for n in nodes:
        n.stop(strict=False)


def test_three_nodes_sharing_postgresql_run_each_period_once(shared_nodes):
    nodes = shared_nodes(TICKS)
    for n in nodes:
        n.start(wait=False)
    for n in nodes:
        n.wait_ready(60)
    time.sleep(9)
    rows = docs(nodes[0], "ticks")
    fires = [d["fire"] for d in rows]
    assert len(fires) == len(set(fires)), rows
    assert len(fires) >= 3, rows
    assert sorted(fires) == list(range(min(fires), max(fires) + 1, 2)), fires


def test_a_period_survives_kill9_of_the_node_running_it(shared_nodes):
    nodes = shared_nodes(SLOW)
    for n in nodes:
        n.start(wait=False)
    for n in nodes:
        n.wait_ready(60)
    started = wait_until(lambda: docs(nodes[0], "slow", {"phase": "started"}), timeout=40, interval=0.05)
    assert started, [n.log_tail() for n in nodes]
    victim_name, fire = started[0]["node"], started[0]["fire"]
    victim = next(n for n, name in zip(nodes, "abc") if name == victim_name)
    victim.kill9()
    survivor = next(n for n in nodes if n is not victim)
    # after the victim's lease (job_timeout + 5 s, shorter than the period), another node runs the same period once
    done = wait_until(lambda: docs(survivor, "slow", {"phase": "done", "fire": fire}), timeout=30)
    assert done and len(done) == 1 and done[0]["node"] != victim_name, (done, started, [[l for l in n.log_text().splitlines() if "script" in l or "job" in l][-8:] for n in nodes if n is not victim])
    time.sleep(2)
    assert len(docs(survivor, "slow", {"phase": "done", "fire": fire})) == 1
    # and every period that finished finished once
    finished = [d["fire"] for d in docs(survivor, "slow", {"phase": "done"})]
    assert len(finished) == len(set(finished)), finished
