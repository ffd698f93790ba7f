"""Runs that BENCHMARKS.md (until wave 4) gave only as prose and tables, as records in the shape the
scripts now append (bench/benchstats.record): every figure copied from that text (history-2026.md
keeps it, section by section); ratios as the text gave them. Used once by backfill_figures.py."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchstats import figure  # noqa: E402

MACHINE = "2 cores, AMD EPYC, 24 GiB RAM (the shared wave-3/4 machine)"
SIZES = ("10k", "100k", "1M")


def run(bench, date, commit, load, source, figs, notes=None):
    return {"bench": bench, "date": date, "commit": commit, "machine": MACHINE, "load_note": load,
            "source": "transcribed from " + source, "notes": notes, "figures": figs}


def scale(rows, sizes):
    """rows: shape -> one (roostd, PocketBase, ratio) per size in `sizes` (None: not measured), then the cost."""
    out = []
    for shape, cells in rows.items():
        *per_size, cost = cells
        for size, cell in zip(sizes, per_size):
            if cell is None:
                continue
            r, p, x = cell
            need = ("≥ 5× PocketBase" if shape == "page50" else "≥ 3× PocketBase") if p else "no PocketBase equivalent"
            out.append(figure("scale.%s.%s" % (shape, size), r, "req/s", need, "PocketBase" if p else None, p, x,
                              "every request a 503 (the slow lane's time limit)" if r == 0 else None))
        if cost is not None:
            out.append(figure("scale.%s.cost" % shape, cost, "× (10k req/s ÷ 1M req/s)",
                              "none (O(skip))" if shape == "skip" else "≤ 2×"))
    return out


S = "BENCHMARKS.md, Query scaling (issue #22)"
SCALE_FIRST = scale({
    "get": [(10952, 1680, 6.5), (7746, 2034, 3.8), (4310, 1302, 3.3), 2.54],
    "list": [(9359, 1274, 7.3), (6046, 578, 10.5), (6656, 632, 10.5), 1.41],
    "sort_asc": [(4714, 952, 5.0), (5478, 382, 14.3), (4831, 630, 7.7), 0.98],
    "sort_desc": [(6429, 1100, 5.8), (5330, 509, 10.5), (4253, 705, 6.0), 1.51],
    "range": [(4381, 1031, 4.3), (3822, 969, 3.9), (4185, 640, 6.5), 1.05],
    "range_sort": [(4488, 961, 4.7), (4921, 393, 12.5), (3698, 555, 6.7), 1.21],
    "geo_box": [(2504, 451, 5.6), (374, 270, 1.4), (9, 206, 0.04), 278],
    "near": [(2.4, None, None), (0.2, None, None), (0, None, None), None],
    "skip": [(4098, 574, 7.1), (894, 166, 5.4), (300, 207, 1.4), 13.7],
    "keyset": [(8715, 314, 27.8), (6781, 340, 20.0), (5776, 286, 20.2), 1.51],
    "keyset_sort": [(6246, 378, 16.5), (5005, 94, 53.4), (2784, 194, 14.4), 2.24],
    "page50": [(1795, 236, 7.6), (1760, 208, 8.5), (1451, 246, 5.9), 1.24],
}, SIZES)
SCALE_AFTER_GEO_WALK = scale({
    "get": [(12375, 2306, 5.4), (17441, 2344, 7.4), 0.71],
    "list": [(9232, 1208, 7.6), (11367, 1230, 9.2), 0.81],
    "geo_box": [(3560, 838, 4.3), (3513, 439, 8.0), 1.01],
    "skip": [(5069, 812, 6.2), (1492, 361, 4.1), 3.40],
    "keyset": [(6389, 549, 11.6), (9242, 448, 20.6), 0.69],
    "keyset_sort": [(4843, 491, 9.9), (5549, 390, 14.2), 0.87],
}, ("10k", "1M"))
SCALE_100K_QUIET = scale({
    "get": [(16024, 5340, 3.0), None], "list": [(12772, 2267, 5.6), None],
    "sort_asc": [(10126, 2187, 4.6), None], "sort_desc": [(9649, 2163, 4.5), None],
    "range": [(7655, 2207, 3.5), None], "range_sort": [(8004, 2110, 3.8), None],
    "geo_box": [(4381, 1204, 3.6), None], "near": [(1430, None, None), None], "skip": [(2726, 593, 4.6), None],
    "keyset": [(10709, 884, 12.1), None], "keyset_sort": [(8584, 640, 13.4), None],
    "page50": [(4396, 1000, 4.4), None],
}, ("100k",))

G = "BENCHMARKS.md, The session's glue changes, A/B against the session's start (#24)"
L = "BENCHMARKS.md, Live updates (#16), re-measured after the in-memory filters"
R = "BENCHMARKS.md, A delete with a `restrict` check vs without (#23)"
TRANSCRIBED = [
    ("scale", run("scale.py", "2026-11-23T23:42Z", "9d33fb8", "15–22", S, SCALE_FIRST, [
        "run 20261123T234156 (its raw lines name rev 828277d, the worktree's HEAD); wrk -t2 -c8 -d5s, one round",
        "$nearSphere: 10k p50 2.9 s, 100k one answer in 5 s, 1M every request a 503; PocketBase has no nearest-first order"])),
    ("scale", run("scale.py", "2026-11-24T00:52Z", "f1471ea", "~3", S + ", geo re-run after the geo plans landed", [
        figure("scale.geo_box.1M", 493, "req/s", "≥ 3× PocketBase", "PocketBase", 898, 0.5, "p50 12.3 ms"),
        figure("scale.near.1M", 267, "req/s", "no PocketBase equivalent", note="p50 28.7 ms")],
        ["--sizes 1000000 --reuse --shapes geo_box,near, one 5 s round"])),
    ("scale", run("scale.py", "2026-11-24T02:52Z", "5312e92", "12–18", S + ", re-run after the geo walk and mapped reads",
                  SCALE_AFTER_GEO_WALK, ["1M: run 20261124T025247 on the kept data; 10k: run 20261124T025621 right after; --rounds 3"])),
    ("scale", run("scale.py", "2026-11-24T03:36Z", "61cf7b2", "7–9", S + ", footnote 4 ($nearSphere)", [
        figure("scale.near.10k", 1652, "req/s", "no PocketBase equivalent"),
        figure("scale.near.1M", 1437, "req/s", "no PocketBase equivalent"),
        figure("scale.near.cost", 1.15, "× (10k req/s ÷ 1M req/s)", "≤ 2×",
               note="before the density-adapted first step: 1,897/s and 603/s (3.1×; 217/s and 5.8× at 03:30)")],
        ["61cf7b2 + the $nearSphere change, --rounds 2 --no-pb, the kept 10k and 1M data"])),
    ("scale", run("scale.py", "2026-11-24T04:10Z", "de52234", "0.3–2.9", S + ", 100k rows on a quiet machine",
                  SCALE_100K_QUIET, ["main as of 03:40; one round, 3 for get and page50; runs 20261124T041054 and after"])),
    ("scale", run("scale.py", "2026-11-24T04:20Z", "de52234+", "0.3–2.9", S + ", 100k rows on a quiet machine (plain page)", [
        figure("scale.page50.100k", 6116, "req/s", "≥ 5× PocketBase", "PocketBase", 1144, 5.3,
               "after skipping the re-test of a filter that is only the walked range; 4,314 → 6,116/s in an A/B")],
        ["the binary with the plain-page change, same data, 3 rounds"])),
    ("refs", run("refs.py", "2026-11-23T23:24Z", None, "13.10", R, [
        figure("refs.restrict_cost", 10.6, "% more per delete", "≤ 20%", "without a reference check, CPU µs/delete", 141.8,
               round(156.8 / 141.8, 3), "CPU +10.6%, time -17.4% (medians); CPU µs/delete 156.8 vs 141.8")],
        ["6 rounds ABBA × 8000 deletes a side, 8 connections; best deletes/s plain 6848, guarded 5579"])),
    ("refs", run("refs.py", "2026-11-23T23:23Z", None, "~15", R + ", the earlier run the same minute", [
        figure("refs.restrict_cost", 11.4, "% more per delete", "≤ 20%", "without a reference check, CPU µs/delete", 131.2,
               round(146.2 / 131.2, 3), "CPU +11.4% (medians 146.2 vs 131.2 µs); deletes/s medians 4405 plain, 4948 guarded")],
        ["4 rounds × 4000 deletes a side"])),
    ("create_ab", run("create_ab.py", "2026-11-24T04:37Z", "dca2271", "0.1", G, [
        figure("glue.create_cpu", -1.0, "% CPU per request (medians)", "within ±5%", "d21b578, CPU µs/request", 127, round(126 / 127, 3),
               "creates best/median 10,721/10,319 vs 11,579/10,182"),
        figure("glue.get_cpu", 3.0, "% CPU per request (medians)", "within ±5%", "d21b578, CPU µs/request", 53, round(55 / 53, 3),
               "GET best/median 28,866/25,684 vs 27,632/26,534")],
        ["--rounds 6 --duration 6s (and --script get.lua), ABBA, --no-record; round-to-round spread ±15%"])),
    ("live", run("live.py", "2026-11-23T23:53Z", "wave3-matcher", "13–23", L, [
        figure("live.fanout", 123366, "events/s", "≥ 3× PocketBase", "PocketBase", 12640, 9.8,
               "1,000 subscribers, 200 writes/s, best rounds; PocketBase accepted 10–13 of 200 writes/s"),
        figure("live.p99", 336, "ms", "≤ 50 ms", "PocketBase", 1613, note="20 writes/s, best round, POST included"),
        figure("live.idle_rss", 46, "MiB", "≤ 40 MB more RSS", note="+26 to +46 MiB at 2 s after opening (4 runs, 11 rounds)"),
        figure("live.get_with_streams", None, "%", "≥ 90% of without", ratio=1.04,
               note="best with / best without 104–140% in every run; 81–163% per round")],
        ["the raw rounds are the live.jsonl lines at 23:53–00:12"])),
    ("memory", run("memory.py", "2026-11-24T03:27Z", "61cf7b2", "11–13", "docs/MEMORY.md, Start-up and idle (\"now\")", [
        figure("memory.idle_rss", 39.9, "MiB", "≤ 48 MB", note="39.8–39.9 MiB in 3 runs, 5 s after /healthz; 37 shared libraries"),
        figure("memory.startup_peak", 39.8, "MiB", "≤ 64 MB", note="VmHWM 39.7–39.8 MiB, no request yet")],
        ["date: the commit that wrote the table; 57.2–57.5 MiB idle before libvips and libcurl were loaded on demand"])),
]
