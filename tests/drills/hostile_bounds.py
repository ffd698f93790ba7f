"""The hostile drill's bounds part: long query paths, many keys, huge regexes,
NUL bytes and thumbnail variants stay quick and within memory."""

import json
import multiprocessing
import threading
import time
import urllib.parse

from roost_harness import one_request, png, rss_kib

from .hostile_amplify import bound_feed, bound_live, bound_resolve, bound_smuggle
from .hostile_corpus import _contract
from .hostile_corpus_cases import COLLECTION


# --------------------------------------------------------------------------- bounds

class _Probe:
    """/healthz on a fresh connection every `interval` s, and the daemon's RSS,
    sampled from a separate process (so the drill's own work, under the GIL,
    never delays a probe) while the block runs."""

    def __init__(self, daemon, interval=0.02):
        self.daemon, self.interval = daemon, interval

    @staticmethod
    def _loop(port, pid, interval, stop, first, out):
        latencies, failures, rss_max = [], [], 0
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                r = one_request(port, "GET", "/healthz", timeout=5)
                if r.status != 200:
                    failures.append(f"/healthz answered {r.status}")
            except OSError as e:
                failures.append(f"/healthz: {type(e).__name__}: {e}")
            latencies.append(time.monotonic() - t0)
            first.set()
            rss_max = max(rss_max, rss_kib(pid))
            stop.wait(interval)
        out.send((latencies, failures, rss_max))
        out.close()

    def __enter__(self):
        ctx = multiprocessing.get_context("fork")
        self.rss_before = rss_kib(self.daemon.proc.pid)
        self.stop, first = ctx.Event(), ctx.Event()
        self.receive, send = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=self._loop, daemon=True,
                                args=(self.daemon.port, self.daemon.proc.pid, self.interval, self.stop, first, send))
        self.proc.start()
        # A class that finishes at once still has a probe to judge it by.
        first.wait(10)
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.latencies, self.failures, rss_max = self.receive.recv() if self.receive.poll(30) else ([], ["no probe report"], 0)
        self.proc.join(timeout=10)
        rss_max = max(rss_max, rss_kib(self.daemon.proc.pid))
        self.rss_growth_mib = max(0, rss_max - self.rss_before) / 1024
        return False


class _Tally:
    """One class of the bounds drill: its requests and what went wrong."""

    def __init__(self, daemon, name):
        self.daemon, self.name = daemon, name
        self.requests, self.failures, self.slowest = 0, [], 0.0

    def send(self, label, method, path, body=None, headers=None, allowed=None, timeout=60):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            headers = dict(headers or {}, **{"Content-Type": "application/json"})
        t0 = time.monotonic()
        try:
            reply = one_request(self.daemon.port, method, path, body, headers, timeout=timeout)
        except OSError as e:
            self.requests += 1
            self.failures.append(f"{self.name} {label}: no answer: {type(e).__name__}: {e}")
            return None
        self.slowest = max(self.slowest, time.monotonic() - t0)
        self.requests += 1
        if reply.status >= 500 and reply.status != 503:
            self.failures.append(f"{self.name} {label}: {reply.status} {reply.raw[:120]!r}")
        elif allowed is not None and reply.status not in allowed and reply.status != 503:
            self.failures.append(f"{self.name} {label}: {reply.status} not in {sorted(allowed)}: {reply.raw[:120]!r}")
        self.failures += [f"{self.name} {label}: {reply.status} {p}" for p in _contract(reply)]
        return reply


def _q(collection, flt=None, **params):
    items = ([("query", json.dumps(flt))] if flt is not None else []) + [(k, v) for k, v in params.items()]
    return f"/{collection}?" + urllib.parse.urlencode(items, quote_via=urllib.parse.quote)


