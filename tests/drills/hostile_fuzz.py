"""The hostile drill's fuzz part: schemathesis against openapi.yaml."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

from roost_harness import REPO

from .common import ADMIN_TOKEN


# --------------------------------------------------------------------------- schemathesis

SCHEMATHESIS_CHECKS = "all"

# The live streams (GET /events, /{collection}/_live, /users/_live, /files/_live) never end
# on their own. schemathesis (4.32+) reads a text/event-stream until it ends, sends 20
# events or the request timeout passes, then checks the events it got against the spec, so
# an open 200 stream is a pass, not a hang. But an idle stream lasts the whole timeout
# (heartbeats are comments, not events; with the 15 s heartbeat a read can run to 30 s):
# at --request-timeout 20 the ~40 streams of the quick run (3 examples) would add about
# 8 minutes. So these operations get 3 s (about 1 minute; their 4xx answers come at once)
# and the rest keep 20 s. They are still fuzzed, not excluded: bad subscribe, query, since
# and Last-Event-ID get their 400s, and the events a 200 sends are checked against the
# spec's LiveEvent schema.
#
# `--checks all` runs with these settings, each because the spec cannot say more:
# - positive_data_acceptance also expects 412: the generator makes up `If-Match` and
#   `If-None-Match` values, and a made-up ETag fails its precondition (RFC 9110 §13.1).
# - negative_data_rejection also expects 412: preconditions are evaluated before the
#   request content (RFC 9110 §13.2.1), so an invalid body under a failing `If-Match` is 412.
# - `since` and `Last-Event-ID` (delta sync, live streams) are opaque cursors this
#   daemon issued, bound to its data's epoch: a made-up one is 400 `InvalidCursor`
#   by design, so those operations also expect 400 for schema-valid requests, and a
#   delta without credentials may get that 400 before the 401.
# - unsupported_method is excluded (--exclude-checks): libevent 2.1 answers a method it does not know (QUERY)
#   itself, 501 or 400, before roostd sees the request; roostd's own 405s (TRACE, ...)
#   are tested by test_trace_gets_a_json_405_not_libevents_501.
SCHEMATHESIS_CONFIG = """\
[checks.positive_data_acceptance]
expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "412", "429"]

[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "412", "413", "415", "422", "428", "429"]

[[operations]]
include-path-regex = "^/events$|/_live$"
request-timeout = 3
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "412", "429"]

# A list's `after` is a cursor Roost handed out: a made-up one is 400, as for `since`.
[[operations]]
include-path-regex = "^/users$|^/.collection.$"
include-method = "GET"
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "412", "429"]

[[operations]]
include-path-regex = "/_deltaset$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "412", "429"]
checks.missing_required_header.expected-statuses = ["400", "401", "403", "406", "415", "422"]
"""


def schemathesis_command():
    exe = shutil.which("schemathesis", path=str(pathlib.Path(sys.executable).parent))
    if exe:
        return [exe]
    return [sys.executable, "-m", "schemathesis.cli"]


def run_fuzz(daemon, max_examples=50, max_time=None, seed=None, workdir=None, phases=None, token=ADMIN_TOKEN,
             checks=SCHEMATHESIS_CHECKS, log=print):
    """schemathesis against openapi.yaml. Failures: 5xx (ST101) and a crash."""
    workdir = pathlib.Path(workdir or tempfile.mkdtemp(prefix="roost-fuzz-"))
    report = workdir / "schemathesis.json"
    config = workdir / "schemathesis.toml"
    config.write_text(SCHEMATHESIS_CONFIG)
    cmd = schemathesis_command() + [
        "--config-file", str(config), "run", str(REPO / "openapi.yaml"), "--url", f"http://127.0.0.1:{daemon.port}", "--checks", checks, "--exclude-checks", "unsupported_method",
        "--max-examples", str(max_examples), "--no-shrink", "--workers", "2", "--request-timeout", "20",
        "--report", "json", "--report-json-path", str(report), "--warnings", "off"]
    if token:
        cmd += ["-H", f"Authorization: Bearer {token}"]
    if max_time:
        cmd += ["--max-time", str(int(max_time))]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    if phases:
        cmd += ["--phases", phases]
    env = dict(os.environ, SCHEMATHESIS_HOOKS="", NO_COLOR="1")
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=str(workdir), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=(max_time or 600) + 120)
    output = proc.stdout.decode(errors="replace")
    (workdir / "schemathesis.out").write_text(output)
    try:
        data = json.loads(report.read_text())
    except (OSError, ValueError):
        data = None
    if data is None:
        raise RuntimeError(f"schemathesis produced no report (exit {proc.returncode}):\n{output[-3000:]}")
    generated = data["test_cases"]["generated"]
    server_errors, undeclared_501, mismatches = [], [], []
    for failure in data["failures"]:
        for op in failure["operations"]:
            entry = f"{failure['code']} {failure['title']}: {op}"
            if failure["code"] == "ST101":
                method = op.split(" ", 1)[0]
                # A method libevent 2.1 does not know at all (e.g. QUERY) gets its
                # own 501 before roostd sees the request; 501 is the status RFC 9110
                # gives an unrecognised method, so it is counted apart, not failed.
                known = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT")
                (server_errors if method in known else undeclared_501).append(entry)
            elif failure["code"] != "ST204":
                mismatches.append(entry)
    errors = [f"{e.get('operation', '')}: {str(e.get('message', e))[:200]}" for e in data.get("errors", [])]
    crashed = not daemon.alive() or not daemon.healthy(timeout=5)
    failures = len(server_errors) + int(crashed)
    line = (f"schemathesis {data['schemathesis_version']} fuzz (seed {data['seed']}): {generated} requests over "
            f"{data['operations']['tested']} operations, {failures} failures ({len(server_errors)} 5xx from handlers, "
            f"{len(undeclared_501)} libevent 501s for unknown methods, {'a crash' if crashed else 'no crash'}), "
            f"{len(mismatches)} spec conformance findings, {len(errors)} errors; 0 lost; {time.monotonic() - t0:.0f} s")
    return {"line": line, "generated": generated, "server_errors": server_errors, "undeclared_501": undeclared_501,
            "mismatches": mismatches, "errors": errors, "crashed": crashed, "output": output, "report": data}
