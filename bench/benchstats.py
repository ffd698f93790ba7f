"""Paths, the bench log line, and what the benchmarks measure and keep besides requests: CPU
ticks and steal from /proc, RSS, the load average, the machine, and results/NAME.jsonl records.
bench/benchlib.py re-exports all of it (`B.settle`, `B.record`, ...)."""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out")


def log(msg):
    print("[bench %s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def machine_ticks():
    with open("/proc/stat") as f:
        v = f.readline().split()[1:]
    v = [int(x) for x in v]
    return sum(v[:8]), v[7]


def steal_since(before):
    t0, s0 = before
    t1, s1 = machine_ticks()
    return 100.0 * (s1 - s0) / (t1 - t0) if t1 > t0 else 0.0


def proc_cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return int(parts[11]) + int(parts[12])


def thread_cpu_ticks(pid):
    """{thread name: CPU ticks} of a process's threads (threads of one name summed)."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                text = f.read()
        except OSError:
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        parts = text.rsplit(")", 1)[1].split()
        out[name] = out.get(name, 0) + int(parts[11]) + int(parts[12])
    return out


def thread_cpu_since(pid, before, seconds):
    """Cores each thread name used since `before` (thread_cpu_ticks), over `seconds`, busiest first."""
    hz = os.sysconf("SC_CLK_TCK")
    now = thread_cpu_ticks(pid)
    used = {k: (v - before.get(k, 0)) / hz / seconds for k, v in now.items()}
    return {k: round(v, 2) for k, v in sorted(used.items(), key=lambda kv: -kv[1]) if v >= 0.01}


def settle(pids, limit=30):
    """Waits until the given processes are idle (together under 6% of a core over half a second)."""
    start = time.monotonic()
    while time.monotonic() - start < limit:
        a = sum(proc_cpu_ticks(p) for p in pids)
        time.sleep(0.5)
        b = sum(proc_cpu_ticks(p) for p in pids)
        if b - a <= 3:
            return time.monotonic() - start
    return time.monotonic() - start


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def machine():
    """'2 cores, <cpu model>, 24 GiB RAM, Linux <kernel>', as run.sh's meta.txt has it."""
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    mem = next((int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal:")), 0)
    return "%d cores, %s, %.0f GiB RAM, Linux %s" % (os.cpu_count(), cpu, mem / 1048576, os.uname().release)


def figure(fid, value, unit, target=None, peer=None, peer_value=None, ratio=None, note=None):
    """One measured figure of a run, as bench/report.py reads it: `fid` names the target in
    report.py's TARGETS table; `peer`/`peer_value` the figure it is compared with, `ratio` ours ÷ theirs."""
    f = {"id": fid, "value": value, "unit": unit, "target": target, "peer": peer, "peer_value": peer_value,
         "ratio": ratio, "note": note}
    return {k: v for k, v in f.items() if v is not None}


def commit():
    return subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty", "--abbrev=7"],
                          capture_output=True, text=True).stdout.strip() or None


def record(name, metrics, targets, markdown, figures=(), load_before=None, notes=None, path=None):
    """Appends one run to bench/results/NAME.jsonl (bench/report.py renders it): date (UTC), commit,
    machine and `notes` on it, the load average before the run and after it, `figures` (see figure()),
    the script's own metrics, its targets ([{"target", "measured", "verdict"}]) and the Markdown it printed."""
    rec = {"bench": name + ".py", "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), "commit": commit(),
           "machine": machine(), "load_before": load_before, "load_after": loadavg(), "notes": notes,
           "figures": list(figures), "metrics": metrics, "targets": targets, "markdown": markdown}
    path = path or os.path.join(HERE, "results", name + ".jsonl")
    with open(path, "a") as f:
        f.write(json.dumps({k: v for k, v in rec.items() if v is not None}, ensure_ascii=False) + "\n")
    log("recorded in %s; python3 bench/report.py --write puts it into BENCHMARKS.md" % os.path.relpath(path, ROOT))
