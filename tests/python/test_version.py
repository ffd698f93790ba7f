"""The version is kept in one place: roostd --version, the status page,
openapi.yaml and CHANGELOG.md's newest entry all say the same."""
import os
import pathlib
import re
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_version_agrees_everywhere(roostd):
    binary = os.environ.get("ROOSTD", str(REPO / ".build" / "debug" / "roostd"))
    cli = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    assert re.fullmatch(r"\d+\.\d+\.\d+", cli), cli
    spec = re.search(r"^  version: (\S+)$", (REPO / "openapi.yaml").read_text(), re.M).group(1)
    changelog = re.search(r"^## \[(\d+\.\d+\.\d+)\]", (REPO / "CHANGELOG.md").read_text(), re.M).group(1)
    status, _, page = roostd.request("GET", "/")
    assert status == 200
    assert (cli, spec, changelog) == (cli, cli, cli)
    assert cli in page.decode()
