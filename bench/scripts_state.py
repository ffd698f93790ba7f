#!/usr/bin/env python3
"""The bytes an idle Lua state holds with etc/roost/scripts loaded (#37: <= 1 MiB), as
`roostd check-scripts` reports them: Lua's own count (lua_gc LUA_GCCOUNT) after a full
collection, on the state that compiled the scripts.

  bench/scripts_state.py [--roostd .build/release/roostd] [--scripts etc/roost/scripts] [--no-record]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
from benchstats import figure  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--roostd", default=os.path.join(ROOT, ".build", "release", "roostd"))
    ap.add_argument("--scripts", default=os.path.join(ROOT, "etc", "roost", "scripts"))
    ap.add_argument("--notes", help="a note for the record (e.g. the build type)")
    ap.add_argument("--no-record", dest="record", action="store_false")
    a = ap.parse_args()
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as cfg:
        cfg.write("scripts_dir: %s\n" % a.scripts)
        cfg.flush()
        r = subprocess.run([a.roostd, "check-scripts", "--config", cfg.name], capture_output=True, text=True, timeout=60)
    m = re.search(r"(\d+) handlers?; an idle Lua state with them loaded holds (\d+) KiB", r.stderr)
    if r.returncode != 0 or not m:
        raise SystemExit("check-scripts failed: " + r.stderr)
    handlers, kib = int(m.group(1)), int(m.group(2))
    ver = subprocess.run([a.roostd, "--version"], capture_output=True, text=True).stdout.strip()
    text = ("### An idle Lua state with the examples loaded (#37): `bench/scripts_state.py`\n\n"
            "`roostd check-scripts` (%s) on %s: %d handlers; the state holds **%d KiB** after a full collection "
            "(Lua's count). Target ≤ 1 MiB: **%s**.\n" % (ver, os.path.relpath(a.scripts, ROOT), handlers, kib,
                                                           "met" if kib <= 1024 else "missed"))
    B.publish("scripts_state", text, None, a.record, {"version": ver, "handlers": handlers, "idle_kib": kib},
              [{"target": "scripts.idle_state", "measured": "%d KiB" % kib, "verdict": "met" if kib <= 1024 else "missed"}],
              [figure("scripts.idle_state", kib, "KiB", "≤ 1 MiB")], B.loadavg(), a.notes)


if __name__ == "__main__":
    main()
