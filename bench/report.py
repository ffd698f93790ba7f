#!/usr/bin/env python3
"""Turns bench/run.sh's meta.txt and results.tsv into the Markdown run report.

  report.py META RESULTS > report.md

results.tsv columns: workload, server, connections, rps, p50_us, p99_us,
requests, status_errors, socket_errors (rps "skipped" when a run did not fit
the time budget). The ratio column is roostd's req/s over the better of the
two PocketBase settings for the same workload and concurrency.
"""
import sys

GEO_TARGET_MS = 5.0


def ms(us):
    return "%.2f" % (int(us) / 1000.0)


def main(meta_path, results_path):
    meta, notes = {}, []
    for line in open(meta_path):
        key, _, value = line.rstrip("\n").partition("=")
        if key == "note":
            notes.append(value)
        else:
            meta[key] = value

    rows = []
    for line in open(results_path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 9:
            continue
        rows.append(dict(zip(
            ["workload", "server", "conns", "rps", "p50", "p99", "requests", "status_errors", "socket_errors"], f)))

    def rps(r):
        return float(r["rps"]) if r["rps"] not in ("", "skipped") else None

    rows.sort(key=lambda r: r["workload"][:2])  # a, b, c, d; stable within a workload
    best_pb = {}
    for r in rows:
        if r["server"].startswith("PocketBase") and rps(r) is not None:
            key = (r["workload"], r["conns"])
            if key not in best_pb or rps(r) > rps(best_pb[key]):
                best_pb[key] = r
    hello = {r["conns"]: r for r in rows if r["server"].startswith("hello") and rps(r) is not None}

    out = []
    out.append("## Run %s" % meta.get("date", "?"))
    out.append("")
    out.append("- machine: %s cores, %s, %s RAM, Linux %s" % (meta.get("nproc"), meta.get("cpu"), meta.get("mem"), meta.get("kernel")))
    out.append("- versions: roostd %s, %s; PocketBase %s; libevent %s; SQLite %s (roostd); wrk %s" % (
        meta.get("roostd"), meta.get("swift"), meta.get("pocketbase", "").replace("pocketbase version ", ""),
        meta.get("libevent"), meta.get("sqlite"), meta.get("wrk")))
    out.append("- load: %s; machine load average before: %s" % (meta.get("load"), meta.get("loadavg")))
    out.append("- data: %s" % meta.get("seed"))
    out.append("")
    out.append("| workload | server | conns | req/s | p50 ms | p99 ms | errors | Roost / PB best |")
    out.append("|---|---|--:|--:|--:|--:|--:|--:|")
    for r in rows:
        if rps(r) is None:
            out.append("| %s | %s | %s | skipped (time budget) | | | | |" % (r["workload"], r["server"], r["conns"]))
            continue
        errors = int(r["status_errors"] or 0) + int(r["socket_errors"] or 0)
        err = "0" if errors == 0 else "**%d** (%.1f%%)" % (errors, 100.0 * errors / max(1, int(r["requests"])))
        ratio = ""
        if r["server"] == "roostd":
            b = best_pb.get((r["workload"], r["conns"]))
            if b:
                ratio = "**%.2f×** (vs %s)" % (rps(r) / rps(b), "logs off" if "logs off" in b["server"] else "default")
            elif r["workload"].startswith("a.") and r["conns"] in hello:
                ratio = ""
        out.append("| %s | %s | %s | %.0f | %s | %s | %s | %s |" % (
            r["workload"], r["server"], r["conns"], rps(r), ms(r["p50"]), ms(r["p99"]), err, ratio))
    out.append("")
    for r in rows:
        if r["server"] == "roostd" and r["workload"].startswith("a.") and rps(r) is not None and r["conns"] in hello:
            out.append("- roostd get-by-id reaches %.0f%% of the libevent hello ceiling's req/s." % (
                100.0 * rps(r) / rps(hello[r["conns"]])))
        if r["server"] == "roostd" and "geo" in r["workload"] and rps(r) is not None:
            p99 = int(r["p99"]) / 1000.0
            out.append("- geo $box p99 at %s connections: %.2f ms (target < %.0f ms: %s)." % (
                r["conns"], p99, GEO_TARGET_MS, "met" if p99 < GEO_TARGET_MS else "**missed**"))
    out.append("- peak RSS (VmHWM) after all runs: roostd %s MiB, PocketBase %s MiB." % (meta.get("roost_hwm"), meta.get("pb_hwm")))
    for n in notes:
        out.append("- note: %s" % n)
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
