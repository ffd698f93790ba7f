"""The README's five-minute tour cannot rot (issue #41): every `sh` block of
its "A five-minute tour" section runs, in order and in one bash (variables
carry over, `set -euo pipefail`), against a real roostd with
etc/roost/dev.yaml, and what the README says each prints is checked."""

import json
import re
import subprocess

import pytest

from roost_harness import REPO, Roostd, png

DECODE = json.JSONDecoder().raw_decode
TOUR = re.compile(r"^## A five-minute tour\n(.*?)^## ", re.M | re.S)


def tour_blocks():
    section = TOUR.search((REPO / "README.md").read_text())
    assert section, "README.md lost its '## A five-minute tour' section"
    return re.findall(r"^```sh\n(.*?)^```", section.group(1), re.M | re.S)


def test_the_tour_has_every_step():
    text = "\n".join(tour_blocks())
    for step in ("/users", "/login", "/notes", "If-Match", "/files", "thumbnail", "/messages", "_live", "_deltaset"):
        assert step in text, step


@pytest.fixture
def dev_daemon(tmp_path):
    config = (REPO / "etc" / "roost" / "dev.yaml").read_text()
    with Roostd(tmp_path / "daemon", config).start() as d:
        yield d


def test_every_tour_block_runs(dev_daemon, tmp_path):
    blocks = tour_blocks()
    script = "set -euo pipefail\n" + "".join(f"echo '=== block {i}'\n{b}" for i, b in enumerate(blocks))
    (tmp_path / "photo.png").write_bytes(png(300, 200, 11))
    r = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       env={"PATH": "/usr/bin:/bin", "ROOST": dev_daemon.base, "HOME": str(tmp_path)})
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}\n{dev_daemon.log_tail()}"
    out = r.stdout
    parts = re.split(r"^=== block \d+\n", out, flags=re.M)[1:]
    assert len(parts) == len(blocks), out
    signup, private, conditional, upload, live, delta, script = parts
    assert json.loads(signup)["username"] == "ada"
    note, end = DECODE(private)
    assert note["text"] == "buy milk" and note["_acl"]["creator"]
    assert private[end:].split() == ["1", "0", '"buy', 'milk"'], private
    assert conditional.strip() == '"buy oat milk"'
    meta, _ = DECODE(upload)
    assert meta == {"contentType": "image/png", "width": 300, "height": 200}
    assert re.search(r"^200 image/", upload, re.M), upload
    assert (tmp_path / "thumb.png").stat().st_size > 0
    assert '"lunch?"' in live and "event: create" in live and '"text":"lunch?"' in live
    assert json.loads(delta) == ["12:30?"]
    assert script.strip() == "price must be a number >= 0", script
