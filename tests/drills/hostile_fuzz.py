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
# at --request-timeout 20 the ~250 streams of the quick run (3 examples; the coverage
# phase makes most of them) would add about 40 minutes. So these operations get 1 s
# (about 1 minute over 4 workers; their 4xx answers come at once) and the rest keep 20 s.
# They are still fuzzed, not excluded: bad subscribe, query, since and Last-Event-ID get
# their 400s, and the events a 200 sends are checked against the spec's LiveEvent schema.
#
# An [[operations]] block names its operations (`include-name`): schemathesis ORs
# `include-method` with `include-path-regex`, so a block with both applied to every GET.
#
# `--checks all` runs with these settings, each because the spec cannot say more:
# - positive_data_acceptance also expects 412: the generator makes up `If-Match` and
#   `If-None-Match` values, and a made-up ETag fails its precondition (RFC 9110 §13.1).
# - negative_data_rejection also expects 412: preconditions are evaluated before the
#   request content (RFC 9110 §13.2.1), so an invalid body under a failing `If-Match` is 412.
# - `since` and `Last-Event-ID` (delta sync, live streams) are opaque cursors this
#   daemon issued, bound to its data's epoch: a made-up one is 400 `InvalidCursor`
#   by design, so those operations also expect 400 for schema-valid requests, and a
#   delta without credentials may get that 400 before the 401. A well-formed cursor
#   sealed by another database (the spec's own example is one) is 410 `CursorExpired`.
# - POST /files also expects 415 and 422 for schema-valid uploads: a body or file part
#   declared `image/png` (etc.) must hold a whole image of that type, which JSON
#   Schema cannot say of `format: binary` bytes (the generator writes images with
#   made-up content, or bytes of another type, under an image Content-Type).
# - The collections admin API also expects 400 for schema-valid requests: a collection's
#   rules and schema are JSON the spec can only call objects, and the config file's parser
#   (which the API shares) refuses what it cannot compile; `confirm` must equal the path's name.
# - GET /files/{id} and its thumbnail also expect 416 for schema-valid requests: a
#   `Range` must overlap the file's bytes (RFC 9110 §15.5.17), and the file's size
#   is not something a parameter schema can know.
# - The account routes' one-time secrets: a mail's 6-digit code and link token, a
#   two-factor ticket and an ID token are issued by roostd (or a provider), and an ID
#   token's provider is a name from the operator's oidc_providers (the drill configures
#   none). A made-up one is 400 `InvalidCode` (`InvalidDocument` for a provider) by
#   design, so those operations also expect 400 for schema-valid requests, as `since` does.
# - A document's `_acl.read` and `_acl.write` entries must name existing users or
#   `role:<name>` of existing roles (docs/ROLES.md), which no schema can know (the spec's
#   own Acl example names a made-up id): the writes that take a document also expect 400
#   for schema-valid requests.
# - The daemon runs with `signup_requires: either` (hostile.CONFIG): the spec's SignUp
#   takes a username, an email or both, and which one an operator requires is theirs.
# - QUERY is excluded (`--exclude-method`, which also keeps the coverage phase from
#   sending it as an undeclared method): libevent 2.1 answers a method it does not know
#   with its own 501 before roostd sees the request (RFC 9110 gives 501 for an
#   unrecognised method). roostd's own 405s for the rest (TRACE, ...) are checked by
#   the unsupported_method check and by test_trace_gets_a_json_405_not_libevents_501.
#   (While every path had that 501, schemathesis stopped testing each operation at it,
#   so the coverage phase used to send about half of its requests.)
# Operations left out of the fuzz, by name ("METHOD /path"):
# - The admin API is in the spec too and fuzzed with the admin token, except backups and
#   webhook endpoints: made-up endpoints would send deliveries to made-up hosts, and every
#   accepted POST /admin/backups is a whole backup. Their handlers are tested directly
#   (test_backups.py, test_webhooks.py).
NOT_FUZZED = "^(GET|POST|DELETE) /admin/(backups|webhooks/endpoints)"

