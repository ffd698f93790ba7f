"""The short schemathesis run of the drills (`--checks all` against openapi.yaml).

It judges answers, not time or load, so it runs in `make test`'s parallel part
(tests/python/conftest.py: PARALLEL_DRILLS) rather than alone afterwards."""

from drills import hostile
from drills.test_drills_quick import hostile_daemon  # noqa: F401 (the drills' daemon, a pytest fixture)


def test_schemathesis_all_checks_find_nothing(hostile_daemon, tmp_path):
    # Bounded by examples per operation, not by a clock: a 15 s limit once let a slow CI
    # machine test 14 of the operations. (With --max-time, schemathesis's fuzzing phase runs
    # until the clock, so none is given; run_fuzz's subprocess timeout is the ceiling.)
    result = hostile.run_fuzz(hostile_daemon, max_examples=3, workdir=tmp_path, seed=20261123,
                              phases="examples,coverage,fuzzing")
    print(result["line"])
    assert not result["crashed"]
    assert result["server_errors"] == [], result["server_errors"]
    # --checks all: any disagreement between openapi.yaml and the server fails (details in schemathesis.out).
    assert result["mismatches"] == [], (result["mismatches"], result["output"][-6000:])
    operations = result["report"]["operations"]
    # Every selected operation was tested; those left out are only the ones NOT_FUZZED names.
    assert operations["tested"] == operations["selected"], result["line"]
    assert operations["selected"] >= operations["total"] - 40, operations
    assert result["generated"] > 100
