#!/usr/bin/env python3
"""Where roostd's memory goes: start-up peak, idle RSS and what makes it up.

Starts the given roostd on a fresh data directory, samples
/proc/PID/status every 2 ms until /healthz answers, waits for it to settle,
then prints: the peak (VmHWM) and the largest sample with its thread count;
idle RSS split into anonymous and file-backed memory (smaps_rollup); the
file-backed part per mapped file (smaps); thread stacks; SQLite's memory
(the roost_sqlite_memory_bytes gauge, when the build has it); and
jemalloc's own totals (MALLOC_CONF=stats_print, printed at exit).

    python3 bench/memory.py --binary .build/release/roostd [--idle 5] [--config x.yaml]
        [--malloc-conf narenas:1] [--image]

With --image it then uploads one 1200x800 PNG (files made public unless
--config is given), waits for its thumbnails and prints RSS again: libvips
is loaded at the first image, not at start-up. Appends the run (idle RSS and the
start-up peak against #22's targets) to bench/results/memory.jsonl (--no-record: not).
"""

import argparse
import collections
import os
import pathlib
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time
import json
import struct
import urllib.request
import zlib

import benchstats
import figures

MiB = 1024 * 1024


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def status(pid):
    """/proc/PID/status as {field: kB or count}."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            parts = value.split()
            if parts and parts[0].isdigit():
                out[key] = int(parts[0])
    return out


def get(url, timeout=1.0):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode(errors="replace")
    except OSError:
        return None, ""


def png(width, height):
    """An RGB gradient PNG."""
    row = lambda y: b"\x00" + bytes(((x + y) * 7 + c * 85) & 0xFF for x in range(width) for c in range(3))
    chunk = lambda kind, data: struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"".join(row(y) for y in range(height)), 1)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def first_image(base, idle):
    """Uploads one image, waits for its thumbnails, then `idle` seconds."""
    req = urllib.request.Request(base + "/files", data=png(1200, 800), method="POST", headers={"Content-Type": "image/png"})
    with urllib.request.urlopen(req, timeout=30) as r:
        file_id = json.loads(r.read())["_id"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        meta = json.loads(get(base + f"/files/{file_id}/meta")[1] or "{}")
        if meta and all(t["state"] != "pending" for t in meta["thumbnails"].values()):
            break
        time.sleep(0.1)
    states = sorted({t["state"] for t in meta["thumbnails"].values()})
    time.sleep(idle)
    return states


def mappings(pid):
    """(start, end, perms, path, rss_kB, anon_kB) per mapping of /proc/PID/smaps."""
    rows, head = [], None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                if head:
                    rows.append(head)
                parts = line.split(None, 5)
                start, end = (int(x, 16) for x in parts[0].split("-"))
                head = [start, end, parts[1], parts[5].strip() if len(parts) > 5 else "", 0, 0]
            elif line.startswith("Rss:"):
                head[4] = int(line.split()[1])
            elif line.startswith("Anonymous:"):
                head[5] = int(line.split()[1])
    if head:
        rows.append(head)
    return rows


def breakdown(pid):
    """Resident kB per file, plus thread stacks and other anonymous memory."""
    rows = mappings(pid)
    per_file, stacks, stack_count, anon_other, relocated = collections.Counter(), 0, 0, 0, 0
    for i, (start, end, perms, path, rss, anon) in enumerate(rows):
        guarded = i > 0 and rows[i - 1][1] == start and rows[i - 1][2].startswith("---p") and not rows[i - 1][3]
        if path == "[stack]" or (not path and perms.startswith("rw") and guarded):
            stacks += rss
            stack_count += 1
        elif path.startswith("/"):
            per_file[os.path.basename(path)] += rss - anon
            relocated += anon  # private copies of library pages: relocations, .data
        else:
            anon_other += rss
    return per_file, stacks, stack_count, anon_other, relocated


def rollup(pid):
    out = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                out[parts[0].rstrip(":")] = int(parts[1])
    return out


def jemalloc_totals(log):
    """The totals jemalloc prints at exit (stats_print), or {}."""
    m = re.search(r"Allocated: (\d+), active: (\d+), metadata: (\d+).*?resident: (\d+), mapped: (\d+)", log, re.S)
    arenas = re.search(r"Arenas: (\d+)", log)
    if not m:
        return {}
    keys = ["allocated", "active", "metadata", "resident", "mapped"]
    out = {k: int(v) for k, v in zip(keys, m.groups())}
    if arenas:
        out["arenas"] = int(arenas.group(1))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=".build/release/roostd")
    ap.add_argument("--idle", type=float, default=5.0, help="seconds to let it settle after /healthz")
    ap.add_argument("--config", help="a roostd YAML config (default: none)")
    ap.add_argument("--top", type=int, default=12, help="files to list by resident size")
    ap.add_argument("--malloc-conf", default="", help="extra jemalloc options to try, e.g. narenas:1")
    ap.add_argument("--image", action="store_true", help="then upload one image and measure again")
    ap.add_argument("--no-record", dest="record", action="store_false",
                    help="do not append the run to bench/results/memory.jsonl")
    args = ap.parse_args()
    load_before = benchstats.loadavg()

    with tempfile.TemporaryDirectory(prefix="roost-mem-") as tmp:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        cmd = [os.path.abspath(args.binary), "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", f"{tmp}/data"]
        if args.config or args.image:
            if not args.config:
                args.config = f"{tmp}/roost.yaml"
                pathlib.Path(args.config).write_text("files_permission: public\n")
            cmd += ["--config", args.config]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ROOST_", "NOTIFY_SOCKET", "LISTEN_"))}
        env["MALLOC_CONF"] = ",".join(filter(None, ["stats_print:true", args.malloc_conf]))
        log = open(f"{tmp}/roostd.log", "w+")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        ready = threading.Event()

        def probe():
            while not ready.is_set() and proc.poll() is None:
                if get(base + "/healthz")[0] == 200:
                    ready.set()
                time.sleep(0.01)
        threading.Thread(target=probe, daemon=True).start()

        started, peak = time.monotonic(), (0, 0, 0.0)
        while not ready.is_set():
            if proc.poll() is not None or time.monotonic() - started > 60:
                log.seek(0)
                raise SystemExit("roostd did not become ready:\n" + log.read())
            try:
                s = status(proc.pid)
            except (FileNotFoundError, ProcessLookupError):
                continue
            if s.get("VmRSS", 0) > peak[0]:
                peak = (s["VmRSS"], s.get("Threads", 0), time.monotonic() - started)
            time.sleep(0.002)
        ready_s = time.monotonic() - started
        hwm_at_ready = status(proc.pid)["VmHWM"]
        time.sleep(args.idle)

        s, r = status(proc.pid), rollup(proc.pid)
        per_file, stacks, stack_count, anon_other, relocated = breakdown(proc.pid)
        metrics = get(base + "/metrics")[1]
        gauges = {m.group(1): float(m.group(2)) for m in re.finditer(
            r"^roost_(sqlite_page_cache_bytes|allocator_allocated_bytes|allocator_resident_bytes) (\S+)$", metrics, re.M)}
        libraries = len({m[3] for m in mappings(proc.pid) if ".so" in m[3]})
        if args.image:
            states = first_image(base, args.idle)
            after = (status(proc.pid), rollup(proc.pid), len({m[3] for m in mappings(proc.pid) if ".so" in m[3]}))
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        log.seek(0)
        je = jemalloc_totals(log.read())

    mb = lambda kb: f"{kb / 1024:6.1f} MiB"
    print(f"binary               {args.binary}")
    print(f"ready after          {ready_s:.2f} s")
    print(f"peak (VmHWM)         {mb(hwm_at_ready)} at readiness; largest 2 ms sample {mb(peak[0])} "
          f"with {peak[1]} threads at {peak[2]:.2f} s")
    print(f"idle RSS             {mb(s['VmRSS'])} after {args.idle:g} s ({s['Threads']} threads)")
    print(f"  anonymous          {mb(r.get('Anonymous', 0))}")
    print(f"  file-backed        {mb(s.get('RssFile', 0))} ({libraries} shared libraries mapped)")
    for name, kb in per_file.most_common(args.top):
        print(f"    {name:<32} {mb(kb)}")
    rest = sum(per_file.values()) - sum(kb for _, kb in per_file.most_common(args.top))
    print(f"    {'(other files)':<32} {mb(rest)}")
    print(f"  thread stacks      {mb(stacks)} resident in {stack_count} stacks")
    print(f"  library data       {mb(relocated)} (private copies of mapped files' pages: relocations, .data)")
    print(f"  other anonymous    {mb(anon_other)} (jemalloc's heap: SQLite, Swift, libvips once loaded; .bss)")
    if "sqlite_page_cache_bytes" in gauges:
        print(f"SQLite page caches   {mb(gauges['sqlite_page_cache_bytes'] / 1024)} (roost_sqlite_page_cache_bytes)")
    if "allocator_resident_bytes" in gauges:
        print(f"jemalloc at idle     allocated {mb(gauges['allocator_allocated_bytes'] / 1024)}, "
              f"resident {mb(gauges['allocator_resident_bytes'] / 1024)} (roost_allocator_*_bytes)")
    if args.image:
        a, ar, alibs = after
        print(f"after one image      RSS {mb(a['VmRSS'])} (anonymous {mb(ar.get('Anonymous', 0))}, file-backed "
              f"{mb(a.get('RssFile', 0))}, {alibs} shared libraries), VmHWM {mb(a['VmHWM'])}; thumbnails {', '.join(states)}")
    if je:
        print(f"jemalloc at exit     {je.get('arenas', '?')} arenas; allocated {mb(je['allocated'] // 1024)}, "
              f"active {mb(je['active'] // 1024)}, metadata {mb(je['metadata'] // 1024)}, "
              f"resident {mb(je['resident'] // 1024)}, mapped {mb(je['mapped'] // 1024)}")
    if args.record:
        measured = {"idle_rss_kib": s["VmRSS"], "startup_hwm_kib": hwm_at_ready, "threads": s["Threads"],
                   "anonymous_kib": r.get("Anonymous", 0), "file_kib": s.get("RssFile", 0), "libraries": libraries,
                   "idle_s": args.idle, "config": args.config, "malloc_conf": args.malloc_conf, "image": args.image}
        benchstats.record("memory", measured, [], None, figures.memory(s["VmRSS"] / 1024, hwm_at_ready / 1024, libraries),
                          load_before)


if __name__ == "__main__":
    main()
