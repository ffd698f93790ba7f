"""References across a crash, at start-up and in the config: kill -9 mid-cascade,
dangling references reported, bad declarations refused."""

import pathlib
import subprocess
import tempfile
import threading
import time

import pytest

from roost_harness import ADMIN_TOKEN as ADMIN, Roostd, binary
from references_support import admin, batch_create, count, create, exists, ref


CRASH = """default_permission: public
references_max_cascade: 100000
collections:
  kids:
    references:
      parent: {collection: parents, on_delete: cascade}
"""


def test_kill_9_mid_cascade_is_all_or_nothing():
    n = 4000
    with tempfile.TemporaryDirectory() as tmp:
        roost = Roostd(tmp, f"admin_token: {ADMIN}\n" + CRASH).start()
        try:
            def seed():
                parent = create(roost, "parents", {})
                batch_create(roost, "kids", [{"parent": ref("parents", parent)} for _ in range(n)])
                return parent
            first = seed()
            started = time.monotonic()
            assert admin(roost, "DELETE", f"/parents/{first}")[0] == 200
            took = time.monotonic() - started
            assert count(roost, "kids") == 0
            interrupted = False
            for fraction in (0.5, 0.3, 0.15, 0.05):
                parent = seed()
                outcome = []
                worker = threading.Thread(target=lambda: outcome.append(_try(lambda: admin(roost, "DELETE", f"/parents/{parent}"))))
                worker.start()
                time.sleep(took * fraction)
                roost.kill9()
                worker.join()
                roost.start()
                remaining, parent_left = count(roost, "kids"), exists(roost, "parents", parent)
                assert (remaining, parent_left) in ((0, False), (n, True)), (remaining, parent_left)
                print("kill at", fraction, "of", round(took, 3), "s:", outcome[0] is None and "interrupted" or "finished", "remaining", remaining)
                if outcome[0] is None:
                    interrupted = True
                    break
                admin(roost, "DELETE", f"/parents/{parent}")
            assert interrupted, f"every delete finished before the kill (a cascade of {n} took {took:.3f}s)"
        finally:
            roost.stop()


def _try(call):
    try:
        return call()
    except OSError:
        return None


def run_check(config_path, data_dir):
    return subprocess.run([str(binary()), "check-references", "--config", str(config_path), "--data-dir", str(data_dir)],
                          capture_output=True, text=True, timeout=30)


def test_dangling_references_are_reported_at_start_up_and_listed():
    with tempfile.TemporaryDirectory() as tmp:
        roost = Roostd(tmp, f"admin_token: {ADMIN}\ndefault_permission: public\n").start()
        try:
            spot = create(roost, "spots", {})
            create(roost, "catches", {"_id": "c-ok", "spot": ref("spots", spot)})
            create(roost, "catches", {"_id": "c-bad", "spot": ref("spots", "gone-1")})
            create(roost, "catches", {"_id": "c-arr", "spot": [ref("spots", spot), ref("spots", "gone-2")]})
            roost.stop()
            declared = roost.config_path.read_text() + "collections:\n  catches:\n    references:\n      spot: {collection: spots, on_delete: restrict}\n"
            roost.config_path.write_text(declared)
            # Before the daemon applies the declaration: read from the documents.
            result = run_check(roost.config_path, roost.data_dir)
            expected = ["catches/c-arr spot -> spots/gone-2", "catches/c-bad spot -> spots/gone-1"]
            assert (result.returncode, result.stdout.splitlines()) == (1, expected), result
            roost.start()
            log = roost.log_text()
            line = next(l for l in log.splitlines() if "dangling references" in l)
            assert "catches" in line and "count=2" in line.replace('"', "").replace(": ", "="), line
            # The daemon runs: the listing now comes from _refs, the same.
            result = run_check(roost.config_path, roost.data_dir)
            assert (result.returncode, result.stdout.splitlines()) == (1, expected), result
            assert admin(roost, "DELETE", f"/spots/{spot}")[1]["count"] == 2
            assert admin(roost, "PATCH", "/catches/c-bad", {"spot": None})[0] == 200
            assert admin(roost, "DELETE", "/catches/c-arr")[0] == 200
            result = run_check(roost.config_path, roost.data_dir)
            assert (result.returncode, result.stdout) == (0, ""), result
        finally:
            roost.stop()


BAD_CONFIGS = [
    ("files are no target", "x:\n    references:\n      f: {collection: files}", "files cannot be referenced"),
    ("unknown mode", "x:\n    references:\n      f: {collection: y, on_delete: explode}", "restrict, cascade or nullify"),
    ("dotted field", "x:\n    references:\n      a.b: {collection: y}", "top-level field"),
    ("unknown key", "x:\n    references:\n      f: {collection: y, cascade: true}", "unknown setting"),
]


@pytest.mark.parametrize("label,yaml,message", BAD_CONFIGS, ids=[c[0] for c in BAD_CONFIGS])
def test_bad_reference_declarations_are_config_errors(tmp_path, label, yaml, message):
    path = pathlib.Path(tmp_path) / "roost.yaml"
    path.write_text("collections:\n  " + yaml + "\n")
    result = subprocess.run([str(binary()), "check-config", "--config", str(path)], capture_output=True, text=True, timeout=30)
    assert result.returncode != 0 and message in result.stderr + result.stdout, result
