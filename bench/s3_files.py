#!/usr/bin/env python3
"""Uploads and downloads of originals: the local file store vs files_store: s3
on moto_server, in the same run, interleaved round by round.

  ROOSTD=.build/release/roostd .venv/bin/python bench/s3_files.py [--files 200] [--size 102400] [--threads 4] [--rounds 3]

Both daemons and moto run on 127.0.0.1 (bounded loops). moto is a single
Python process: the S3 figures measure roostd plus moto's speed, not what
a real object store does; only the ratio within one run means anything.
Prints one BENCH_RESULT line per operation and store, and the ratios."""
import argparse
import os
import pathlib
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))
from roost_harness import Client, Roostd  # noqa: E402
from roost_harness.s3 import MotoS3  # noqa: E402

CONFIG = "files_permission: public\ndefault_permission: public\nlog_level: warning\n"


def run(threads, jobs, work):
    """Runs work(client, job) over jobs on `threads` keep-alive clients; returns requests/s."""
    queue, lock = list(jobs), threading.Lock()

    def worker(client):
        while True:
            with lock:
                if not queue:
                    return
                job = queue.pop()
            work(client, job)

    clients = [Client(PORT[0]) for _ in range(threads)]
    started = time.monotonic()
    ts = [threading.Thread(target=worker, args=(c,)) for c in clients]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return len(jobs) / (time.monotonic() - started)


PORT = [0]


def measure(daemon, files, size, threads):
    PORT[0] = daemon.port
    body = os.urandom(size)
    ids, lock = [], threading.Lock()

    def up(client, _):
        r = client.call("POST", "/files", headers={"Content-Type": "application/octet-stream"}, raw_body=body)
        assert r.status == 201, r.raw
        with lock:
            ids.append(r.body["_id"])

    def down(client, file_id):
        r = client.call("GET", f"/files/{file_id}")
        assert r.status == 200 and len(r.raw) == size, r.status

    upload_rate = run(threads, range(files), up)
    get_rate = run(threads, ids, down)
    return upload_rate, get_rate


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--files", type=int, default=200)
    p.add_argument("--size", type=int, default=100 * 1024)
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    print(f"load average before: {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="roost-s3-bench-") as tmp:
        tmp = pathlib.Path(tmp)
        with MotoS3(tmp) as s3, Roostd(tmp / "local", CONFIG) as local, \
                Roostd(tmp / "s3", CONFIG + s3.config(), env=s3.env()) as remote:
            results = {"local": [], "s3": []}
            for _ in range(a.rounds):
                for name, d in (("local", local), ("s3", remote)):
                    results[name].append(measure(d, a.files, a.size, a.threads))
            for op, i in (("upload", 0), ("get", 1)):
                med = {n: statistics.median(r[i] for r in rs) for n, rs in results.items()}
                for n in ("local", "s3"):
                    print(f"BENCH_RESULT files_{op} store={n} size={a.size} threads={a.threads} req_per_s={med[n]:.1f}")
                print(f"  {op}: s3(moto)/local = {med['s3'] / med['local']:.3f}")
    print(f"load average after: {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
