#!/usr/bin/env python3
"""Uploads and downloads of originals: the local file store vs files_store: s3
on moto_server, in the same run, interleaved round by round.

  .venv/bin/python bench/s3_files.py [--files 200] [--size 102400] [--threads 4] [--rounds 3] [--no-record]

roostd is $ROOSTD, else the release build. Needs the test venv (moto_server, boto3).

Both daemons and moto run on 127.0.0.1 (bounded loops). moto is a single
Python process: the S3 figures measure roostd plus moto's speed, not what
a real object store does; only the ratio within one run means anything.
Prints one BENCH_RESULT line per operation and store, and the ratios; the run's
record (figures s3.upload, s3.get) goes to bench/results/s3_files.jsonl."""
import argparse
import os
import pathlib
import statistics
import sys
import tempfile
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))
os.environ.setdefault("ROOSTD", str(HERE.parent / ".build" / "release" / "roostd"))
import benchlib as B  # noqa: E402
import figures  # noqa: E402
from roost_harness import Client, Roostd, binary  # noqa: E402
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
    p.add_argument("--no-record", dest="record", action="store_false", help="do not append to bench/results/s3_files.jsonl")
    a = p.parse_args()
    load = B.loadavg()
    print(f"load average before: {load}", flush=True)
    with tempfile.TemporaryDirectory(prefix="roost-s3-bench-") as tmp:
        tmp = pathlib.Path(tmp)
        with MotoS3(tmp) as s3, Roostd(tmp / "local", CONFIG) as local, \
                Roostd(tmp / "s3", CONFIG + s3.config(), env=s3.env()) as remote:
            results = {"local": [], "s3": []}
            for _ in range(a.rounds):
                for name, d in (("local", local), ("s3", remote)):
                    results[name].append(measure(d, a.files, a.size, a.threads))
    build = "debug build" if "debug" in str(binary()) else "release build"
    metrics = {n: {"upload_rps": statistics.median(r[0] for r in rs), "get_rps": statistics.median(r[1] for r in rs)}
               for n, rs in results.items()}
    metrics.update(files=a.files, size=a.size, threads=a.threads, rounds=a.rounds, build=build)
    lines = []
    for op in ("upload", "get"):
        for n in ("local", "s3"):
            print(f"BENCH_RESULT files_{op} store={n} size={a.size} threads={a.threads} req_per_s={metrics[n][op + '_rps']:.1f}")
        lines.append(f"| {op} | {metrics['local'][op + '_rps']:.0f} | {metrics['s3'][op + '_rps']:.0f} | "
                     f"{metrics['s3'][op + '_rps'] / metrics['local'][op + '_rps']:.3f} |")
    text = "\n".join([f"`bench/s3_files.py`, {build}, {a.files} files of {a.size} bytes, {a.threads} threads, "
                      f"median of {a.rounds} interleaved rounds; the bucket is moto_server on the same cores.", "",
                      "| operation | local req/s | S3 (moto) req/s | S3 / local |", "|---|---|---|---|"] + lines)
    print(text)
    print(f"load average after: {B.loadavg()}", flush=True)
    if a.record:
        B.record("s3_files", metrics, [], text, figures.s3_files(metrics), load)


if __name__ == "__main__":
    main()
