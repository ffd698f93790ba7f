#!/usr/bin/env python3
"""GET by id p99 beside a /_batch flood (docs/PUSH.md, Measured): GET /items/<id> at 500/s, one at a
time (bench/httpseq.c), for 6 s idle, then for 8 s while one client sends /_batch requests of 100
creates back to back. Prints both p99s and the batches sent; records nothing.

  bench/batch_get.py [--roostd .build/release/roostd]
"""
import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.dont_write_bytecode = True
HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests"), str(HERE.parent / "tests" / "python")]
import benchlib as B  # noqa: E402
from roost_harness import Roostd  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--roostd", default=str(HERE.parent / ".build/release/roostd"))
    a = ap.parse_args()
    os.environ["ROOSTD"] = a.roostd
    d = Roostd(tempfile.mkdtemp(), config="default_permission: public\nrate_limits: off\n").start()
    try:
        ids = Path(tempfile.mkdtemp()) / "ids"
        ids.write_text(d.call("POST", "/items", {"name": "x"}).body["_id"] + "\n")
        seq = B.build_httpseq()
        idle = B.httpseq(seq, d.port, "get", "/items", ids, 500, 6, 1)
        stop, batches = threading.Event(), [0]

        def flood():
            api = d.api()
            ops = [{"method": "POST", "path": "/items", "body": {"name": "y", "i": i}} for i in range(100)]
            while not stop.is_set():
                assert api.call("POST", "/_batch", {"operations": ops}).status == 200
                batches[0] += 1

        t = threading.Thread(target=flood)
        t.start()
        time.sleep(0.5)
        busy = B.httpseq(seq, d.port, "get", "/items", ids, 500, 8, 1)
        stop.set()
        t.join()
        print(f"GET p99 idle {idle['p99_us']:.0f} us, beside the batches {busy['p99_us']:.0f} us "
              f"({busy['p99_us'] / idle['p99_us']:.2f}x); {batches[0]} batches of 100")
    finally:
        d.stop()


if __name__ == "__main__":
    main()
