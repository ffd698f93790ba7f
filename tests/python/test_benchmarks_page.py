"""BENCHMARKS.md's generated part is what bench/report.py renders from the committed records in
bench/results/ (so nobody edits it by hand out of step), and every target declared in
report.py's TARGETS table has at least one recorded figure. No daemon; reads files only."""

import importlib.util
import json
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


@pytest.fixture(scope="module")
def report():
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location("bench_report", BENCH / "report.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(BENCH))


def records():
    for path in sorted((BENCH / "results").glob("*.jsonl")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if line.strip():
                yield path.name, n, json.loads(line)


def test_every_results_line_is_json_and_every_run_record_is_complete():
    runs = 0
    for name, n, rec in records():
        if "figures" not in rec:
            continue
        runs += 1
        assert rec.get("date") and rec["date"].endswith("Z"), (name, n)
        assert rec.get("load_before") or rec.get("load_note") or rec.get("load") or rec["date"] < "2026-11-24T00", (name, n)
        for f in rec["figures"]:
            assert f["id"] and f["unit"] and ("value" in f or "ratio" in f), (name, n, f)
    assert runs > 50


def test_page_matches_what_report_renders(report):
    page = (ROOT / "BENCHMARKS.md").read_text()
    assert page.count(report.BEGIN) == 1 and page.count(report.END) == 1
    generated = report.BEGIN + page.split(report.BEGIN, 1)[1].split(report.END, 1)[0] + report.END
    assert generated == report.generated(), "BENCHMARKS.md is out of date: run python3 bench/report.py --write"


def test_every_declared_target_has_a_recorded_figure(report):
    missing = []
    for fid, _, _, _, name, check in report.TARGETS:
        if check and check[0] == "scale":
            sizes = [s for s in report.SIZES if check[1]] + (["cost"] if check[2] else [])
            missing += ["%s.%s" % (fid, s) for s in sizes if report.latest(name, "%s.%s" % (fid, s))[1] is None]
        elif report.latest(name, fid)[1] is None:
            missing.append(fid)
    assert not missing


def test_every_recorded_figure_names_a_declared_target(report):
    known = {t[0] for t in report.TARGETS}
    unknown = set()
    for name, n, rec in records():
        for f in rec.get("figures", []):
            if f["id"] not in known and f["id"].rsplit(".", 1)[0] not in known:
                unknown.add((name, f["id"]))
    assert not unknown


def test_the_judgement_follows_the_declared_check(report):
    assert report.met({"ratio": 3.0}, ("ratio", ">=", 3)) is True
    assert report.met({"ratio": 2.99}, ("ratio", ">=", 3)) is False
    assert report.met({"value": 5.0}, ("value", "<", 5)) is False
    assert report.met({"value": -5.0}, ("value", "abs<=", 5)) is True
    assert report.met({"value": 1}, ("ratio", ">=", 3)) is None
