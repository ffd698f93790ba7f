#!/usr/bin/env python3
"""The database side of many nodes' writes, without roostd (docs/SCALING.md's capacity model):
pgbench replays the PostgreSQL writer's group commit (Sources/StorePostgres) on a durable
throwaway cluster, from 1 and 3 "nodes" (pgbench clients, one writer connection each):

  BEGIN; per write: SAVEPOINT; INSERT INTO c_1 … ON CONFLICT (id) DO NOTHING RETURNING rid; RELEASE;
  SELECT pg_advisory_xact_lock(feed); INSERT INTO _changes … (the batch's rows, one statement);
  NOTIFY roost_feed; COMMIT

with batches of 1, 16 and 64 writes, with the feed lock and without it (to see what the lock
costs once nodes contend for it). Measured: writes/s, and the database's CPU per write (the
postmaster and its children, from /proc), hence writes/s per database core.

  .venv/bin/python bench/pg_feedlock.py [--duration 10] [--no-record]

pgbench runs on the same cores as the database: the figures are a floor of what a database
machine of its own does. The record goes to bench/results/pg_feedlock.jsonl."""
import argparse
import os
import pathlib
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True
HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
import benchlib as B  # noqa: E402
from roost_harness.postgres import DURABLE, ThrowawayPostgres  # noqa: E402

FEED_LOCK = 0x526F_6F73_7402  # PostgresDocumentWriter.feedLockKey
SCHEMA = """
CREATE TABLE c_1 (rid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, id text COLLATE "C" UNIQUE NOT NULL,
                  created_at text NOT NULL, updated_at text NOT NULL, doc json NOT NULL);
CREATE SEQUENCE _changes_seq;
CREATE TABLE _changes (seq bigint PRIMARY KEY DEFAULT nextval('_changes_seq'), coll text NOT NULL, id text NOT NULL,
                       op integer NOT NULL, at bigint NOT NULL, prev_doc text);
CREATE INDEX _changes_coll ON _changes (coll, seq);
"""
DOC = '{"category":"c7","n":123,"name":"item 123","location":[1.5,45.25]}'


def script(batch, lock):
    """One group commit of `batch` creates, as the writer sends it."""
    ids = ["md5(random()::text || clock_timestamp()::text)"] * batch
    lines = ["BEGIN;"]
    for k in range(batch):
        body = ("INSERT INTO c_1 (id, created_at, updated_at, doc) VALUES (%s, '2026-11-24T08:00:00.000Z', "
                "'2026-11-24T08:00:00.000Z', '%s'::json) ON CONFLICT (id) DO NOTHING RETURNING rid;" % (ids[k], DOC))
        lines += ["SAVEPOINT s;", body, "RELEASE SAVEPOINT s;"] if batch > 1 else [body]
    if lock:
        lines.append("SELECT pg_advisory_xact_lock(%d);" % FEED_LOCK)
    rows = ", ".join("('items', md5(random()::text), 1, 0, NULL)" for _ in range(batch))
    lines += ["INSERT INTO _changes (coll, id, op, at, prev_doc) VALUES %s;" % rows, "NOTIFY roost_feed;", "COMMIT;"]
    return "\n".join(lines) + "\n"


def database_ticks(pg):
    """CPU ticks the PostgreSQL server has used: the postmaster's own, its reaped children's (backends that
    ended: cutime and cstime) and those of its children still running."""
    master = int((pg.dir / "data" / "postmaster.pid").read_text().split()[0])
    with open("/proc/%d/stat" % master) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    total = sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
    kids = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True).stdout.split()
    for p in kids:
        try:
            total += B.proc_cpu_ticks(int(p))
        except (FileNotFoundError, ProcessLookupError):
            pass  # ended meanwhile: counted in cutime next time
    return total


# roostd's GET by id on PostgreSQL (PostgresDocumentReader.get, a public collection: no access rule),
# over SEEDED rows whose ids are "id<n>".
SEEDED = 20000
GET_SCRIPT = "\\set r random(1, %d)\nSELECT d.doc::text FROM c_1 AS d WHERE d.id = 'id' || :r;\n" % SEEDED
SEED_SQL = ("INSERT INTO c_1 (id, created_at, updated_at, doc) SELECT 'id' || g, '2026-11-24T08:00:00.000Z', "
            "'2026-11-24T08:00:00.000Z', '%s'::json FROM generate_series(1, %d) AS g" % (DOC, SEEDED))


