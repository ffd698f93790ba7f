"""Hostile-input drill: fuzzing, a corpus of nasty requests, slow clients.

Four parts, each against its own roostd on a loopback port, each printing
one summary line:

  fuzz       schemathesis generates requests from openapi.yaml (examples,
             coverage, fuzzing and stateful phases): zero 5xx, no crash,
             /healthz answers afterwards, and no conformance finding (a
             status, header or body the spec does not describe).
  corpus     malformed JSON, 100k-deep nesting, huge bodies, corrupt and
             truncated images, decompression-bomb headers, path-traversal ids,
             $where/$function/$expr, odd headers and ranges: no 5xx, no crash,
             no leaked bytes; every error of a well-formed request is the JSON
             {error, description} with X-Request-Id (README's contract).
  bounds     the resource bounds of the hostile review (issue #14): query
             paths of 6 to 500 parts, objects with 85k keys (stored, patched,
             rendered as HTML, and sent anonymously to PUT /users/x), regex
             heap and backtracking (8,000 empty groups against a 20 kB
             string, patterns over 1 KiB), NUL bytes in filters and documents,
             and 200 distinct thumbnail widths of one image. Each class runs
             under a /healthz probe (from its own process) and an RSS watch:
             no 5xx but 503, JSON errors, RSS growth under 200 MiB, every
             probe under 100 ms, at most 16 one-off variants kept per file.
  slowloris  hundreds of connections send their headers one byte at a time
             while a probe measures /healthz on fresh connections: no probe
             fails, and the p99 is reported.

`PYTHONPATH=tests python -m drills.hostile` runs all four at the `make drills` sizes.
"""

import argparse
import sys
import tempfile

from roost_harness import Roostd

from .common import ADMIN_TOKEN
from .hostile_bounds import run_bounds
from .hostile_corpus import _big_request, run_corpus  # noqa: F401 (_big_request: test_drills_quick)
from .hostile_fuzz import run_fuzz
from .hostile_slowloris import run_slowloris


CONFIG = f"""\
default_permission: public
files_permission: public
max_upload_bytes: 4194304
admin_token: "{ADMIN_TOKEN}"
# openapi.yaml's SignUp takes a username, an email or both; `either` accepts all three.
signup_requires: either
# The messaging collections' own rules (a message names its recipients and text) are more
# than the spec's one /{{collection}} route can say, and the fuzz learns their names from
# GET /admin/hooks; test_hostile_ids_messages.py and test_references.py test them.
messaging:
  enabled: false
"""


# --------------------------------------------------------------------------- main

def with_daemon(fn, workdir=None, config=CONFIG):
    own = None
    if workdir is None:
        own = tempfile.TemporaryDirectory(prefix="roost-hostile-")
        workdir = own.name
    daemon = Roostd(workdir, config)
    try:
        daemon.start()
        return fn(daemon)
    finally:
        daemon.close()
        if own is not None:
            own.cleanup()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default="corpus,bounds,slowloris,fuzz")
    ap.add_argument("--keys", type=int, default=85_000)
    ap.add_argument("--variants", type=int, default=200)
    ap.add_argument("--connections", type=int, default=300)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--max-examples", type=int, default=100)
    ap.add_argument("--max-time", type=int, default=300)
    ap.add_argument("--seed", type=int)
    args = ap.parse_args(argv)
    bad = False
    for part in args.parts.split(","):
        if part == "corpus":
            r = with_daemon(lambda d: run_corpus(d, seed=args.seed or 1))
            for e in r["server_errors"] + r["leaks"] + r["unexpected"] + r["contract"] + r["no_answer"]:
                print("  ", e, file=sys.stderr)
            bad |= bool(r["server_errors"] or r["crashed"] or r["leaks"])
        elif part == "bounds":
            r = with_daemon(lambda d: run_bounds(d, args.keys, args.variants, log=lambda m: print(m, file=sys.stderr)))
            for e in r["failures"][:40]:
                print("  ", e, file=sys.stderr)
            bad |= bool(r["failures"] or r["crashed"])
        elif part == "slowloris":
            r = with_daemon(lambda d: run_slowloris(d, args.connections, args.seconds))
            for e in r["failures"][:20]:
                print("  ", e, file=sys.stderr)
            bad |= bool(r["failures"])
        elif part == "fuzz":
            r = with_daemon(lambda d: run_fuzz(d, args.max_examples, args.max_time, args.seed))
            for e in r["server_errors"] + r["mismatches"] + r["errors"]:
                print("  ", e, file=sys.stderr)
            bad |= bool(r["server_errors"] or r["crashed"] or r["mismatches"])
        else:
            raise SystemExit(f"unknown part {part}")
        print(r["line"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
