#!/usr/bin/env python3
"""Seeds roostd and PocketBase with the same N entities and writes their ids.

  seed.py roost URL COLLECTION N IDS_OUT [--threads T] [--deadline SECONDS]
  seed.py pb    URL COLLECTION N IDS_OUT [--token TOKEN] [--batch B] [--threads T] [--deadline SECONDS]

Entity i is the same on both servers (deterministic from i):
  {"category": "c<i % 100>", "n": i, "name": "item <i>", "location": [lng, lat]}
with lng in [-10, 10) and lat in [40, 60). roostd gets concurrent POSTs on
keep-alive connections; PocketBase gets /api/batch requests (batch API enabled
by run.sh). Stops at the deadline and says how many it seeded; exits non-zero
if any request failed or fewer than N were seeded. Prints "seeded=K seconds=S".
"""
import argparse
import http.client
import json
import random
import sys
import threading
import time
import urllib.parse

CATEGORIES = 100


def entity(i):
    r = random.Random(i * 7919 + 17)
    return {
        "category": "c%d" % (i % CATEGORIES),
        "n": i,
        "name": "item %d" % i,
        "location": [round(r.uniform(-10, 10), 6), round(r.uniform(40, 60), 6)],
    }


def connect(url):
    u = urllib.parse.urlparse(url)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=60)


class Seeder:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.next = 0
        self.ids = [None] * args.n
        self.failures = []
        self.retries = 0
        self.deadline = time.monotonic() + args.deadline

    def take(self, size):
        with self.lock:
            if self.failures or time.monotonic() > self.deadline or self.next >= self.args.n:
                return None
            start = self.next
            self.next = min(self.args.n, start + size)
            return range(start, self.next)

    def fail(self, message):
        with self.lock:
            self.failures.append(message)

    def post(self, conn, path, body, headers):
        """POST on a keep-alive connection; a connection the server closed or
        reset is reopened and the request sent again, up to 3 times."""
        for attempt in range(4):
            try:
                conn.request("POST", path, body, headers)
                resp = conn.getresponse()
                return conn, resp, resp.read()
            except (OSError, http.client.HTTPException) as e:
                conn.close()
                if attempt == 3:
                    raise
                with self.lock:
                    self.retries += 1
                    if self.retries <= 3:
                        print("seed %s: %s %s: %s; reconnecting" % (self.args.kind, "POST", path, e), file=sys.stderr)
                time.sleep(0.05 * (attempt + 1))
                conn = connect(self.args.url)

    def roost_worker(self):
        conn = connect(self.args.url)
        path = "/%s" % self.args.collection
        headers = {"Content-Type": "application/json"}
        while (chunk := self.take(64)) is not None:
            for i in chunk:
                try:
                    conn, resp, body = self.post(conn, path, json.dumps(entity(i)), headers)
                except (OSError, http.client.HTTPException) as e:
                    self.fail("POST %s: %s" % (path, e)); return
                if resp.status != 201:
                    self.fail("POST %s: HTTP %d %s" % (path, resp.status, body[:200])); return
                self.ids[i] = json.loads(body)["_id"]

    def pb_worker(self):
        conn = connect(self.args.url)
        headers = {"Content-Type": "application/json"}
        if self.args.token:
            headers["Authorization"] = self.args.token
        url = "/api/collections/%s/records" % self.args.collection
        while (chunk := self.take(self.args.batch)) is not None:
            requests = [{"method": "POST", "url": url, "body": entity(i)} for i in chunk]
            try:
                conn, resp, body = self.post(conn, "/api/batch", json.dumps({"requests": requests}), headers)
            except (OSError, http.client.HTTPException) as e:
                self.fail("POST /api/batch: %s" % e); return
            if resp.status != 200:
                self.fail("POST /api/batch: HTTP %d %s" % (resp.status, body[:300])); return
            results = json.loads(body)
            for i, r in zip(chunk, results):
                if r.get("status") != 200:
                    self.fail("batch item %d: %s" % (i, r)); return
                self.ids[i] = r["body"]["id"]

    def run(self):
        target = self.roost_worker if self.args.kind == "roost" else self.pb_worker
        started = time.monotonic()
        threads = [threading.Thread(target=target, daemon=True) for _ in range(self.args.threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seconds = time.monotonic() - started
        ids = [x for x in self.ids if x is not None]
        with open(self.args.ids_out, "w") as f:
            f.write("\n".join(ids) + "\n")
        print("seeded=%d seconds=%.1f retries=%d" % (len(ids), seconds, self.retries))
        if self.failures:
            print("seed %s failed: %s" % (self.args.kind, self.failures[0]), file=sys.stderr)
            return 1
        if len(ids) < self.args.n:
            print("seed %s: deadline reached after %d of %d" % (self.args.kind, len(ids), self.args.n), file=sys.stderr)
            return 3
        return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("kind", choices=["roost", "pb"])
    p.add_argument("url")
    p.add_argument("collection")
    p.add_argument("n", type=int)
    p.add_argument("ids_out")
    p.add_argument("--token", default="")
    p.add_argument("--batch", type=int, default=500)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--deadline", type=float, default=180)
    return Seeder(p.parse_args()).run()


if __name__ == "__main__":
    sys.exit(main())