def _many_keys(n):
    """A JSON object of `n` distinct short keys (base 36), 9 bytes a member at most."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"

    def key(i):
        out = ""
        while True:
            out = digits[i % 36] + out
            i //= 36
            if not i:
                return out
    return b"{" + b",".join(b'"%s":0' % key(i).encode() for i in range(n)) + b"}"


def _bound_paths(t):
    c = COLLECTION
    deep = 1
    for _ in range(19):
        deep = [{"a": deep}]
    t.send("seed", "POST", f"/{c}", {"_id": "deepPath", "a": deep}, allowed={201, 409})
    for parts in (6, 16, 20, 32, 64, 500):
        dotted = ".".join(["a"] * parts)
        ok = {200} if parts <= 32 else {400}
        t.send(f"filter-{parts}", "GET", _q(c, {dotted: 1}), allowed=ok)
        t.send(f"count-{parts}", "GET", _q(f"{c}/_count", {dotted: {"$gt": 0}}), allowed=ok)
        t.send(f"sort-{parts}", "GET", _q(c, {}, sort=json.dumps({dotted: 1})), allowed=ok)
        t.send(f"exists-{parts}", "GET", _q(c, {dotted: {"$exists": False}}), allowed=ok)
        t.send(f"elemMatch-{parts}", "GET", _q(c, {"a": {"$elemMatch": {dotted: 1}}}), allowed=ok | {400})
        t.send(f"or-{parts}", "GET", _q(c, {"$or": [{dotted: 1}, {dotted + ".b": 2}]}), allowed={200, 400})


def _bound_keys(t, keys):
    c = COLLECTION
    body = _many_keys(keys)
    assert len(body) < 1 << 20, len(body)
    json_type = {"Content-Type": "application/json"}
    r = t.send(f"post-{keys}", "POST", f"/{c}", body, json_type, allowed={201})
    doc_id = (r.json() or {}).get("_id") if r is not None and r.status == 201 else None
    if doc_id:
        t.send(f"get-{keys}", "GET", f"/{c}/{doc_id}", allowed={200})
        t.send(f"patch-{keys}", "PATCH", f"/{c}/{doc_id}", body, json_type, allowed={200})
        t.send(f"html-{keys}", "GET", _q(c, {"_id": doc_id}), headers={"Accept": "text/html"}, allowed={200})
    t.send(f"anonymous-put-user-{keys}", "PUT", "/users/x", body, json_type, allowed={401})
    t.send(f"anonymous-patch-user-{keys}", "PATCH", "/users/x", body, json_type, allowed={401})
    t.send(f"signup-{keys}", "POST", "/users", body, json_type, allowed={400})
    t.send(f"login-{keys}", "POST", "/login", body, json_type, allowed={413})
    t.send("login-1500-keys", "POST", "/login", _many_keys(1500), json_type, allowed={400})
    t.send(f"batch-{keys}", "POST", "/_batch", body, json_type, allowed={400})
    # As many keys as a URL holds under evhttp's 64 KiB header cap (past it, libevent's own 400 page).
    t.send("filter-2000-keys", "GET", _q(c, json.loads(_many_keys(2000))), allowed={200, 400})


def _bound_regex(t):
    c = COLLECTION
    t.send("seed", "POST", f"/{c}", {"_id": "regexHaystack", "s": "a" * 20_000}, allowed={201, 409})
    for label, pattern, ok in (
            ("8000-empty-groups", "()" * 8000, {400}),
            ("500-empty-groups", "()" * 500, {400}),
            ("64-groups", "(a)" * 64, {200}),
            ("65-groups", "(a)" * 65, {400}),
            ("pattern-1025-bytes", "a" * 1025, {400}),
            ("pattern-20k", "b" * 20_000, {400, 414}),
            ("catastrophic-nested", "^(a+)+$", {200, 400}),
            ("catastrophic-alternation", "^(a|aa)+$", {200, 400}),
            ("catastrophic-optional", "^(a?){60}(a|b)*$x", {200, 400}),
            ("heap-recursion", "^(?:(a)|b)*c", {200, 400}),
            ("backrefs", "^(a*)*\\1\\1\\1b", {200, 400}),
            ("lookahead-star", "(?=(a*))*b", {200, 400}),
            ("verb-no-start-opt", "(*NO_START_OPT)(?:.|.)*(?!)", {200, 400}),
            ("unicode-class-blowup", "[\\p{L}\\p{N}]{1,1000}x", {200, 400})):
        t.send(label, "GET", _q(c, {"s": {"$regex": pattern}}), allowed=ok)
        t.send(label + "-count", "GET", _q(f"{c}/_count", {"s": {"$regex": pattern, "$options": "i"}}), allowed=ok)


def _bound_nul(t):
    c = COLLECTION
    doc = {"_id": "nul\u0000id", "s": "x\u0000y", "t": ["\u0000"], "k\u0000ey": 1}
    t.send("post-nul-id", "POST", f"/{c}", doc, allowed={201, 400, 409})
    r = t.send("post", "POST", f"/{c}", {k: v for k, v in doc.items() if k != "_id"}, allowed={201, 400})
    if r is not None and r.status == 201:
        stored = r.json()
        again = t.send("get", "GET", f"/{c}/{urllib.parse.quote(stored['_id'])}", allowed={200})
        if again is not None and again.status == 200 and again.json() != stored:
            t.failures.append(f"{t.name} round trip: stored {stored!r:.120} read back {again.raw[:120]!r}")
    for label, flt in (("regex-group", {"s": {"$regex": "(\u0000)"}}), ("regex-inner", {"s": {"$regex": "x\u0000y"}}),
                       ("equals", {"s": "x\u0000y"}), ("in", {"t": {"$in": ["\u0000"]}}), ("key", {"k\u0000ey": 1}),
                       ("path", {"a\u0000.b": 1}), ("gt", {"s": {"$gt": "\u0000"}}), ("operator", {"$\u0000": 1}),
                       ("regex-options", {"s": {"$regex": "x", "$options": "\u0000"}})):
        t.send(label, "GET", _q(c, flt), allowed={200, 400})
    t.send("sort", "GET", _q(c, {}, sort=json.dumps({"s\u0000": 1})), allowed={200, 400})
    t.send("id-in-url", "GET", f"/{c}/nul%00id", allowed={200, 404})
    t.send("patch-nul", "PATCH", f"/{c}/nul%00id", {"s": "\u0000\u0000"}, allowed={200, 400, 404})


def _bound_variants(t, variants, workers=4):
    up = t.send("upload", "POST", "/files", png(320, 240, 11), {"Content-Type": "image/png"}, allowed={201})
    if up is None or up.status != 201:
        return None
    fid = up.json()["_id"]
    widths = list(range(20, 20 + variants))
    lock = threading.Lock()

    def worker(mine):
        for w in mine:
            t0 = time.monotonic()
            r = one_request(t.daemon.port, "GET", f"/files/{fid}/thumbnail?w={w}", timeout=60)
            with lock:
                t.slowest = max(t.slowest, time.monotonic() - t0)
                t.requests += 1
                if r.status != 200 and r.status != 503:
                    t.failures.append(f"{t.name} w={w}: {r.status} {r.raw[:100]!r}")
                t.failures += [f"{t.name} w={w}: {r.status} {p}" for p in _contract(r)]
    threads = [threading.Thread(target=worker, args=(widths[i::workers],)) for i in range(workers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    t.send("configured-size", "GET", f"/files/{fid}/thumbnail?size=128", allowed={200})
    thumbs = t.daemon.data_dir / "files" / "thumbs" / fid[-2:] / fid  # FileLayout.thumbDirectory
    names = [p.name for p in thumbs.iterdir()] if thumbs.is_dir() else []
    one_off = [n for n in names if n.split(".")[0] not in ("128", "512")]
    if not names:
        t.failures.append(f"{t.name}: no thumbnails found under {thumbs}")
    if len(one_off) > 16:
        t.failures.append(f"{t.name}: {len(one_off)} one-off variants stored for one file (at most 16)")
    return len(one_off)


def run_bounds(daemon, keys=85_000, variants=200, log=print):
    """Resource bounds from the hostile review (issue #14): long query paths,
    objects with many keys, regex heap and backtracking, NUL bytes, oversized
    thumbnail variants; and issue #33's amplification (`hostile_amplify`).
    Each class runs under a /healthz probe and an RSS watch."""
    classes = [("paths", _bound_paths), ("keys", lambda t: _bound_keys(t, keys)), ("regex", _bound_regex),
               ("nul", _bound_nul), ("variants", lambda t: _bound_variants(t, variants)),
               ("resolve", bound_resolve), ("feed", bound_feed), ("live", bound_live), ("smuggle", bound_smuggle)]
    results, failures, stored_variants = [], [], None
    for name, run in classes:
        if not daemon.alive():
            failures.append(f"{name}: the daemon is gone")
            continue
        tally = _Tally(daemon, name)
        with _Probe(daemon) as probe:
            outcome = run(tally)
        if name == "variants":
            stored_variants = outcome
        worst = max(probe.latencies) * 1000 if probe.latencies else float("nan")
        failures += tally.failures + [f"{name}: {f}" for f in probe.failures[:5]]
        if not probe.latencies or worst >= 100:
            failures.append(f"{name}: slowest /healthz probe {worst:.1f} ms (must stay under 100 ms)")
        if probe.rss_growth_mib >= 200:
            failures.append(f"{name}: RSS grew {probe.rss_growth_mib:.0f} MiB (must stay under 200 MiB)")
        results.append({"name": name, "requests": tally.requests, "probes": len(probe.latencies), "probe_max_ms": worst,
                        "rss_mib": probe.rss_growth_mib, "slowest_s": tally.slowest, "failures": len(tally.failures)})
        log(f"  bounds {name}: {tally.requests} requests, {len(tally.failures)} failures, slowest {tally.slowest:.2f} s, "
            f"{len(probe.latencies)} probes (max {worst:.1f} ms), RSS +{probe.rss_growth_mib:.0f} MiB")
    crashed = not daemon.alive() or not daemon.healthy(timeout=5)
    total = sum(r["requests"] for r in results)
    per_class = ", ".join(f"{r['name']} {r['requests']}" for r in results)
    probes = sum(r["probes"] for r in results)
    worst = max((r["probe_max_ms"] for r in results), default=float("nan"))
    rss = max((r["rss_mib"] for r in results), default=0)
    slowest = max((r["slowest_s"] for r in results), default=0)
    line = (f"hostile bounds ({keys} keys, {variants} thumbnail widths): {total} requests ({per_class}), "
            f"{len(failures) + int(crashed)} failures ({'a crash' if crashed else 'no crash'}), "
            f"{stored_variants} one-off variants stored for the file, slowest request {slowest:.2f} s, "
            f"RSS growth at most {rss:.0f} MiB, {probes} /healthz probes: max {worst:.1f} ms; 0 lost")
    return {"line": line, "requests": total, "classes": results, "failures": failures, "crashed": crashed,
            "stored_variants": stored_variants}
