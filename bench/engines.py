#!/usr/bin/env python3
"""roostd on PostgreSQL vs roostd on SQLite vs PocketBase, in the same run (issue #17's target:
roostd on PostgreSQL ahead of PocketBase on GET by id, list, create and upload).

  .venv/bin/python bench/engines.py [--seed 20000] [--rounds 3] [--duration 10s] [--port 18480]
                                    [--roostd PATH] [--no-record]

All three servers run throughout, on 127.0.0.1, with run.sh's data (bench/seed.py: `items` with
indexes on category and n; PocketBase's the same) and workloads (bench/lua: get, list, create,
upload of a 200 KB JPEG), wrk -t2 -c50, in rounds whose server order rotates; each server's
figure is its best round. PostgreSQL is a throwaway cluster (tests/roost_harness/postgres.py)
with its durable defaults (fsync, synchronous_commit on): every 201 is on disk on all three.
Uploads go to the local file store on both roostd engines (PocketBase has no other).
PocketBase runs with request logging off, its faster setting: the stricter peer.

Besides requests/s it measures CPU per request of roostd and, for PostgreSQL, of the database
server's processes (postmaster and its backends), which gives SCALING.md's capacity model:
creates/s per database core = 1e6 / database CPU µs per create. The run's record goes to
bench/results/engines.jsonl (figures engines.get, .list, .create, .upload).
Needs the test venv (pytest for the harness import) and PostgreSQL (make deps)."""
import argparse
import os
import pathlib
import subprocess
import sys
import time

sys.dont_write_bytecode = True
HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
import benchlib as B  # noqa: E402
import figures  # noqa: E402
from pg_feedlock import database_ticks  # noqa: E402
from roost_harness.postgres import DURABLE, ThrowawayPostgres  # noqa: E402

WORKLOADS = [("get", "get.lua", "GET by id"), ("list", "list.lua", "list, filter, 50 a page, total count"),
             ("create", "create.lua", "create, durable before the answer"),
             ("upload", "upload.lua", "upload a 200 KB JPEG, durable")]
SERVERS = ("roostd on PostgreSQL", "roostd on SQLite", "PocketBase")


