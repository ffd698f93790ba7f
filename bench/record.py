#!/usr/bin/env python3
"""Turns bench/run.sh's meta.txt and results.tsv into one JSON record and appends it
to bench/results/main.jsonl (bench/report.py renders it).

  record.py META RESULTS [--out bench/results/main.jsonl]

results.tsv columns: workload, server, connections, rps, p50_us, p99_us, requests,
status_errors, socket_errors, timeouts, ok, s503, round (a workload run in several
rounds keeps its best round, the others in `rounds`; rps "skipped" when a run did not
fit the time budget; ok and s503 only for the log-in runs, whose rps is then successful
log-ins per second; a 503 is a status error, never a timeout). A roostd row's `ratio` is
its req/s over the better PocketBase setting for the same workload and concurrency.
`targets` checks the targets of issue 7, all from this run's figures.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchstats as B  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
GEO_TARGET_MS = 5.0
RSS_TARGET_MIB = 64.0

# figure ids (bench/report.py's TARGETS) of the ratio workloads, by workload prefix
FIGURE_IDS = {"a.": "run.get", "b.": "run.list", "c.": "run.create", "g.": "run.upload", "h.": "run.thumbs",
              "i.": "run.original", "j.": "run.thumb"}
# workload prefix -> (label, target text, minimum ratio roostd / best PocketBase)
RATIO_TARGETS = [
    ("a.", "GET one entity by id", "≥ 3× PocketBase", 3.0),
    ("b.", "list, filter, 50 per page, total count, 100k entities", "≥ 5× PocketBase", 5.0),
    ("c.", "create, acknowledged when it survives kill -9", "≥ 3× PocketBase", 3.0),
    ("g.", "upload a 200 KB JPEG, acknowledged when durable", "≥ 1.5× PocketBase", 1.5),
    ("h.", "thumbnails produced per second from fresh uploads", "≥ 2× PocketBase's first-fetch ?thumb= rate", 2.0),
    ("i.", "serve an original 200 KB file", "≥ 3× PocketBase", 3.0),
    ("j.", "serve a ready thumbnail", "≥ 3× PocketBase", 3.0),
]
# roostd-only rows compared with another workload's PocketBase figure (the same request, more work in roostd).
COMPARED_WITH = {"c. create, + location R*Tree (roostd)": "c. create"}


def verdict(ok):
    return "met" if ok else "missed"


def read_rows(results_path):
    """Best round per (workload, server, conns), in the order run.sh wrote them, grouped by workload letter."""
    rows, by_key = [], {}
    for line in open(results_path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 9:
            continue
        f += [""] * (13 - len(f))
        rps = float(f[3]) if f[3] not in ("", "skipped") else None
        r = {"workload": f[0], "server": f[1], "conns": int(f[2]), "rps": rps}
        if rps is not None:
            r.update(p50_ms=int(f[4]) / 1000, p99_ms=int(f[5]) / 1000, requests=int(f[6] or 0),
                     errors=int(f[7] or 0) + int(f[8] or 0), timeouts=int(f[9] or 0), s503=int(f[11] or 0))
        key = (f[0], f[1], f[2])
        kept = by_key.get(key)
        if kept is None:
            r["rounds"] = [rps]
            by_key[key] = r
            rows.append(r)
            continue
        kept["rounds"].append(rps)
        if rps is not None and (kept["rps"] is None or rps > kept["rps"]):
            r["rounds"] = kept["rounds"]
            rows[rows.index(kept)] = by_key[key] = r
    for r in rows:
        if len(r["rounds"]) == 1:
            del r["rounds"]
    first = {}
    for i, r in enumerate(rows):
        first.setdefault(r["workload"], i)
    rows.sort(key=lambda r: (r["workload"][:2], first[r["workload"]]))
    return rows


def add_ratios(rows):
    best = {}
    for r in rows:
        if r["server"].startswith("PocketBase") and r["rps"] is not None:
            key = (r["workload"], r["conns"])
            if key not in best or r["rps"] > best[key]["rps"]:
                best[key] = r
    for r in rows:
        b = best.get((COMPARED_WITH.get(r["workload"], r["workload"]), r["conns"]))
        if r["server"] == "roostd" and r["rps"] is not None and b and b["rps"] > 0:
            r["ratio"], r["ratio_vs"] = round(r["rps"] / b["rps"], 2), b["server"]
    return best


def targets(rows, best, meta):
    def find(name, server="roostd"):
        return next((r for r in rows if (r["workload"] == name or (len(name) == 2 and r["workload"].startswith(name)))
                     and r["server"] == server and r["rps"] is not None), None)

    t = []
    add = lambda w, target, measured, v: t.append({"workload": w, "target": target, "measured": measured, "verdict": v})  # noqa: E731
    for prefix, label, target, minimum in RATIO_TARGETS:
        r = find(prefix)
        b = r and best.get((r["workload"], r["conns"]))
        if not b:
            add(label, target, "not measured", "—")
            continue
        x = r["rps"] / b["rps"]
        add(label, target, "%.2f× (%.0f vs %.0f/s)" % (x, r["rps"], b["rps"]), verdict(x >= minimum))
        if prefix == "a.":
            h = next((h for h in rows if h["server"].startswith("hello") and h["conns"] == r["conns"] and h["rps"]), None)
            if h:
                x = r["rps"] / h["rps"]
                add(label, "≥ 50% of the libevent hello ceiling", "%.0f%% (%.0f vs %.0f/s)" % (100 * x, r["rps"], h["rps"]),
                    verdict(x >= 0.5))
    for name, label in (("e.", "log-in at the configured Argon2id cost"), ("f. log-ins beside the get", "log-in, beside the GET load of f.")):
        r = find(name)
        if r:
            add(label, "no request times out (wrk --timeout 10s)",
                "%d timeouts, %d × 503 + Retry-After in %d requests; p99 %.2f ms, %.1f log-ins/s" % (
                    r["timeouts"], r["s503"], r["requests"], r["p99_ms"], r["rps"]), verdict(r["timeouts"] == 0))
    alone, loaded = find("f. get by id, alone"), find("f. get by id, with log-ins")
    if alone and loaded and alone["rps"] > 0:
        x = loaded["rps"] / alone["rps"]
        add("GET by id while log-ins saturate the hash pool", "≥ 80% of its unloaded rate",
            "%.0f%% (%.0f vs %.0f/s alone)" % (100 * x, loaded["rps"], alone["rps"]), verdict(x >= 0.8))
    for r in rows:
        if r["server"] == "roostd" and r["workload"].startswith("d.") and r["rps"] is not None:
            add("geo $box over 100k points, %d connection%s" % (r["conns"], "" if r["conns"] == 1 else "s"),
                "p99 < %.0f ms" % GEO_TARGET_MS, "p99 %.2f ms (%.0f/s)" % (r["p99_ms"], r["rps"]),
                verdict(r["p99_ms"] < GEO_TARGET_MS))
    try:
        hwm = float(meta.get("roost_hwm"))
        add("roostd peak RSS over the run (VmHWM)", "≤ %.0f MiB" % RSS_TARGET_MIB,
            "%.1f MiB (PocketBase %s MiB)" % (hwm, meta.get("pb_hwm")), verdict(hwm <= RSS_TARGET_MIB))
    except (TypeError, ValueError):
        pass
    return t


def figures_of(rec):
    """The run's figures (benchstats.figure) from its rows and targets; also reads records written before figures."""
    rows, out = rec["rows"], []

    def row(name, server="roostd", conns=None):
        return next((r for r in rows if r["workload"].startswith(name) and r["server"].startswith(server)
                     and r["rps"] is not None and conns in (None, r["conns"])), None)
    for prefix, _, target, _ in RATIO_TARGETS:
        r = next((r for r in rows if r["workload"].startswith(prefix) and r["server"] == "roostd" and "ratio" in r
                  and r["workload"] not in COMPARED_WITH), None)
        if r:
            peer = row(r["workload"], r["ratio_vs"], r["conns"])
            out.append(B.figure(FIGURE_IDS[prefix], r["rps"], "req/s", target, r["ratio_vs"], peer and peer["rps"], r["ratio"]))
        if prefix == "a." and r:
            h = row("a.", "hello", r["conns"])
            if h:
                out.append(B.figure("run.get_hello", r["rps"], "req/s", "≥ 50% of the libevent hello ceiling",
                                    h["server"], h["rps"], round(r["rps"] / h["rps"], 3)))
    for fid, name in (("run.login", "e."), ("run.login_beside_get", "f. log-ins beside the get")):
        r = row(name)
        if r:
            out.append(B.figure(fid, r.get("timeouts", 0), "timeouts", "no request times out", note=(
                "%d × 503 + Retry-After%s; p99 %.0f ms; %.1f log-ins/s" % (r.get("s503", 0), " in %d requests" % r["requests"]
                                                                          if r.get("requests") else "", r["p99_ms"], r["rps"]))))
    alone, loaded = row("f. get by id, alone"), row("f. get by id, with log-ins")
    if alone and loaded:
        out.append(B.figure("run.get_beside_logins", loaded["rps"], "req/s", "≥ 80% of its unloaded rate",
                            "the same GET alone", alone["rps"], round(loaded["rps"] / alone["rps"], 3)))
    for conns in (50, 1):
        r = row("d.", conns=conns)
        if r:
            out.append(B.figure("run.geo_p99_%d" % conns, r["p99_ms"], "ms p99", "p99 < %.0f ms" % GEO_TARGET_MS,
                                note="%.0f req/s, %d connection%s" % (r["rps"], conns, "" if conns == 1 else "s")))
    t = next((t for t in rec.get("targets", []) if t["workload"].startswith("roostd peak RSS")), None)
    m = t and re.match(r"([0-9.]+) MiB(?: \(PocketBase ([0-9.]+) MiB\))?", t["measured"])
    if m:
        out.append(B.figure("run.peak_rss", float(m.group(1)), "MiB", "≤ 64 MB", "PocketBase",
                            float(m.group(2)) if m.group(2) else None, note="VmHWM over the whole run"))
    return out


