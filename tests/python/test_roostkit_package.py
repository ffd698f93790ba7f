"""RoostKit as a package of its own (Clients/RoostKit; issue #40): the publish
script splits it into a tagged repository, that repository builds and passes
its unit tests in an empty directory with no daemon dependency, and an app
resolves it by version. Needs no roostd; one `swift build` of the client."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "Clients" / "RoostKit"
SCRIPT = ROOT / "scripts" / "publish-roostkit.sh"
VERSION = re.search(r'current = "([^"]+)"', (CLIENT / "Sources/RoostKit/RoostKitVersion.swift").read_text()).group(1)


def run(args, cwd, check=True, timeout=120):
    p = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError(f"{args} failed ({p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p


def git(cwd, *args, check=True):
    return run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd, check=check)


def make_source_repo(path):
    """A repository holding Clients/RoostKit as committed here (build products left out)."""
    path.mkdir()
    git(path, "init", "-q", "-b", "trunk")
    shutil.copytree(CLIENT, path / "Clients" / "RoostKit", ignore=shutil.ignore_patterns(".build*", ".swiftpm"))
    (path / "roostd.txt").write_text("the daemon's files stay behind\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def publish(repo, *extra, check=True):
    return run([str(SCRIPT), "--repo", str(repo), *extra], ROOT, check=check)


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    base = tmp_path_factory.mktemp("roostkit-publish")
    source = make_source_repo(base / "source")
    remote = base / "remote.git"
    git(base, "init", "-q", "--bare", "-b", "main", str(remote))
    out = publish(source, "--push", str(remote)).stdout
    app = base / "RoostKit"
    git(base, "clone", "-q", str(remote), str(app))
    return {"base": base, "source": source, "remote": remote, "app": app, "out": out}


def test_split_repository_has_the_package_at_its_root_and_a_version_tag(published):
    app, source = published["app"], published["source"]
    assert (app / "Package.swift").is_file()
    assert (app / "Sources/RoostKit/Client/RoostClient.swift").is_file()
    assert not (app / "roostd.txt").exists() and not (app / "Clients").exists()
    assert (app / ".github/workflows/ci.yml").is_file()
    tags = git(app, "ls-remote", "--tags", str(published["remote"])).stdout
    assert f"refs/tags/{VERSION}" in tags
    head = git(app, "rev-parse", "HEAD").stdout.strip()
    assert git(app, "rev-parse", f"{VERSION}^{{commit}}").stdout.strip() == head
    # The main repository keeps the split branch and a prefixed tag (its own tags are roostd's).
    assert git(source, "rev-parse", "roostkit-release").stdout.strip() == head
    assert git(source, "rev-parse", f"roostkit-{VERSION}^{{commit}}").stdout.strip() == head
    assert f"roostkit-{VERSION}" in published["out"]
    # The published files are exactly the package's.
    published_files = set(git(app, "ls-files").stdout.split())
    client_files = {str(p.relative_to(CLIENT)) for p in CLIENT.rglob("*")
                    if p.is_file() and ".build" not in p.parts and ".swiftpm" not in p.parts}
    assert published_files == client_files


def test_split_package_declares_no_dependencies_and_every_apple_platform(published):
    app = published["app"]
    manifest = (app / "Package.swift").read_text()
    assert ".package(" not in manifest and "pkgConfig" not in manifest
    deps = json.loads(run(["swift", "package", "show-dependencies", "--format", "json"], app, timeout=300).stdout)
    assert deps["dependencies"] == []
    described = json.loads(run(["swift", "package", "dump-package"], app, timeout=300).stdout)
    platforms = {p["platformName"]: p["version"] for p in described["platforms"]}
    assert platforms == {"ios": "15.0", "macos": "12.0", "tvos": "15.0", "watchos": "8.0", "visionos": "1.0"}


def test_split_package_builds_and_passes_its_unit_tests_in_an_empty_directory(published):
    app = published["app"]
    run(["swift", "build", "--build-tests"], app, timeout=1200)
    result = run(["swift", "test", "--skip-build"], app, timeout=300)
    text = result.stdout + result.stderr
    count = re.search(r"Test run with (\d+) tests? .*passed", text)
    assert count and int(count.group(1)) >= 5, text[-2000:]


def test_an_app_resolves_it_by_version_from_the_published_repository(published):
    consumer = published["base"] / "App"
    (consumer / "Sources" / "App").mkdir(parents=True)
    (consumer / "Sources/App/main.swift").write_text("import RoostKit\nprint(RoostKitVersion.current)\n")
    (consumer / "Package.swift").write_text(f"""// swift-tools-version:6.0
import PackageDescription
let package = Package(name: "App", platforms: [.iOS(.v15), .macOS(.v12)],
    dependencies: [.package(url: "file://{published['remote']}", from: "{VERSION}")],
    targets: [.executableTarget(name: "App", dependencies: [.product(name: "RoostKit", package: "remote")])])
""")
    run(["swift", "package", "resolve"], consumer, timeout=300)
    pins = json.loads((consumer / "Package.resolved").read_text())["pins"]
    assert [(p["identity"], p["state"].get("version")) for p in pins] == [("remote", VERSION)]


@pytest.mark.parametrize("case", ["dirty tree", "changelog mismatch", "tag names another commit"])
def test_publish_script_refuses(tmp_path, case):
    source = make_source_repo(tmp_path / "source")
    client = source / "Clients/RoostKit"
    if case == "dirty tree":
        (client / "Sources/RoostKit/Extra.swift").write_text("// not committed\n")
        expected = "uncommitted changes"
    elif case == "changelog mismatch":
        changelog = client / "CHANGELOG.md"
        changelog.write_text(changelog.read_text().replace(f"## [{VERSION}]", "## [9.9.9]", 1))
        git(source, "commit", "-q", "-am", "changelog ahead of the code")
        expected = "newest entry is 9.9.9"
    else:
        publish(source)
        publish(source)  # again on the same commit: the same split, the same tag
        (client / "README.md").write_text("changed without a new version\n")
        git(source, "commit", "-q", "-am", "a change, same version")
        expected = "bump the version"
    result = publish(source, check=False)
    assert result.returncode != 0
    assert expected in result.stderr
