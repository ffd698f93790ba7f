"""`make drills`: every reliability drill at full size, one summary line each,
appended (with date and machine) to RELIABILITY.md. Exits non-zero when a
drill failed or lost data. Bounded: about 7 minutes on a 2-core machine.

Sizes can be lowered for a quick look:
  DRILL_CYCLES=20 DRILL_OUTAGE_MESSAGES=300 DRILL_OUTAGE_LOAD_SECONDS=30 DRILL_OUTAGE_SECONDS=10
  DRILL_SLOW_CONNECTIONS=300 DRILL_SLOW_SECONDS=20 DRILL_BOUNDS_KEYS=85000 DRILL_BOUNDS_VARIANTS=200
  DRILL_FUZZ_EXAMPLES=100 DRILL_FUZZ_SECONDS=180 DRILL_LIVE_CYCLES=10 DRILL_RESTORE_WRITERS=3
  DRILL_RESTORE_SECONDS=5 DRILL_NO_RECORD=1 (do not touch RELIABILITY.md)
and some drills run alone: DRILL_ONLY=crash,outage (names: crash outage corpus bounds slowloris fuzz live restore).
"""

import os
import sys
import traceback

from . import crash, hostile, live, outage, restore
from .common import append_summary


def env_int(name, default):
    return int(os.environ.get(name, default))


def main():
    record = not os.environ.get("DRILL_NO_RECORD")
    bad = False
    lines = []

    def report(result, failed, details):
        nonlocal bad
        for d in details[:25]:
            print("   ", d, file=sys.stderr)
        print(result["line"], flush=True)
        lines.append(result["line"])
        bad |= failed

    drills = [
        ("crash", lambda: crash.run(env_int("DRILL_CYCLES", 20), log=lambda m: print(m, file=sys.stderr)),
         lambda r: (bool(r["failures"] or r["lost"]), r["failures"] + r["lost"])),
        ("outage", lambda: outage.run(env_int("DRILL_OUTAGE_MESSAGES", 300), env_int("DRILL_OUTAGE_LOAD_SECONDS", 30),
                                      env_int("DRILL_OUTAGE_SECONDS", 10), log=lambda m: print(m, file=sys.stderr)),
         lambda r: (bool(r["failures"] or r["lost"]), r["failures"] + r["lost"])),
        ("corpus", lambda: hostile.with_daemon(lambda d: hostile.run_corpus(d)),
         lambda r: (bool(r["server_errors"] or r["crashed"] or r["leaks"]),
                    r["server_errors"] + r["leaks"] + r["unexpected"] + r["contract"] + r["no_answer"])),
        ("bounds", lambda: hostile.with_daemon(lambda d: hostile.run_bounds(
            d, env_int("DRILL_BOUNDS_KEYS", 85_000), env_int("DRILL_BOUNDS_VARIANTS", 200), log=lambda m: print(m, file=sys.stderr))),
         lambda r: (bool(r["failures"] or r["crashed"]), r["failures"])),
        ("slowloris", lambda: hostile.with_daemon(lambda d: hostile.run_slowloris(
            d, env_int("DRILL_SLOW_CONNECTIONS", 300), env_int("DRILL_SLOW_SECONDS", 20))),
         lambda r: (bool(r["failures"]), r["failures"])),
        ("fuzz", lambda: hostile.with_daemon(lambda d: hostile.run_fuzz(
            d, env_int("DRILL_FUZZ_EXAMPLES", 100), env_int("DRILL_FUZZ_SECONDS", 180))),
         lambda r: (bool(r["server_errors"] or r["crashed"] or r["mismatches"]),
                    r["server_errors"] + r["mismatches"] + r["errors"])),
        ("live", lambda: live.run(env_int("DRILL_LIVE_CYCLES", 10), log=lambda m: print(m, file=sys.stderr)),
         lambda r: (bool(r["failures"] or r["lost"]), r["failures"] + r["lost"])),
        ("restore", lambda: restore.run(env_int("DRILL_RESTORE_WRITERS", 3), env_int("DRILL_RESTORE_SECONDS", 5),
                                        log=lambda m: print(m, file=sys.stderr)),
         lambda r: (bool(r["failures"] or r["lost"]), r["failures"] + r["lost"])),
    ]
    only = [n for n in os.environ.get("DRILL_ONLY", "").split(",") if n]
    unknown = set(only) - {name for name, _, _ in drills}
    if unknown:
        raise SystemExit(f"DRILL_ONLY: unknown drills {sorted(unknown)}")
    for name, run, judge in drills:
        if only and name not in only:
            continue
        print(f"== {name} drill", file=sys.stderr, flush=True)
        try:
            result = run()
        except Exception as e:  # a drill that cannot run is a failed drill, with its own line
            traceback.print_exc()
            result = {"line": f"{name} drill did not complete: {type(e).__name__}: {str(e)[:200]}"}
            report(result, True, [])
            continue
        failed, details = judge(result)
        report(result, failed, details)
    if record:
        for line in lines:
            append_summary(line)
        print(f"appended {len(lines)} lines to RELIABILITY.md", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