def connections(pg, url):
    """The database's client connections other than this query's own (roostd's, while it is the only client)."""
    psql = pg.bin / "psql"
    out = subprocess.run([str(psql), url, "-Atc", "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                          "AND pid <> pg_backend_pid()"], capture_output=True, text=True, timeout=30)
    return int(out.stdout.strip()) if out.returncode == 0 else None


def start_servers(a, pg, work):
    jpeg = os.path.join(B.OUT, "bench-200k.jpg")
    if not os.path.exists(jpeg):
        vpy = os.path.join(B.VENV, "bin", "python")
        B.pb_binary()
        subprocess.run([os.path.join(B.VENV, "bin", "pip"), "install", "-q", "Pillow"], check=True, timeout=300)
        subprocess.run([vpy, str(HERE / "makejpeg.py"), jpeg, "--bytes", "204800"], check=True, timeout=120)
    binary = B.roostd_binary(a.roostd)
    url = pg.database("bench")
    servers = {}
    for k, (name, extra) in enumerate(((SERVERS[0], "database_url: %s\n" % url), (SERVERS[1], ""))):
        d = os.path.join(work, "roostd-%d" % k)
        os.makedirs(d, exist_ok=True)
        port = a.port + k
        B.require_free(port)
        p = B.start_roostd(binary, port, d, {"items": ["category", "n"]}, extra)
        servers[name] = {"api": "roost", "port": port, "proc": p, "dir": d, "url": url if k == 0 else None}
    pb = B.PB(a.port + 10, os.path.join(work, "pb"))
    pb.create_collection("items", [{"name": "category", "type": "text"}, {"name": "n", "type": "number"},
                                   {"name": "name", "type": "text"}, {"name": "location", "type": "json"}],
                         indexes=("category", "n"))
    pb.api("POST", "/api/collections", {"name": "photos", "type": "base", "listRule": "", "viewRule": "", "createRule": "",
                                        "fields": [{"name": "image", "type": "file", "maxSelect": 1, "maxSize": 20971520,
                                                    "mimeTypes": ["image/jpeg"], "thumbs": ["100x100"]}]})
    pb.logs(0)
    servers[SERVERS[2]] = {"api": "pb", "port": pb.port, "proc": pb.proc, "dir": os.path.join(work, "pb"), "pb": pb}
    return servers, jpeg


def seed(servers, n):
    for name, s in servers.items():
        ids = os.path.join(s["dir"], "ids.txt")
        url = "http://127.0.0.1:%d" % s["port"]
        if s["api"] == "roost":
            line = B.seed_roost(url, n, ids, what="seeding " + name)
        else:
            out = subprocess.run([sys.executable, str(HERE / "seed.py"), "pb", url, "items", str(n), ids, "--token",
                                  s["pb"].token, "--batch", "500", "--threads", "2", "--deadline", "200"],
                                 capture_output=True, text=True, timeout=300)
            if out.returncode != 0:
                raise SystemExit("seeding PocketBase failed: " + out.stdout + out.stderr)
            line = out.stdout.strip()
        s["ids"] = ids
        B.log("%s: %s" % (name, line))


def measure(name, s, script, duration, jpeg, pg, work, label):
    B.settle([s["proc"].pid])
    hz = os.sysconf("SC_CLK_TCK")
    own0, db0, before = B.proc_cpu_ticks(s["proc"].pid), database_ticks(pg), B.machine_ticks()
    r = B.wrk(script, "http://127.0.0.1:%d" % s["port"], s["api"], s["ids"], duration=duration,
              env={"BENCH_FILE": jpeg, "BENCH_FILES_COLLECTION": "photos"}, raw=os.path.join(work, "wrk-%s.txt" % label))
    if s["proc"].poll() is not None:
        raise SystemExit("%s exited" % name)
    n = max(1.0, r["requests"])
    r["steal"] = B.steal_since(before)
    r["cpu_us"] = 1e6 * (B.proc_cpu_ticks(s["proc"].pid) - own0) / hz / n
    if name == SERVERS[0]:
        r["db_cpu_us"] = 1e6 * (database_ticks(pg) - db0) / hz / n
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", default="10s")
    ap.add_argument("--port", type=int, default=18480)
    ap.add_argument("--roostd", help="roostd binary (default: $BENCH_ROOSTD, else the release build)")
    ap.add_argument("--no-record", dest="record", action="store_false")
    a = ap.parse_args()
    load_before = B.loadavg()
    B.log("load average before: %s" % load_before)
    work = B.workdir("engines", fresh=True)
    res = {(w, n): [] for w, _, _ in WORKLOADS for n in SERVERS}
    with ThrowawayPostgres(durability=DURABLE, settings="-c shared_buffers=256MB") as pg:
        servers, jpeg = start_servers(a, pg, work)
        pg_url = servers[SERVERS[0]]["url"]
        idle_connections = connections(pg, pg_url)
        seed(servers, a.seed)
        # Reads first, then creates (they grow the tables), then uploads (roostd's thumbnail backlog follows them).
        for w, script, _ in WORKLOADS:
            for rnd in range(a.rounds):
                order = SERVERS[rnd % 3:] + SERVERS[:rnd % 3]
                for name in order:
                    r = measure(name, servers[name], script, a.duration, jpeg, pg, work, "%s-%s-r%d" % (
                        w, name.split()[-1], rnd + 1))
                    res[(w, name)].append(r)
                    B.log("%-7s round %d %-22s %7.0f req/s  p99 %7.0f us  non-2xx %d  CPU %.0f us/req%s  steal %.0f%%" % (
                        w, rnd + 1, name, r["rps"], r["p99_us"], r["status_errors"], r["cpu_us"],
                        "  db CPU %.0f us/req" % r["db_cpu_us"] if "db_cpu_us" in r else "", r["steal"]))
        busy_connections = connections(pg, pg_url)
        versions = subprocess.run([B.roostd_binary(a.roostd), "--version"], capture_output=True, text=True).stdout.strip()
    load_after = B.loadavg()
    metrics = {"seed": a.seed, "rounds": a.rounds, "duration": a.duration, "roostd": versions, "load_after": load_after,
               "pg_connections": {"after_start": idle_connections, "after_run": busy_connections}}
    for w, _, _ in WORKLOADS:
        metrics[w] = {}
        for n in SERVERS:
            rs = res[(w, n)]
            best = max(rs, key=lambda r: r["rps"])
            m = {"best_rps": round(best["rps"], 1), "rounds": [round(r["rps"]) for r in rs], "p99_us": best["p99_us"],
                 "non_2xx": int(sum(r["status_errors"] for r in rs)), "cpu_us": round(min(r["cpu_us"] for r in rs), 1)}
            if "db_cpu_us" in best:
                m["db_cpu_us"] = round(min(r["db_cpu_us"] for r in rs), 1)
            metrics[w][n] = m
    text = report(metrics, load_before, load_after, a)
    B.publish("engines", text, os.path.join(work, "report.md"), a.record, metrics, targets(metrics),
              figures.engines(metrics), load_before)


def targets(m):
    out = []
    for w, _, what in WORKLOADS:
        ratio = m[w][SERVERS[0]]["best_rps"] / m[w][SERVERS[2]]["best_rps"]
        out.append({"target": "%s: roostd on PostgreSQL ahead of PocketBase" % what, "measured": "%.2f×" % ratio,
                    "verdict": "met" if ratio > 1 else "missed"})
    return out


def report(m, load_before, load_after, a):
    L = ["### roostd on PostgreSQL vs on SQLite vs PocketBase (#17): `bench/engines.py`, %s" %
         time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "",
         "%s; `wrk -t2 -c50 -d%s`, %d rounds (server order rotating), best round shown; %d entities seeded into each; "
         "PostgreSQL %s on the same 2 cores with fsync and synchronous_commit on; PocketBase with request logs off. "
         "Load average before %s, after %s." % (m["roostd"], a.duration, a.rounds, a.seed,
                                                 "15" if os.path.isdir("/usr/lib/postgresql/15") else "?", load_before, load_after), "",
         "| workload | PostgreSQL req/s | SQLite req/s | PocketBase req/s | PG / PocketBase | PG / SQLite | "
         "roostd CPU µs/req (PG, SQLite) | database CPU µs/req (PG) |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for w, _, what in WORKLOADS:
        pg, lite, pb = (m[w][n] for n in SERVERS)
        L.append("| %s | %.0f | %.0f | %.0f | %.2f× | %.2f | %.0f, %.0f | %.0f |" % (
            what, pg["best_rps"], lite["best_rps"], pb["best_rps"], pg["best_rps"] / pb["best_rps"],
            pg["best_rps"] / lite["best_rps"], pg["cpu_us"], lite["cpu_us"], pg.get("db_cpu_us", 0)))
    errors = {"%s/%s" % (w, n.split()[-1]): m[w][n]["non_2xx"] for w, _, _ in WORKLOADS for n in SERVERS if m[w][n]["non_2xx"]}
    L += ["", "Non-2xx answers: %s. roostd's connections to PostgreSQL: %s after start-up, %s after the run." % (
        errors or "none", m["pg_connections"]["after_start"], m["pg_connections"]["after_run"])]
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    main()
