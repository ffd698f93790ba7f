"""The version is kept in one place: roostd --version, the status page,
openapi.yaml and CHANGELOG.md's newest entry all say the same."""
import os
import pathlib
import re
import subprocess

from roost_harness import ADMIN_TOKEN, running_roostd

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_version_agrees_everywhere(roostd):
    binary = os.environ.get("ROOSTD", str(REPO / ".build" / "debug" / "roostd"))
    cli = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    assert re.fullmatch(r"\d+\.\d+\.\d+", cli), cli
    spec = re.search(r"^  version: (\S+)$", (REPO / "openapi.yaml").read_text(), re.M).group(1)
    changelog = re.search(r"^## \[(\d+\.\d+\.\d+)\]", (REPO / "CHANGELOG.md").read_text(), re.M).group(1)
    assert (cli, spec, changelog) == (cli, cli, cli)
    # the status page names it to the operator only (server_info: admin, the default)
    with running_roostd(f"admin_token: {ADMIN_TOKEN}\n") as d:
        status, _, page = d.request("GET", "/", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        assert status == 200 and f"Roost {cli}" in page.decode()
        status, _, page = d.request("GET", "/")
        assert status == 200 and cli not in page.decode()
