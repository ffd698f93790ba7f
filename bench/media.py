#!/usr/bin/env python3
"""Files and accounts for bench/run.sh: preparation, and the thumbnail-rate measurement.

  media.py upload  roost|pb URL JPEG N IDS_OUT [--threads T] [--token TOK] [--ready]
      Uploads N copies of JPEG and writes one id a line (roostd: the file _id;
      PocketBase: "<record id>/<stored filename>"). --ready then makes every
      128px (roostd) / 100x100 (PocketBase) thumbnail ready: roostd by polling
      /files/:id/meta, PocketBase by fetching ?thumb=100x100 once.
  media.py thumbs  roost|pb URL JPEG N [--threads T] [--deadline S]
      The thumbnail rate from fresh uploads; prints one BENCH_RESULT line.
      roostd: the clock starts before the first of N uploads (T at a time) and
      stops at the latest 128px thumbnail's "madeAt" stamp (read from /meta,
      polled every 0.25 s so the poller does not take CPU from the thumbnail
      pool); rate = N / time, so it includes the uploads' own work.
      Latency = upload start -> thumbnail made.
      PocketBase: N fresh uploads first (not timed), then each ?thumb=100x100
      fetched once, T at a time (its first fetch makes the thumb); rate = N / time.
  media.py users   roost|pb URL K [--token TOK]
      Creates accounts bench0..bench<K-1> (PocketBase: bench<k>@example.com).
  media.py backlog DBPATH
      Prints how many thumbnail jobs roostd still has queued (_file_jobs).

PocketBase's collection is "photos" with a file field "image" (run.sh makes it).
Exit status 0 on success, 1 on any failure (with a message on stderr).
"""
import argparse
import datetime
import http.client
import json
import sqlite3
import sys
import threading
import time
import urllib.parse

PASSWORD = "bench-password-123"
PB_COLLECTION = "photos"
BOUNDARY = "----roostbenchboundary7f3a9c"


def connect(url):
    u = urllib.parse.urlparse(url)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=60)


def multipart(jpeg, field="image", filename="bench.jpg"):
    head = ("--%s\r\nContent-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\n"
            "Content-Type: image/jpeg\r\n\r\n" % (BOUNDARY, field, filename)).encode()
    return head + jpeg + ("\r\n--%s--\r\n" % BOUNDARY).encode()


class Client(threading.local):
    """One keep-alive connection per thread."""

    def __init__(self, url):
        self.url = url
        self.conn = None

    def request(self, method, path, body=None, headers=None):
        for attempt in range(3):
            if self.conn is None:
                self.conn = connect(self.url)
            try:
                self.conn.request(method, path, body, headers or {})
                resp = self.conn.getresponse()
                data = resp.read()
                if resp.getheader("Connection", "").lower() == "close":
                    self.conn.close(); self.conn = None
                return resp.status, data
            except (OSError, http.client.HTTPException):
                self.conn.close(); self.conn = None
                if attempt == 2:
                    raise
                time.sleep(0.05)


