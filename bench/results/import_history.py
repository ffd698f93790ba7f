#!/usr/bin/env python3
"""One-off: turns the run reports of history-2026.md (BENCHMARKS.md as it was until
wave three, text kept verbatim) into main.jsonl records, the shape bench/record.py writes.

  bench/results/import_history.py > bench/results/main.jsonl

Only the full `## Run` reports become records; the summaries of lost reports and the
hand-written sections stay in the Markdown. Fields the old text did not have are absent.
"""
import json
import pathlib
import re

HERE = pathlib.Path(__file__).resolve().parent


def number(text):
    m = re.match(r"\s*([0-9.]+)", text)
    return float(m.group(1)) if m else None


def errors(text):
    """'0', '96 × 503 (37.9%)' or '**179** (82.5%; 166 × 503, 13 timeouts)' -> counts."""
    t = text.replace("*", "")
    out = {"errors": int(number(t) or 0) if t[:1].isdigit() else 0}
    m = re.search(r"(\d+) × 503", t)
    out["s503"] = int(m.group(1)) if m else 0
    m = re.search(r"(\d+) timeouts", t)
    out["timeouts"] = int(m.group(1)) if m else 0
    return out


def row(cells):
    workload, server, conns, rate, p50, p99, errs, ratio = (cells + [""] * 8)[:8]
    r = {"workload": workload, "server": server, "conns": int(conns)}
    if rate.startswith("skipped"):
        r["rps"] = None
    else:
        r["rps"] = number(rate)
        m = re.search(r"best of ([^)]*)\)", rate)
        if m:
            r["rounds"] = [None if x.strip() == "skipped" else float(x) for x in m.group(1).split("/")]
        r["p50_ms"], r["p99_ms"] = number(p50), number(p99)
        r.update(errors(errs))
    m = re.search(r"([0-9.]+)×\*?\*? \(vs ([^)]*)\)", ratio)
    if m:
        r["ratio"], r["ratio_vs"] = float(m.group(1)), "PocketBase (%s)" % m.group(2)
    return r


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def records(text):
    for section in re.split(r"\n(?=## )", text):
        head = re.match(r"## Run (\d{4}-\d\d-\d\d \d\d:\d\d) UTC(.*)", section)
        if not head or "| workload | server |" not in section:
            continue
        rec = {"bench": "run.sh", "date": head.group(1).replace(" ", "T") + "Z", "source": "history-2026.md"}
        if head.group(2).strip():
            rec["heading_note"] = head.group(2).strip(" ()")
        rows, targets, notes, table = [], [], [], None
        for line in section.splitlines():
            field = re.match(r"- (machine|versions|load|data|files): (.*)", line)
            if field:
                rec[field.group(1)] = field.group(2)
            elif line.startswith("- note: "):
                notes.append(line[8:])
            elif line.startswith("| workload | server |"):
                table = "runs"
            elif line.startswith("| workload | target |"):
                table = "targets"
            elif line.startswith("|---"):
                continue
            elif line.startswith("| ") and table == "runs":
                rows.append(row(cells(line)))
            elif line.startswith("| ") and table == "targets":
                w, target, measured, verdict = (cells(line) + [""] * 4)[:4]
                targets.append({"workload": w, "target": target, "measured": measured,
                                "verdict": verdict.replace("*", "")})
            elif not line.startswith("|"):
                table = None
        m = re.search(r"\(([0-9a-f]{7})[ ,]", rec.get("versions", "")) or re.search(r"on ([0-9a-f]{7})", rec.get("versions", ""))
        rec["commit"] = m.group(1) if m else None
        rec.update(rows=rows, targets=targets, notes=notes)
        yield rec


if __name__ == "__main__":
    for rec in records((HERE / "history-2026.md").read_text()):
        print(json.dumps(rec, ensure_ascii=False))
