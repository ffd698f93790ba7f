"""bench/run.sh's own reports, from bench/results/main.jsonl: the full report of one run
(`bench/report.py --run N`, what run.sh prints at the end) and the headline ratios of every run
(`bench/report.py --history`)."""

# The headline ratios (roostd / PocketBase's faster setting) and the targets of issue 7.
HEADLINES = [("a.", "GET", 3.0), ("b.", "list", 5.0), ("c.", "create", 3.0), ("g.", "upload", 1.5),
             ("h.", "thumbs/s", 2.0), ("i.", "original", 3.0), ("j.", "thumbnail", 3.0)]


def when(rec):
    return rec["date"].replace("T", " ").replace("Z", " UTC")


def verdict(v):
    return "**missed**" if v == "missed" else v


def fmt(x):
    return "skipped" if x is None else ("%.1f" % x if x < 100 else "%.0f" % x)


def errors(r):
    if not r.get("errors"):
        return "0"
    s503, timeouts = r.get("s503", 0), r.get("timeouts", 0)
    other = r["errors"] - s503
    share = ("%.1f%%" % (100.0 * r["errors"] / r["requests"])) if r.get("requests") else ""
    if other == 0:  # only 503s: answered, with Retry-After, not failed
        return "%d × 503%s" % (s503, " (%s)" % share if share else "")
    parts = ["%d × 503" % s503] if s503 else []
    parts += ["%d timeouts" % timeouts] if timeouts else []
    parts += ["%d other" % (other - timeouts)] if other - timeouts > 0 else []
    return "**%d** (%s)" % (r["errors"], "; ".join(x for x in [share, ", ".join(parts)] if x))


def run_table(rec):
    out = ["| workload | server | conns | req/s | p50 ms | p99 ms | errors | roostd / PB best |",
           "|---|---|--:|--:|--:|--:|--:|--:|"]
    for r in rec["rows"]:
        if r["rps"] is None:
            out.append("| %s | %s | %d | skipped (time budget) | | | | |" % (r["workload"], r["server"], r["conns"]))
            continue
        rate = fmt(r["rps"]) + (" (best of %s)" % " / ".join(fmt(x) for x in r["rounds"]) if r.get("rounds") else "")
        ratio = "**%.2f×** (vs %s)" % (r["ratio"], r["ratio_vs"].replace("PocketBase (", "").rstrip(")")) if "ratio" in r else ""
        out.append("| %s | %s | %d | %s | %.2f | %.2f | %s | %s |" % (
            r["workload"], r["server"], r["conns"], rate, r["p50_ms"], r["p99_ms"], errors(r), ratio))
    return out


def targets_table(targets, first="workload"):
    out = ["| %s | target | measured | |" % first, "|---|---|---|---|"]
    out += ["| %s | %s | %s | %s |" % (t.get("workload", ""), t["target"], t["measured"], verdict(t["verdict"])) for t in targets]
    return out


def run_report(rec):
    out = ["## Run %s" % when(rec), ""]
    for key in ("machine", "versions", "load", "data", "files"):
        if rec.get(key):
            out.append("- %s: %s" % (key, rec[key]))
    out += [""] + run_table(rec) + ["", "Targets (issue 7), from this run only:", ""] + targets_table(rec["targets"]) + [""]
    out += ["- note: %s" % n for n in rec.get("notes", [])]
    return out


def history(runs):
    out = ["| run (UTC) | commit | " + " | ".join("%s (≥ %g×)" % (h[1], h[2]) for h in HEADLINES) + " |",
           "|---|---|" + "--:|" * len(HEADLINES)]
    for rec in runs:
        cells = []
        for prefix, _, minimum in HEADLINES:
            r = next((r for r in rec["rows"] if r["workload"].startswith(prefix) and r["server"] == "roostd"
                      and "ratio" in r), None)
            cells.append("" if r is None else ("%.2f" % r["ratio"] if r["ratio"] >= minimum else "**%.2f**" % r["ratio"]))
        out.append("| %s | %s | %s |" % (when(rec)[:16], rec.get("commit") or "?", " | ".join(cells)))
    return out