def record(meta_path, results_path):
    meta, notes = {}, []
    for line in open(meta_path):
        key, _, value = line.rstrip("\n").partition("=")
        (notes.append(value) if key == "note" else meta.__setitem__(key, value))
    rows = read_rows(results_path)
    best = add_ratios(rows)
    date = re.sub(r"(\d{4}-\d\d-\d\d) (\d\d:\d\d) UTC", r"\1T\2Z", meta.get("date", ""))
    commit = re.search(r"\(([0-9a-f]{7,})", meta.get("roostd", ""))
    rec = {
        "bench": "run.sh", "date": date, "commit": commit.group(1) if commit else None,
        "machine": "%s cores, %s, %s RAM, Linux %s" % (meta.get("nproc"), meta.get("cpu"), meta.get("mem"), meta.get("kernel")),
        "versions": "roostd %s, %s; PocketBase %s; libevent %s; SQLite %s (roostd); wrk %s" % (
            meta.get("roostd"), meta.get("swift"), meta.get("pocketbase", "").replace("pocketbase version ", ""),
            meta.get("libevent"), meta.get("sqlite"), meta.get("wrk")),
        "load": "%s; machine load average before: %s" % (meta.get("load"), meta.get("loadavg")),
        "data": meta.get("seed"), "files": meta.get("image"),
        "load_before": meta.get("loadavg"), "load_after": B.loadavg(),
        "rows": rows, "targets": targets(rows, best, meta), "notes": notes,
    }
    rec["figures"] = figures_of(rec)
    return rec


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("meta")
    ap.add_argument("results")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "main.jsonl"))
    a = ap.parse_args()
    with open(a.out, "a") as f:
        f.write(json.dumps(record(a.meta, a.results), ensure_ascii=False) + "\n")
