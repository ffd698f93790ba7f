#!/usr/bin/env python3
"""Hand-off cost per request (issue #43 §1): futex calls and context switches per
GET by id and per create, at saturation, on a release roostd.

One roostd (2 loops, 2 readers: the defaults on two cores), 10k documents, then
for each workload wrk saturates it (GET by random id; durable creates) while
`perf stat -p` counts roostd's `syscalls:sys_enter_futex` and
`context-switches` over the same seconds. Per request = count ÷ requests wrk
completed in that window. Targets: ≤ 0.1 futex calls and ≤ 0.1 context
switches per GET; fewer per create than an earlier commit's binary
(`--baseline`) in the same run.

  bench/wakeups.py [--roostd .build/release/roostd] [--baseline OLD_ROOSTD --baseline-name COMMIT] [--seconds 8] [--rounds 2] [--no-record]

wrk runs with one thread at nice 5 so roostd's two loops get the cores first;
the best of `rounds` rounds (the lowest per-request cost) is kept. The same
binary with `loop_reads: false` (every read handed to a reader, the design
before) runs in the same run for comparison. On this 2-core machine wrk shares
the cores with roostd, so a loop that has answered everything sleeps until wrk
sends more: those switches are the client's pace, not a hand-off.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.dont_write_bytecode = True
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT / "tests")]
import benchstats  # noqa: E402
from roost_harness import Roostd  # noqa: E402
from roost_harness import call  # noqa: E402

CONFIG = ("log_level: warning\nloops: 2\nreaders: 2\nrate_limits: off\n"
          "collections:\n  items:\n    permission: public\n    indexes: [category, n]\n")


def seed(port, n):
    """n documents through /_batch; returns their ids."""
    ids = []
    for start in range(0, n, 100):
        ops = [{"method": "POST", "path": "/items", "body": {"name": "item %d" % i, "n": i, "tags": ["a", "b"]}}
               for i in range(start, min(n, start + 100))]
        r = call(port, "POST", "/_batch", {"operations": ops}, timeout=60)
        assert r.status == 200, r
        ids += [x["body"]["_id"] for x in r.json()["results"]]
    return ids


def measure(pid, port, script, ids_file, seconds, connections, client_cpu=None):
    """wrk on `script` while perf counts roostd's futex calls and context switches
    (wrk at nice 5 on the same cores, or alone on `client_cpu`)."""
    env = dict(os.environ, BENCH_LUA_DIR=str(HERE / "lua"), BENCH_IDS=ids_file, BENCH_API="roost",
               BENCH_COLLECTION="items")
    launcher = ["taskset", "-c", str(client_cpu)] if client_cpu is not None else ["nice", "-n", "5"]
    wrk = subprocess.Popen(launcher + ["wrk", "-t1", "-c%d" % connections, "-d%ds" % (seconds + 2),
                            "--latency", "-s", str(HERE / "lua" / script), "http://127.0.0.1:%d" % port],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(1)  # past wrk's connection set-up
    before = requests_served(port)
    perf = subprocess.run(["perf", "stat", "-x", ",", "-e", "syscalls:sys_enter_futex,context-switches,task-clock",
                           "-p", str(pid), "--", "sleep", str(seconds)], capture_output=True, text=True)
    served = requests_served(port) - before
    out, _ = wrk.communicate(timeout=seconds + 30)
    counts = {}
    for line in perf.stderr.splitlines():
        parts = line.split(",")
        if len(parts) > 2 and parts[0].strip().replace(".", "", 1).isdigit():
            counts[parts[2]] = float(parts[0])
    assert "context-switches" in counts, perf.stderr
    assert "Non-2xx" not in out, "%s answered errors:\n%s" % (script, out)
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"requests": served, "rps": served / seconds, "wrk_rps": float(rps.group(1)) if rps else None,
            "non_2xx": int(errors.group(1)) if errors else 0,
            "futex": counts.get("syscalls:sys_enter_futex", 0), "switches": counts["context-switches"],
            "futex_per_request": counts.get("syscalls:sys_enter_futex", 0) / max(1, served),
            "switches_per_request": counts["context-switches"] / max(1, served),
            # task-clock is in milliseconds: roostd's CPU per request, in microseconds
            "cpu_us_per_request": counts.get("task-clock", 0) * 1000 / max(1, served)}


def requests_served(port):
    """roost_http_requests_total summed over its labels."""
    text = call(port, "GET", "/metrics", timeout=10).raw.decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("roost_http_requests_total"))


def run_node(a, tmp, name, extra, binary=None, pinned=False):
    """One roostd (CONFIG + extra; `binary` instead of --roostd): the best of `rounds` rounds of each workload.
    `pinned`: every roostd thread on CPU 0 and wrk alone on CPU 1, so the client never waits for a core."""
    best = {}
    os.environ["ROOSTD"] = binary or a.roostd
    node = Roostd(Path(tmp) / name, config=CONFIG + extra).start()
    try:
        if pinned:
            subprocess.run(["taskset", "-a", "-p", "-c", "0", str(node.pid)], check=True, capture_output=True)
        ids = seed(node.port, a.documents)
        ids_file = os.path.join(tmp, name + "-ids.txt")
        Path(ids_file).write_text("\n".join(ids) + "\n")
        for _ in range(a.rounds):
            for workload, script in (("get", "get.lua"), ("create", "create.lua")):
                m = measure(node.pid, node.port, script, ids_file, a.seconds, a.connections, 1 if pinned else None)
                benchstats.log("%s, %s: %s" % (name, workload, json.dumps(m)))
                if workload not in best or m["switches_per_request"] < best[workload]["switches_per_request"]:
                    best[workload] = m
    finally:
        node.stop()
    return best


def row(label, m, target):
    return "| %s | %.3f | %.3f | %.0f | %.0f | %s |" % (
        label, m["futex_per_request"], m["switches_per_request"], m["cpu_us_per_request"], m["rps"], target)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--roostd", default=os.environ.get("ROOSTD", str(ROOT / ".build/release/roostd")))
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--documents", type=int, default=10000)
    ap.add_argument("--baseline", help="an earlier commit's release roostd, run in the same run (creates are compared with it)")
    ap.add_argument("--baseline-name", default="baseline", help="what the baseline is, for the table (a commit)")
    ap.add_argument("--no-record", dest="record", action="store_false")
    a = ap.parse_args()
    load = benchstats.loadavg()
    with tempfile.TemporaryDirectory() as tmp:
        # Today's read path, and the same binary with every read handed to a reader (as before loop_reads).
        on = run_node(a, tmp, "loop-reads", "")
        off = run_node(a, tmp, "readers-only", "loop_reads: false\n")
        # The same binary on one core of its own (1 loop, 1 reader), wrk on the other: the switches
        # left are roostd's own hand-offs, not a loop waiting for a client that shares its cores.
        pinned = run_node(a, tmp, "pinned", "loops: 1\nreaders: 1\n", pinned=True)
        base = run_node(a, tmp, "baseline", "", a.baseline) if a.baseline else None
    get, create = on["get"], on["create"]
    previous = base["create"] if base else None
    prev = "%.3f futex, %.3f switches (the baseline, same run)" % (
        previous["futex_per_request"], previous["switches_per_request"]) if previous else "no baseline given"
    text = "\n".join([
        "| per request, at saturation (2 loops, 2 readers; wrk shares the 2 cores) | futex calls | context switches | roostd CPU (µs) | requests/s | target |",
        "|---|---|---|---|---|---|",
        row("GET by id", get, "≤ 0.1 and ≤ 0.1"),
        row("GET by id, `loop_reads: false` (every read on a reader, as before)", off["get"], "same run, for comparison"),
        row("create (durable)", create, "fewer than before: " + prev),
        row("create, `loop_reads: false`", off["create"], "same run, for comparison"),
        row("GET by id, roostd on CPU 0 (1 loop, 1 reader), wrk alone on CPU 1", pinned["get"], "≤ 0.1 and ≤ 0.1 (the client never waits for a core)"),
        row("create, the same pinning", pinned["create"], "same run, for comparison"),
    ] + ([row("GET by id, baseline (%s)" % a.baseline_name, base["get"], "same run"),
          row("create, baseline (%s)" % a.baseline_name, base["create"], "same run")] if base else [])) + "\n"
    print(text)
    if a.record:
        figs = [benchstats.figure("wakeups.get_futex", round(get["futex_per_request"], 3), "futex calls/GET", "≤ 0.1",
                                  "loop_reads: false", round(off["get"]["futex_per_request"], 3)),
                benchstats.figure("wakeups.get_switches", round(get["switches_per_request"], 3), "context switches/GET",
                                  "≤ 0.1", "loop_reads: false", round(off["get"]["switches_per_request"], 3)),
                benchstats.figure("wakeups.create_switches", round(create["switches_per_request"], 3),
                                  "context switches/create", "fewer than before",
                                  "baseline " + a.baseline_name if previous else None,
                                  round(previous["switches_per_request"], 3) if previous else None,
                                  round(create["switches_per_request"] / previous["switches_per_request"], 2)
                                  if previous and previous["switches_per_request"] else None)]
        figs.append(benchstats.figure("wakeups.get_switches_pinned", round(pinned["get"]["switches_per_request"], 3),
                                      "context switches/GET", "≤ 0.1 (roostd on one core, wrk on the other)"))
        benchstats.record("wakeups", {"get": get, "create": create, "readers_only": off, "pinned": pinned, "baseline": base},
                          [], text, figs, load)


if __name__ == "__main__":
    main()
