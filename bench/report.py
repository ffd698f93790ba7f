#!/usr/bin/env python3
"""Turns bench/run.sh's meta.txt and results.tsv into the Markdown run report.

  report.py META RESULTS > report.md

results.tsv columns: workload, server, connections, rps, p50_us, p99_us,
requests, status_errors, socket_errors, timeouts, ok, s503, round (a workload run
in several rounds shows its best round, the others beside it; rps "skipped" when a
run did not fit the time budget; ok and s503 only for the log-in runs, whose rps is
then successful log-ins per second; a 503 is a status error, never a timeout). The ratio column is roostd's req/s over the better of
the two PocketBase settings for the same workload and concurrency. A second
table checks the targets of issue 7, all from this run's figures.
"""
import sys

GEO_TARGET_MS = 5.0
RSS_TARGET_MIB = 64.0

# workload prefix -> (target text, minimum ratio roostd / best PocketBase)
RATIO_TARGETS = {
    "a.": ("≥ 3× PocketBase", 3.0),
    "b.": ("≥ 5× PocketBase", 5.0),
    "c.": ("≥ 3× PocketBase", 3.0),
    "g.": ("≥ 1.5× PocketBase", 1.5),
    "h.": ("≥ 2× PocketBase's first-fetch ?thumb= rate", 2.0),
    "i.": ("≥ 3× PocketBase", 3.0),
    "j.": ("≥ 3× PocketBase", 3.0),
}


# roostd-only rows compared with another workload's PocketBase figure: the same
# request, where roostd does more work (PocketBase has no spatial index to keep).
COMPARED_WITH = {"c. create, + location R*Tree (roostd)": "c. create"}


def ms(us):
    return "%.2f" % (int(us) / 1000.0)


def verdict(ok):
    return "met" if ok else "**missed**"


