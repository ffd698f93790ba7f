#!/usr/bin/env python3
"""Online backups (#20): how fast `roostd backup` copies a ~1 GB data directory, and how
many creates the daemon still takes while it runs.

Seeding (through the API, 8 client threads on 127.0.0.1): --docs documents of ~--payload-kb
KiB each into `docs` (random base64, so SQLite cannot compress it away), and --files uploads
of --file-kb KiB random blobs (application/octet-stream: no thumbnail work) into the file
store. Then, in --rounds rounds, each:

  - without: `wrk -t2 -c50 -d<window>` POST /items (bench/lua/create.lua), no backup running;
  - with: `roostd backup --to <fresh dir>` (a full copy: nothing to link) started, and the same
    wrk run started at once; the window is the idle backup's time, so wrk runs inside the backup.

Plus one backup with nothing else running (the idle time and MB/s). MB/s = the backup's bytes
(database and every file, from its manifest) / its wall time, verification included (MiB/s,
1 MiB = 2^20). Targets (#20): ≥ 200 MB/s; creates during a backup ≥ 80% of without.

  bench/backup.py [--roostd .build/release/roostd] [--docs 10000] [--payload-kb 100]
                  [--files 10000] [--file-kb 8] [--rounds 3] [--port 18480] [--keep] [--no-record]

Writes Markdown to stdout, one record per run to bench/results/backup.jsonl (--no-record: not); data and
logs go to bench/out/backup/ (removed at the end unless --keep).
"""
import argparse
import base64
import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
import figures  # noqa: E402


def seed(port, count, make, path, headers, threads=8):
    """POSTs `count` bodies from make(i) on `threads` keep-alive connections; returns seconds."""
    def send(holder, rng):
        c = holder["c"] = holder.get("c") or http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        for i in rng:
            c.request("POST", path, make(i), headers)
            r = c.getresponse()
            r.read()
            if r.status != 201:
                raise SystemExit("POST %s: %d" % (path, r.status))

    return B.in_chunks(0, count, 1, threads, send, what="POST %s" % path)


def du(path):
    return int(subprocess.run(["du", "-sb", path], capture_output=True, text=True).stdout.split()[0])