def parallel(items, threads, fn):
    """Runs fn(item) for every item on `threads` threads; returns the results in order."""
    results = [None] * len(items)
    errors = []
    lock = threading.Lock()
    nxt = [0]

    def worker():
        while True:
            with lock:
                if errors or nxt[0] >= len(items):
                    return
                i = nxt[0]; nxt[0] += 1
            try:
                results[i] = fn(items[i])
            except Exception as e:  # noqa: BLE001 - reported once, stops all
                with lock:
                    errors.append("%s: %s" % (items[i], e))
                return
    ts = [threading.Thread(target=worker, daemon=True) for _ in range(max(1, min(threads, len(items))))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise RuntimeError(errors[0])
    return results


def upload_one(kind, client, jpeg, token=""):
    if kind == "roost":
        status, body = client.request("POST", "/files", jpeg, {"Content-Type": "image/jpeg"})
        if status != 201:
            raise RuntimeError("POST /files: HTTP %d %s" % (status, body[:200]))
        return json.loads(body)["_id"]
    headers = {"Content-Type": "multipart/form-data; boundary=" + BOUNDARY}
    if token:
        headers["Authorization"] = token
    status, body = client.request("POST", "/api/collections/%s/records" % PB_COLLECTION, multipart(jpeg), headers)
    if status != 200:
        raise RuntimeError("PocketBase upload: HTTP %d %s" % (status, body[:200]))
    rec = json.loads(body)
    return "%s/%s" % (rec["id"], rec["image"])


def roost_ready(client, fid, size="128"):
    status, body = client.request("GET", "/files/%s/meta" % fid)
    if status != 200:
        raise RuntimeError("GET /files/%s/meta: HTTP %d %s" % (fid, status, body[:200]))
    state = json.loads(body).get("thumbnails", {}).get(size, {}).get("state")
    if state == "failed":
        raise RuntimeError("thumbnail %s of %s failed: %s" % (size, fid, body[:300]))
    return state == "ready"


def roost_made_at(client, fid, size="128"):
    """When roostd made the thumbnail (epoch seconds, from its "madeAt"), or None if not yet."""
    status, body = client.request("GET", "/files/%s/meta" % fid)
    if status != 200:
        raise RuntimeError("GET /files/%s/meta: HTTP %d %s" % (fid, status, body[:200]))
    t = json.loads(body).get("thumbnails", {}).get(size, {})
    if t.get("state") == "failed":
        raise RuntimeError("thumbnail %s of %s failed: %s" % (size, fid, body[:300]))
    if t.get("state") != "ready":
        return None
    return datetime.datetime.strptime(t["madeAt"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()


def pb_thumb(client, rid_file):
    status, body = client.request("GET", "/api/files/%s/%s?thumb=100x100" % (PB_COLLECTION, rid_file))
    if status != 200:
        raise RuntimeError("PocketBase thumb %s: HTTP %d" % (rid_file, status))
    if len(body) > 60000:
        raise RuntimeError("PocketBase returned %d bytes for ?thumb=100x100: not a thumbnail" % len(body))
    return len(body)


def percentile(values, p):
    if not values:
        return 0
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]


def result_line(n, seconds, latencies_s, failures=0, extra=""):
    lat = [x * 1e6 for x in latencies_s]
    return ("BENCH_RESULT requests=%d duration_us=%d rps=%.1f p50_us=%d p90_us=%d p99_us=%d max_us=%d "
            "status_errors=%d socket_errors=0 timeouts=0%s" % (
                n, seconds * 1e6, n / seconds, percentile(lat, 50), percentile(lat, 90), percentile(lat, 99),
                max(lat) if lat else 0, failures, extra))


def cmd_upload(a, jpeg):
    client = Client(a.url)
    ids = parallel(list(range(a.n)), a.threads, lambda _: upload_one(a.kind, client, jpeg, a.token))
    if a.ready:
        deadline = time.monotonic() + a.deadline
        if a.kind == "roost":
            pending = list(ids)
            while pending:
                if time.monotonic() > deadline:
                    raise RuntimeError("%d thumbnails not ready after %ss" % (len(pending), a.deadline))
                pending = [i for i in pending if not roost_ready(client, i)]
                if pending:
                    time.sleep(0.1)
        else:
            parallel(ids, a.threads, lambda i: pb_thumb(client, i))
    with open(a.ids_out, "w") as f:
        f.write("\n".join(ids) + "\n")
    print("uploaded=%d" % len(ids))


def cmd_thumbs(a, jpeg):
    client = Client(a.url)
    if a.kind == "roost":
        started = {}
        lock = threading.Lock()

        def up(k):
            t = time.monotonic()
            fid = upload_one("roost", client, jpeg)
            with lock:
                started[fid] = t
            return fid
        # Wall clock: the server stamps each thumbnail's "madeAt" (same machine).
        wall0, t0 = time.time(), time.monotonic()
        ids = parallel(list(range(a.n)), a.threads, up)
        uploaded = time.monotonic() - t0
        ready_at = {}
        deadline = t0 + a.deadline
        pending = list(ids)
        # Poll gently (a sweep every 0.25 s): a tight poll loop would compete
        # for the CPU with the thumbnail pool, which runs at a lower priority.
        while pending:
            if time.monotonic() > deadline:
                print("thumbs: %d of %d thumbnails not ready after %ss" % (len(pending), a.n, a.deadline), file=sys.stderr)
                return 1
            time.sleep(0.25)
            still = []
            for i in pending:
                made = roost_made_at(client, i)
                if made is None:
                    still.append(i)
                else:
                    ready_at[i] = made - wall0
            pending = still
        seconds = max(ready_at.values())
        lat = [ready_at[i] - (started[i] - t0) for i in ids]
        print(result_line(a.n, seconds, lat, extra=" uploads_s=%.2f" % uploaded))
        return 0
    ids = parallel(list(range(a.n)), a.threads, lambda _: upload_one("pb", client, jpeg, a.token))
    lat = []
    lock = threading.Lock()

    def fetch(i):
        t = time.monotonic()
        pb_thumb(client, i)
        with lock:
            lat.append(time.monotonic() - t)
    t0 = time.monotonic()
    parallel(ids, a.threads, fetch)
    seconds = time.monotonic() - t0
    print(result_line(a.n, seconds, lat))
    return 0


def cmd_users(a):
    client = Client(a.url)
    for k in range(a.k):
        if a.kind == "roost":
            body = json.dumps({"username": "bench%d" % k, "password": PASSWORD})
            status, data = client.request("POST", "/users", body, {"Content-Type": "application/json"})
            ok = status == 201
        else:
            body = json.dumps({"email": "bench%d@example.com" % k, "password": PASSWORD,
                               "passwordConfirm": PASSWORD, "verified": True})
            headers = {"Content-Type": "application/json"}
            if a.token:
                headers["Authorization"] = a.token
            status, data = client.request("POST", "/api/collections/users/records", body, headers)
            ok = status == 200
        if not ok:
            print("users: account %d: HTTP %d %s" % (k, status, data[:200]), file=sys.stderr)
            return 1
    print("users=%d" % a.k)
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cmd", choices=["upload", "thumbs", "users", "backlog"])
    p.add_argument("rest", nargs="*")
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--token", default="")
    p.add_argument("--ready", action="store_true")
    p.add_argument("--deadline", type=float, default=120)
    a = p.parse_args()
    try:
        if a.cmd == "backlog":
            db = sqlite3.connect("file:%s?mode=ro" % a.rest[0], uri=True, timeout=10)
            print(db.execute("SELECT count(*) FROM _file_jobs").fetchone()[0])
            return 0
        a.kind, a.url = a.rest[0], a.rest[1]
        if a.kind not in ("roost", "pb"):
            p.error("kind must be roost or pb")
        if a.cmd == "users":
            a.k = int(a.rest[2])
            return cmd_users(a)
        jpeg = open(a.rest[2], "rb").read()
        a.n = int(a.rest[3])
        if a.cmd == "upload":
            a.ids_out = a.rest[4]
            cmd_upload(a, jpeg)
            return 0
        return cmd_thumbs(a, jpeg)
    except Exception as e:  # noqa: BLE001
        print("media.py %s: %s" % (a.cmd, e), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