def main(meta_path, results_path):
    meta, notes = {}, []
    for line in open(meta_path):
        key, _, value = line.rstrip("\n").partition("=")
        if key == "note":
            notes.append(value)
        else:
            meta[key] = value

    measured = []
    for line in open(results_path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 9:
            continue
        f += [""] * (13 - len(f))
        measured.append(dict(zip(
            ["workload", "server", "conns", "rps", "p50", "p99", "requests", "status_errors", "socket_errors",
             "timeouts", "ok", "s503", "round"], f)))

    def rps(r):
        return float(r["rps"]) if r["rps"] not in ("", "skipped") else None

    # A workload measured in several rounds keeps its best round; the others are listed beside it.
    rows, by_key = [], {}
    for r in measured:
        key = (r["workload"], r["server"], r["conns"])
        if key not in by_key:
            r["rounds"] = [rps(r)]
            by_key[key] = r
            rows.append(r)
            continue
        kept = by_key[key]
        kept["rounds"].append(rps(r))
        if rps(r) is not None and (rps(kept) is None or rps(r) > rps(kept)):
            r["rounds"] = kept["rounds"]
            rows[rows.index(kept)] = r
            by_key[key] = r

    first_seen = {}
    for i, r in enumerate(rows):
        first_seen.setdefault(r["workload"], i)
    rows.sort(key=lambda r: (r["workload"][:2], first_seen[r["workload"]]))  # stable within a workload
    best_pb = {}
    for r in rows:
        if r["server"].startswith("PocketBase") and rps(r) is not None:
            key = (r["workload"], r["conns"])
            if key not in best_pb or rps(r) > rps(best_pb[key]):
                best_pb[key] = r
    hello = {r["conns"]: r for r in rows if r["server"].startswith("hello") and rps(r) is not None}

    def find(prefix_or_name, server="roostd", conns=None):
        for r in rows:
            if (r["workload"] == prefix_or_name or (len(prefix_or_name) == 2 and r["workload"].startswith(prefix_or_name))) \
                    and r["server"] == server and (conns is None or r["conns"] == conns) and rps(r) is not None:
                return r
        return None

    out = []
    out.append("## Run %s" % meta.get("date", "?"))
    out.append("")
    out.append("- machine: %s cores, %s, %s RAM, Linux %s" % (meta.get("nproc"), meta.get("cpu"), meta.get("mem"), meta.get("kernel")))
    out.append("- versions: roostd %s, %s; PocketBase %s; libevent %s; SQLite %s (roostd); wrk %s" % (
        meta.get("roostd"), meta.get("swift"), meta.get("pocketbase", "").replace("pocketbase version ", ""),
        meta.get("libevent"), meta.get("sqlite"), meta.get("wrk")))
    out.append("- load: %s; machine load average before: %s" % (meta.get("load"), meta.get("loadavg")))
    out.append("- data: %s" % meta.get("seed"))
    if meta.get("image"):
        out.append("- files: %s" % meta.get("image"))
    out.append("")
    out.append("| workload | server | conns | req/s | p50 ms | p99 ms | errors | Roost / PB best |")
    out.append("|---|---|--:|--:|--:|--:|--:|--:|")
    for r in rows:
        if rps(r) is None:
            out.append("| %s | %s | %s | skipped (time budget) | | | | |" % (r["workload"], r["server"], r["conns"]))
            continue
        errors = int(r["status_errors"] or 0) + int(r["socket_errors"] or 0)
        timeouts = int(r["timeouts"] or 0)
        s503 = int(r["s503"] or 0)
        other = errors - s503
        parts = []
        if s503:
            parts.append("%d × 503" % s503)
        if timeouts:
            parts.append("%d timeouts" % timeouts)
        if other - timeouts > 0:
            parts.append("%d other" % (other - timeouts))
        if errors == 0:
            err = "0"
        elif other == 0:  # only 503s: answered, with Retry-After, not failed
            err = "%d × 503 (%.1f%%)" % (s503, 100.0 * s503 / max(1, int(r["requests"])))
        else:
            err = "**%d** (%.1f%%; %s)" % (errors, 100.0 * errors / max(1, int(r["requests"])), ", ".join(parts))
        ratio = ""
        if r["server"] == "roostd":
            b = best_pb.get((COMPARED_WITH.get(r["workload"], r["workload"]), r["conns"]))
            if b and rps(b) > 0:
                ratio = "**%.2f×** (vs %s)" % (rps(r) / rps(b), "logs off" if "logs off" in b["server"] else "default")
        def fmt(x):
            return "%.1f" % x if x < 100 else "%.0f" % x
        rate = fmt(rps(r))
        if len(r["rounds"]) > 1:
            rate += " (best of %s)" % " / ".join("skipped" if x is None else fmt(x) for x in r["rounds"])
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["workload"], r["server"], r["conns"], rate, ms(r["p50"]), ms(r["p99"]), err, ratio))
    out.append("")

    # ---- targets (issue 7)
    t = []

    def ratio_row(prefix, label):
        target, minimum = RATIO_TARGETS[prefix]
        r = find(prefix)
        if r is None:
            t.append((label, target, "not measured", "—"))
            return
        b = best_pb.get((r["workload"], r["conns"]))
        if b is None or rps(b) == 0:
            t.append((label, target, "no PocketBase figure", "—"))
            return
        x = rps(r) / rps(b)
        t.append((label, target, "%.2f× (%.0f vs %.0f/s)" % (x, rps(r), rps(b)), verdict(x >= minimum)))

    ratio_row("a.", "GET one entity by id")
    r, h = find("a."), hello.get(find("a.")["conns"]) if find("a.") else None
    if r and h:
        x = rps(r) / rps(h)
        t.append(("GET one entity by id", "≥ 50% of the libevent hello ceiling", "%.0f%% (%.0f vs %.0f/s)" % (
            100 * x, rps(r), rps(h)), verdict(x >= 0.5)))
    ratio_row("b.", "list, filter, 50 per page, total count, 100k entities")
    ratio_row("c.", "create, acknowledged when it survives kill -9")
    for name, against in COMPARED_WITH.items():
        r, b = find(name), best_pb.get((against, (find(name) or {}).get("conns")))
        if r and b and rps(b) > 0:
            t.append(("the same create into roostd's collection that also keeps an R*Tree (PocketBase keeps none)",
                      "for reference", "%.2f× (%.0f vs %.0f/s)" % (rps(r) / rps(b), rps(r), rps(b)), "—"))
    r = find("e.")
    if r:
        tos = int(r["timeouts"] or 0)
        errs = int(r["status_errors"] or 0) + int(r["socket_errors"] or 0)
        s503 = int(r["s503"] or 0)
        t.append(("log-in at the configured Argon2id cost", "no request times out (wrk --timeout 10s)",
                  "%d timeouts, %d × 503 + Retry-After, %d other errors in %s requests; p99 %s ms, %.1f log-ins/s" % (
                      tos, s503, errs - s503 - tos, r["requests"], ms(r["p99"]), rps(r)),
                  verdict(tos == 0)))
    r = find("f. log-ins beside the get")
    if r:
        tos = int(r["timeouts"] or 0)
        s503 = int(r["s503"] or 0)
        t.append(("log-in, beside the GET load of f.", "no request times out (wrk --timeout 10s)",
                  "%d timeouts, %d × 503 + Retry-After in %s requests; p99 %s ms, %.1f log-ins/s" % (
                      tos, s503, r["requests"], ms(r["p99"]), rps(r)),
                  verdict(tos == 0)))
    alone, loaded = find("f. get by id, alone"), find("f. get by id, with log-ins")
    logins = find("f. log-ins beside the get")
    if alone and loaded and rps(alone) > 0:
        x = rps(loaded) / rps(alone)
        t.append(("GET by id while log-ins saturate the hash pool", "≥ 80% of its unloaded rate",
                  "%.0f%% (%.0f vs %.0f/s alone, beside %s log-ins/s)" % (
                      100 * x, rps(loaded), rps(alone), "%.1f" % rps(logins) if logins else "?"),
                  verdict(x >= 0.8)))
    ratio_row("g.", "upload a 200 KB JPEG, acknowledged when durable")
    ratio_row("h.", "thumbnails produced per second from fresh uploads")
    ratio_row("i.", "serve an original 200 KB file")
    ratio_row("j.", "serve a ready thumbnail")
    for r in rows:
        if r["server"] == "roostd" and r["workload"].startswith("d.") and rps(r) is not None:
            p99 = int(r["p99"]) / 1000.0
            t.append(("geo $box over 100k points, %s connection%s" % (r["conns"], "" if r["conns"] == "1" else "s"),
                      "p99 < %.0f ms" % GEO_TARGET_MS, "p99 %.2f ms (%.0f/s)" % (p99, rps(r)), verdict(p99 < GEO_TARGET_MS)))
    try:
        hwm = float(meta.get("roost_hwm"))
        t.append(("roostd peak RSS over the run (VmHWM)", "≤ %.0f MiB" % RSS_TARGET_MIB, "%.1f MiB (PocketBase %s MiB)" % (
            hwm, meta.get("pb_hwm")), verdict(hwm <= RSS_TARGET_MIB)))
    except (TypeError, ValueError):
        pass

    out.append("Targets (issue 7), from this run only:")
    out.append("")
    out.append("| workload | target | measured | |")
    out.append("|---|---|---|---|")
    for row in t:
        out.append("| %s | %s | %s | %s |" % row)
    out.append("")
    for n in notes:
        out.append("- note: %s" % n)
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