SCHEMATHESIS_CONFIG = """\
[checks.positive_data_acceptance]
expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "412", "429"]

[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "412", "413", "415", "422", "428", "429"]

[[operations]]
include-path-regex = "^/events$|/_live$"
request-timeout = 1
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "412", "429"]

# A list's `after` is a cursor Roost handed out: a made-up one is 400, as for `since`.
[[operations]]
include-name = ["GET /users", "GET /{collection}"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "412", "429"]

[[operations]]
include-name = ["POST /auth/verify-email", "GET /auth/verify-email", "POST /auth/password-reset", "POST /auth/email-change",
                "GET /auth/email-change", "POST /auth/2fa/verify", "POST /auth/idtoken", "POST /auth/idtoken/link"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "412", "429"]

[[operations]]
include-path-regex = "/_deltaset$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "410", "412", "429"]
checks.missing_required_header.expected-statuses = ["400", "401", "403", "406", "415", "422"]

[[operations]]
include-name = ["GET /files/{id}", "GET /files/{id}/thumbnail"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "412", "416", "429"]

[[operations]]
include-name = ["POST /{collection}", "PUT /{collection}/{id}", "PATCH /{collection}/{id}", "POST /_batch", "PUT /users/{id}", "PATCH /users/{id}"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "412", "429"]

# The collections admin API: settings the generator makes up (a rule, a schema, an index
# path, a reference) go through the config file's parser, which refuses most (400
# `InvalidSettings`); emptying and dropping want `confirm` to repeat the name (400 otherwise).
[[operations]]
include-name = ["POST /admin/collections", "PATCH /admin/collections/{name}", "DELETE /admin/collections/{name}",
                "POST /admin/collections/{name}/empty"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "412", "429"]

[[operations]]
include-name = "POST /files"
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "412", "415", "422", "429"]
"""


def schemathesis_command():
    exe = shutil.which("schemathesis", path=str(pathlib.Path(sys.executable).parent))
    if exe:
        return [exe]
    return [sys.executable, "-m", "schemathesis.cli"]


def run_fuzz(daemon, max_examples=50, max_time=None, seed=None, workdir=None, phases=None, token=ADMIN_TOKEN,
             checks=SCHEMATHESIS_CHECKS, log=print):
    """schemathesis against openapi.yaml: 5xx (ST101), a crash and every conformance finding are reported."""
    workdir = pathlib.Path(workdir or tempfile.mkdtemp(prefix="roost-fuzz-"))
    report = workdir / "schemathesis.json"
    config = workdir / "schemathesis.toml"
    config.write_text(SCHEMATHESIS_CONFIG)
    cmd = schemathesis_command() + [
        "--config-file", str(config), "run", str(REPO / "openapi.yaml"), "--url", f"http://127.0.0.1:{daemon.port}", "--checks", checks, "--exclude-method", "QUERY",
        "--exclude-name-regex", NOT_FUZZED,
        "--max-examples", str(max_examples), "--no-shrink", "--workers", "4", "--request-timeout", "20",
        "--report", "json", "--report-json-path", str(report), "--warnings", "off"]
    if token:
        cmd += ["-H", f"Authorization: Bearer {token}"]
    if max_time:
        cmd += ["--max-time", str(int(max_time))]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    if phases:
        cmd += ["--phases", phases]
    env = dict(os.environ, SCHEMATHESIS_HOOKS=str(pathlib.Path(__file__).with_name("schemathesis_hooks.py")), NO_COLOR="1")
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
    server_errors, mismatches = [], []
    for failure in data["failures"]:
        for op in failure["operations"]:
            entry = f"{failure['code']} {failure['title']}: {op}"
            (server_errors if failure["code"] == "ST101" else mismatches).append(entry)
    errors = [f"{e.get('operation', '')}: {str(e.get('message', e))[:200]}" for e in data.get("errors", [])]
    crashed = not daemon.alive() or not daemon.healthy(timeout=5)
    failures = len(server_errors) + int(crashed)
    line = (f"schemathesis {data['schemathesis_version']} fuzz (seed {data['seed']}): {generated} requests over "
            f"{data['operations']['tested']} operations, {failures} failures ({len(server_errors)} 5xx, "
            f"{'a crash' if crashed else 'no crash'}), "
            f"{len(mismatches)} spec conformance findings, {len(errors)} errors; 0 lost; {time.monotonic() - t0:.0f} s")
    return {"line": line, "generated": generated, "server_errors": server_errors,
            "mismatches": mismatches, "errors": errors, "crashed": crashed, "output": output, "report": data}
