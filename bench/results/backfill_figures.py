#!/usr/bin/env python3
"""One-off (wave 4, #24): gives the runs recorded before `figures` existed their figures, so that
bench/report.py can read every run the same way. Idempotent: run it again and nothing changes.

- Records that kept their measured metrics (main, sync, create_ab, https, live, backup) get
  "figures" built by the same code the scripts now use (bench/record.py, bench/figures.py).
- Runs that BENCHMARKS.md described only in prose (scale, refs, the glue A/B, live after the
  in-memory filters, memory) are appended as records whose figures are transcribed from that
  text, marked "source": "transcribed from ..."; the prose itself is in history-2026.md.

  python3 bench/results/backfill_figures.py
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import figures as F  # noqa: E402
import record  # noqa: E402
from benchstats import figure  # noqa: E402
from transcribed_2026 import TRANSCRIBED  # noqa: E402

# create_ab runs: what each A/B measured (its B binary), from BENCHMARKS.md's change-feed sections.
CREATE_AB = {"2026-11-24T02:49Z": "none"}  # wave4-feed vs main d21b578: both with a feed
# live runs whose writes/s the record did not keep (bench/live.py's defaults then: 200 for the fan-out)
LIVE_RATE = {"2026-11-24T01:24Z": 20, "2026-11-24T01:25Z": 200}


def load(name):
    """The file's records, each with its original line (kept byte for byte when the record is not changed)."""
    path = os.path.join(HERE, name + ".jsonl")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [(json.loads(line), line) for line in f if line.strip()]


def save(name, recs):
    with open(os.path.join(HERE, name + ".jsonl"), "w") as f:
        f.writelines(line if line is not None else json.dumps(r, ensure_ascii=False) + "\n" for r, line in recs)


def live_2204(rec):
    """The first live run (0c6286e): fan-out at 200 writes/s, p99 at 20 writes/s (two rounds), idle streams."""
    m = rec["metrics"]
    r, p = m["roostd"]["delivered_per_s"], m["PocketBase"]["delivered_per_s"]
    return [figure("live.fanout", r, "events/s", "≥ 3× PocketBase", "PocketBase", p, round(r / p, 2),
                   "1,000 subscribers, 200 writes/s"),
            figure("live.p99", m["roostd"]["p99_ms"], "ms", "≤ 50 ms", note="20 writes/s, best of 2 rounds (202 ms in the other)"),
            figure("live.idle_rss", max(x["rss_growth_mib"] for x in m["idle_rounds"]), "MiB", "≤ 40 MB more RSS",
                   note="10,000 idle streams, largest of %d rounds" % len(m["idle_rounds"]))]


def derive():
    for name in ("main", "sync", "create_ab", "https", "live", "backup"):
        recs = load(name)
        for i, (rec, _) in enumerate(recs):
            if "figures" in rec or (name == "live" and rec.get("bench") != "live.py"):
                continue
            recs[i] = (rec, None)
            if name == "main":
                rec["figures"] = record.figures_of(rec)
            elif name == "sync":
                rec["figures"] = F.sync(rec["metrics"])
            elif name == "create_ab":
                rec["figures"] = F.create_ab(rec["metrics"], CREATE_AB.get(rec["date"], "feed"))
            elif name == "https":
                rec["figures"] = F.https(rec["metrics"])
            elif name == "live":
                rec["figures"] = live_2204(rec) if rec["date"] == "2026-11-23T22:04Z" else F.live(rec["metrics"], LIVE_RATE[rec["date"]])
            elif name == "backup":
                rec.update(bench="backup.py", date=rec["when"][:16] + "Z", figures=F.backup(rec))
        save(name, recs)


def transcribe():
    for name, rec in TRANSCRIBED:
        recs = load(name)
        if not any(r.get("source") == rec["source"] and r.get("date") == rec["date"] for r, _ in recs):
            recs.append((rec, None))
            save(name, recs)


if __name__ == "__main__":
    derive()
    transcribe()