def backup(binary, cfg, data, to):
    """Runs `roostd backup`; returns (wall seconds, bytes, files, its line)."""
    t0 = time.monotonic()
    p = subprocess.run([binary, "backup", "--config", cfg, "--data-dir", data, "--to", to],
                       capture_output=True, text=True, timeout=3600)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise SystemExit("roostd backup failed: " + p.stderr)
    m = re.search(r"verified: (\d+) bytes, database and (\d+) files", p.stdout)
    return wall, int(m.group(1)), int(m.group(2)), p.stdout.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--roostd")
    ap.add_argument("--docs", type=int, default=10000)
    ap.add_argument("--payload-kb", type=int, default=100)
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--file-kb", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--port", type=int, default=18480)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--no-record", dest="record", action="store_false", help="do not append the run to bench/results/backup.jsonl")
    a = ap.parse_args()
    binary = B.roostd_binary(a.roostd)
    work = B.workdir("backup", fresh=True)
    B.require_free(a.port)
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    load_before = B.loadavg()
    server = B.start_roostd(binary, a.port, work, {"items": ["category", "n"], "docs": []})
    data, cfg = os.path.join(work, "roost-data"), os.path.join(work, "roost.yaml")
    ids = os.path.join(work, "ids.txt")
    open(ids, "w").write("x\n")
    try:
        raw = os.urandom(a.payload_kb * 768)
        payload = lambda i: json.dumps({"n": i, "blob": base64.b64encode(raw[i % 997:] + raw[:i % 997]).decode()})  # noqa: E731
        docs_s = seed(a.port, a.docs, payload, "/docs", {"Content-Type": "application/json"})
        B.log("seeded %d documents in %.1f s" % (a.docs, docs_s))
        blob = os.urandom(a.file_kb * 1024 + 4096)
        files_s = seed(a.port, a.files, lambda i: blob[i % 4096:i % 4096 + a.file_kb * 1024] + i.to_bytes(4, "big"),
                       "/files", {"Content-Type": "application/octet-stream"})
        B.log("seeded %d files in %.1f s (%.0f uploads/s)" % (a.files, files_s, a.files / files_s))
        B.settle([server.pid])
        subprocess.run(["sync"], timeout=600)
        db_bytes = os.path.getsize(os.path.join(data, "roost.db"))
        files_bytes = du(os.path.join(data, "files"))
        idle = backup(binary, cfg, data, os.path.join(work, "b-idle"))
        B.log("idle backup: %.2f s, %d bytes (%.0f MiB/s): %s" % (idle[0], idle[1], idle[1] / idle[0] / 2**20, idle[3]))
        shutil.rmtree(os.path.join(work, "b-idle"))
        window = "%ds" % max(3, int(idle[0]))
        rounds = []
        for rnd in range(1, a.rounds + 1):
            for kind in (("without", "with") if rnd % 2 else ("with", "without")):
                B.settle([server.pid])
                subprocess.run(["sync"], timeout=600)
                result, box = {"round": rnd, "kind": kind}, {}
                t = None
                if kind == "with":
                    to = os.path.join(work, "b-%d" % rnd)
                    t = threading.Thread(target=lambda: box.setdefault("b", backup(binary, cfg, data, to)))
                    t.start()
                r = B.wrk("create.lua", "http://127.0.0.1:%d" % a.port, "roost", ids, duration=window,
                          raw=os.path.join(work, "wrk-%s-%d.txt" % (kind, rnd)))
                if t is not None:
                    t.join()
                    wall, size, _, _ = box["b"]
                    result.update(backup_s=round(wall, 2), mib_s=round(size / wall / 2**20, 1))
                    shutil.rmtree(to)
                result.update(rps=round(r["rps"]), p99_us=r["p99_us"], errors=r["status_errors"])
                rounds.append(result)
                B.log("round %d %-7s %7.0f creates/s p99 %.0f us%s" % (
                    rnd, kind, r["rps"], r["p99_us"],
                    "  backup %.2f s %.0f MiB/s" % (result["backup_s"], result["mib_s"]) if t else ""))
    finally:
        B.stop(server)
    with_ = [r["rps"] for r in rounds if r["kind"] == "with"]
    without = [r["rps"] for r in rounds if r["kind"] == "without"]
    ratio = statistics.median(with_) / statistics.median(without)
    mib_s = idle[1] / idle[0] / 2**20
    record = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "roostd": version, "cores": os.cpu_count(),
              "load_before": load_before, "docs": a.docs, "payload_kb": a.payload_kb, "files": a.files,
              "file_kb": a.file_kb, "db_bytes": db_bytes, "files_bytes": files_bytes, "seed_docs_s": round(docs_s, 1),
              "seed_files_s": round(files_s, 1), "backup_bytes": idle[1], "backup_files": idle[2],
              "idle_backup_s": round(idle[0], 2), "idle_mib_s": round(mib_s, 1), "window": window, "rounds": rounds,
              "creates_ratio": round(ratio, 3)}
    under = [r["mib_s"] for r in rounds if r["kind"] == "with"]
    text = "\n".join([
        "### Online backup (#20): `bench/backup.py`, %s" % record["when"], "",
        "roostd %s; database %.0f MiB (%d documents of ~%d KiB), file store %.0f MiB (%d blobs of %d KiB), "
        "seeded through the API in %.0f s + %.0f s. Load average before: %s." % (
            version, db_bytes / 2**20, a.docs, a.payload_kb, files_bytes / 2**20, a.files, a.file_kb,
            docs_s, files_s, load_before), "",
        "| measure | result | target |", "|---|---|---|",
        "| backup, nothing else running | %.2f s for %.0f MiB: **%.0f MiB/s** (verification included) | ≥ 200 MB/s: **%s** |" % (
            idle[0], idle[1] / 2**20, mib_s, "met" if mib_s >= 200 else "missed"),
        "| backup under the create load | %s MiB/s | |" % ", ".join("%.0f" % m for m in under),
        "| creates/s during a backup vs without (`wrk -t2 -c50 -d%s`, median) | %s vs %s: **%.0f%%** | ≥ 80%%: **%s** |" % (
            window, ", ".join(map(str, with_)), ", ".join(map(str, without)), 100 * ratio,
            "met" if ratio >= 0.8 else "missed"),
    ]) + "\n"
    print(text)
    if a.record:
        B.record("backup", record, [], text, figures.backup(record), load_before)
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
