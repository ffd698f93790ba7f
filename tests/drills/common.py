"""What the reliability drills share beyond roost_harness (the daemon, the
HTTP client, generated PNGs): the drills' admin token, paging through a
collection, the machine description and the RELIABILITY.md summary lines.

Everything here talks to 127.0.0.1 only, and every process a drill starts
is stopped by the drill itself (see `Roostd.close`)."""

import datetime
import json
import os
import platform
import sys
import urllib.parse

from roost_harness import REPO, Client

RELIABILITY = REPO / "RELIABILITY.md"
ADMIN_TOKEN = "drill-admin-token-0123456789abcdef0123456789"


def list_all(port, collection, token=None, page_size=1000):
    """Every document of `collection` the caller may read, paged by _id: a list."""
    client = Client(port, timeout=30, token=token)
    out, skip = [], 0
    try:
        while True:
            q = urllib.parse.urlencode({"limit": page_size, "skip": skip, "sort": json.dumps({"_id": 1})})
            reply = client.request("GET", f"/{collection}?{q}")
            if reply.status != 200:
                raise RuntimeError(f"listing {collection} answered {reply.status}: {reply.raw[:200]!r}")
            page = reply.json()
            out.extend(page)
            if len(page) < page_size:
                return out
            skip += page_size
    finally:
        client.close()


def machine():
    """One line: cores, memory, CPU model, kernel."""
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {mem}, {model or platform.machine()}, Linux {platform.release()}"


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def append_summary(line):
    """Appends one drill summary line, with date and machine, to RELIABILITY.md."""
    entry = f"- {now_utc()} · {machine()} · `{line}`\n"
    text = RELIABILITY.read_text() if RELIABILITY.exists() else "# Reliability\n\n## Results\n\n"
    if not text.endswith("\n"):
        text += "\n"
    RELIABILITY.write_text(text + entry)


def percentile(values, p):
    if not values:
        return float("nan")
    s = sorted(values)
    k = min(len(s) - 1, max(0, int(round(p / 100 * (len(s) - 1)))))
    return s[k]


def print_report(result):
    """Prints a drill's failures and lost writes (first 20 each) to stderr and
    its summary line to stdout; returns the process exit status."""
    for f in result["failures"][:20]:
        print("FAILURE:", f, file=sys.stderr)
    for f in result["lost"][:20]:
        print("LOST:", f, file=sys.stderr)
    print(result["line"])
    return 1 if result["failures"] or result["lost"] else 0