def run(pg, url, batch, lock, clients, duration, work, text=None):
    """One pgbench run of a group commit of `batch` writes (or of `text`, one read a transaction)."""
    path = os.path.join(work, "commit-%d-%s.sql" % (batch, "lock" if lock else "nolock") if text is None else "get.sql")
    with open(path, "w") as f:
        f.write(text or script(batch, lock))
    hz = os.sysconf("SC_CLK_TCK")
    t0 = database_ticks(pg)
    out = subprocess.run([str(pg.bin / "pgbench"), "-n", "-M", "prepared", "-c", str(clients), "-j", str(clients),
                          "-T", str(duration), "-f", path, url], capture_output=True, text=True, timeout=duration + 120)
    time.sleep(1)  # the postmaster reaps pgbench's backends (their CPU moves into its cutime)
    cpu_s = (database_ticks(pg) - t0) / hz
    m = re.search(r"tps = ([0-9.]+)", out.stdout)
    if out.returncode != 0 or not m:
        raise SystemExit("pgbench failed: " + out.stdout[-500:] + out.stderr[-500:])
    writes = float(m.group(1)) * batch
    return {"batch": batch, "lock": lock, "nodes": clients, "writes_per_s": round(writes),
            "db_cpu_us_per_write": round(1e6 * cpu_s / (writes * duration), 1),
            "writes_per_db_core_s": round(writes * duration / max(cpu_s, 1e-9))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--no-record", dest="record", action="store_false")
    a = ap.parse_args()
    load_before = B.loadavg()
    work = B.workdir("pg_feedlock", fresh=True)
    rows = []
    with ThrowawayPostgres(durability=DURABLE) as pg:
        url = pg.database("feedlock")
        subprocess.run([str(pg.bin / "psql"), url, "-qc", SCHEMA], check=True, capture_output=True, timeout=60)
        subprocess.run([str(pg.bin / "psql"), url, "-qc", SEED_SQL], check=True, capture_output=True, timeout=120)
        reads = []
        for nodes in (1, 3):
            r = run(pg, url, 1, False, nodes, a.duration, work, GET_SCRIPT)
            reads.append({"nodes": nodes, "gets_per_s": r["writes_per_s"], "db_cpu_us_per_get": r["db_cpu_us_per_write"],
                          "gets_per_db_core_s": r["writes_per_db_core_s"]})
            B.log("GET by id, %d reader(s): %6d/s, database CPU %5.1f µs/GET" % (nodes, r["writes_per_s"], r["db_cpu_us_per_write"]))
        for batch in (1, 16, 64):
            for nodes in (1, 3):
                for lock in (True, False):
                    r = run(pg, url, batch, lock, nodes, a.duration, work)
                    rows.append(r)
                    B.log("batch %2d, %d node(s), feed lock %-3s: %6d writes/s, database CPU %5.1f µs/write (%d writes/s per core)" % (
                        batch, nodes, "on" if lock else "off", r["writes_per_s"], r["db_cpu_us_per_write"], r["writes_per_db_core_s"]))
    L = ["### The database side of many nodes' writes (#17): `bench/pg_feedlock.py`", "",
         "pgbench replaying roostd's PostgreSQL group commit (a savepoint and an insert per write, the feed lock, the "
         "batch's change rows, NOTIFY) on a durable throwaway PostgreSQL 15 (fsync and synchronous_commit on), "
         "%d s a run, pgbench on the same 2 cores. Load average before %s, after %s." % (a.duration, load_before, B.loadavg()),
         "", "| writes per commit | nodes (writer connections) | feed lock | writes/s | database CPU µs/write | writes/s per database core |",
         "|---:|---:|---|---:|---:|---:|"]
    for r in rows:
        L.append("| %d | %d | %s | %d | %.1f | %d |" % (r["batch"], r["nodes"], "on" if r["lock"] else "off", r["writes_per_s"],
                                                      r["db_cpu_us_per_write"], r["writes_per_db_core_s"]))
    L += ["", "GET by id as roostd's reader sends it (`SELECT d.doc::text … WHERE d.id = $1`, %d rows): " % SEEDED +
          "; ".join("%d reader(s) %d/s, database CPU %.1f µs/GET (%d per core)" % (
              r["nodes"], r["gets_per_s"], r["db_cpu_us_per_get"], r["gets_per_db_core_s"]) for r in reads) + "."]
    B.publish("pg_feedlock", "\n".join(L) + "\n", os.path.join(work, "report.md"), a.record, {"runs": rows, "reads": reads}, [], [],
              load_before)


if __name__ == "__main__":
    main()
