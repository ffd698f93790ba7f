"""The .deb and the tarball (issue #41), from the release build (`make
test-package`; `make test` packages its debug build the same way), which
names them in ROOST_DEB and ROOST_DIST. The
.deb is installed on this machine (root), and roostd is started exactly as
its unit would start it: the unit's ExecStart, Environment and User, a
listening socket passed as roostd.socket passes it (LISTEN_FDS), and the
Swift toolchain hidden (a mount namespace with /opt/swift empty), so only
what the package installs can be loaded. Upgrading keeps the data; remove
keeps /var/lib/roost, purge deletes it. The tarball runs the same way."""

import os
import pathlib
import pwd
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time

import pytest

from roost_harness import call, png

DEB, DIST = os.environ.get("ROOST_DEB"), os.environ.get("ROOST_DIST")
BINARY, VERSION = os.environ.get("ROOST_RELEASE_BINARY"), os.environ.get("ROOST_VERSION")
UNIT = pathlib.Path("/lib/systemd/system/roostd.service")
PACKAGING = pathlib.Path(__file__).resolve().parents[2] / "packaging"
TOOLCHAIN = "/opt/swift"

# Not skipped: `make test-package` always names the artifacts, and a run without them is a failure to see.
assert DEB and DIST and BINARY and VERSION, "run through `make test-package` (ROOST_DEB, ROOST_DIST, ROOST_RELEASE_BINARY, ROOST_VERSION)"
assert os.geteuid() == 0, "installs a .deb: run as root"

# In a new mount namespace: the toolchain's directory empty, then the unit's
# user, umask and environment, the socket at fd 3 with LISTEN_PID = this pid, exec.
LAUNCH = """
import os, sys
uid, gid, fd = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
os.dup2(fd, 3); os.close(fd); os.set_inheritable(3, True)
os.setgroups([]); os.setgid(gid); os.setuid(uid); os.umask(0o077)
env = dict(a.split("=", 1) for a in sys.argv[4].split("\\0") if a)
env.update(LISTEN_FDS="1", LISTEN_PID=str(os.getpid()), PATH="/usr/bin:/bin")
os.chdir("/")
os.execve(sys.argv[5], sys.argv[5:], env)
"""


def run(*argv, check=True):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 or not check, f"{argv}: {r.stdout}{r.stderr}"
    return r


def unit_settings():
    """ExecStart, Environment (merged) and User of the installed unit."""
    text = UNIT.read_text()
    exec_start = shlex.split(re.search(r"^ExecStart=(.+)$", text, re.M).group(1))
    env = {}
    for line in re.findall(r"^Environment=(.+)$", text, re.M):
        env.update(item.split("=", 1) for item in shlex.split(line))
    return exec_start, env, re.search(r"^User=(\S+)$", text, re.M).group(1)


class Started:
    """roostd started as the unit would, in a namespace without the toolchain."""

    def __init__(self, argv, env, user, workdir):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        account = pwd.getpwnam(user)
        self.log = pathlib.Path(workdir) / f"roostd-{time.monotonic_ns()}.log"
        fd = self.sock.fileno()
        launch = [sys.executable, "-c", LAUNCH, str(account.pw_uid), str(account.pw_gid), str(fd),
                  "\0".join(f"{k}={v}" for k, v in env.items())] + argv
        shell = f"mount -t tmpfs none {TOOLCHAIN} && exec " + " ".join(shlex.quote(a) for a in launch)
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", shell],
                                         stdout=out, stderr=subprocess.STDOUT, pass_fds=(fd,))
        deadline = time.monotonic() + 60
        while not self.healthy():
            assert self.proc.poll() is None, self.log.read_text()
            assert time.monotonic() < deadline, self.log.read_text()
            time.sleep(0.1)

    def healthy(self):
        try:
            return call(self.port, "GET", "/healthz", timeout=2).status == 200
        except OSError:
            return False

    def call(self, *args, **kwargs):
        return call(self.port, *args, **kwargs)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(timeout=30) == 0, self.log.read_text()
        self.sock.close()


def start_as_unit(workdir):
    argv, env, user = unit_settings()
    return Started(argv, env, user, workdir)


@pytest.fixture(scope="module")
def clean_machine():
    if run("dpkg", "-s", "roost", check=False).returncode == 0:
        run("dpkg", "--purge", "roost")
    yield
    run("dpkg", "--purge", "roost", check=False)


def test_runtime_packages_cover_every_linked_library():
    listed = {line.split()[-1] for line in (PACKAGING / "runtime-packages").read_text().splitlines()
              if line.strip() and not line.startswith("#")}
    # What the binary and the Swift libraries beside it name directly (a listed
    # package brings its own dependencies); ldd says where each resolves.
    resolved = dict(re.findall(r"^\s*(\S+) => (/\S+)", run("ldd", BINARY).stdout, re.M))
    needed = set()
    for path in [BINARY] + [p for p in resolved.values() if p.startswith(TOOLCHAIN)]:
        needed |= set(re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", run("readelf", "-d", path).stdout))
    missing = []
    for lib in sorted(resolved[name] for name in needed if name in resolved):
        owner = run("dpkg", "-S", os.path.realpath(lib), check=False)
        if owner.returncode != 0:
            owner = run("dpkg", "-S", lib, check=False)
        if owner.returncode == 0:
            package = owner.stdout.split(":")[0]
            if package not in listed:
                missing.append((lib, package))
        else:
            assert lib.startswith(TOOLCHAIN), f"{lib} is neither packaged nor the Swift runtime"
    assert missing == [], f"add to packaging/runtime-packages: {missing}"
    control = run("dpkg-deb", "-f", DEB, "Depends", "Recommends").stdout
    for package in listed:
        assert package in control, package


def test_install_serve_upgrade_remove_purge(clean_machine, tmp_path):
    run("dpkg", "-i", DEB)
    assert pathlib.Path("/usr/bin/roostd").resolve() == pathlib.Path("/usr/lib/roost/roostd")
    assert pwd.getpwnam("roost").pw_dir == "/var/lib/roost"
    data = pathlib.Path("/var/lib/roost")
    assert data.stat().st_uid == pwd.getpwnam("roost").pw_uid and oct(data.stat().st_mode & 0o777) == "0o700"
    assert pathlib.Path("/etc/roost/roost.yaml").exists()
    assert pathlib.Path("/etc/roost/scripts").is_dir() and pathlib.Path("/etc/roost/templates").is_dir()
    unit = UNIT.read_text()
    assert "ExecStart=/usr/bin/roostd serve --config /etc/roost/roost.yaml" in unit and "User=roost" in unit
    assert "NoNewPrivileges=yes" in unit and "ProtectSystem=strict" in unit

    daemon = start_as_unit(tmp_path)
    try:
        log = daemon.log.read_text()
        assert "data           /var/lib/roost" in log and "#setup=" in log
        assert "Roost" in daemon.call("GET", "/").raw.decode()
        token = daemon.call("POST", "/users", {"username": "pat", "password": "a long enough password"}).body["token"]
        note = daemon.call("POST", "/notes", {"text": "kept across upgrades"}, token=token)
        assert note.status == 201
        picture = daemon.call("POST", "/files", raw_body=png(80, 60, 5), token=token, headers={"Content-Type": "image/png"})
        assert picture.status == 201, picture
        assert (data / "roost.db").stat().st_uid == pwd.getpwnam("roost").pw_uid
    finally:
        daemon.stop()

    # An operator's edit of the config survives the upgrade (a conffile).
    with open("/etc/roost/roost.yaml", "a") as f:
        f.write("# edited by the operator\n")
    newer = run(str(PACKAGING / "build-deb.sh"), BINARY, VERSION + "+upgrade1", str(tmp_path / "newer")).stdout.strip()
    run("dpkg", "-i", newer)
    assert run("dpkg-query", "-W", "-f=${Version}", "roost").stdout == VERSION + "+upgrade1"
    assert "# edited by the operator" in pathlib.Path("/etc/roost/roost.yaml").read_text()
    daemon = start_as_unit(tmp_path)
    try:
        again = daemon.call("GET", f"/notes/{note.body['_id']}", token=token)
        assert again.status == 200 and again.body["text"] == "kept across upgrades"
        assert "#setup=" in daemon.log.read_text()          # still no admin credential: a new link
    finally:
        daemon.stop()

    run("dpkg", "--remove", "roost")
    assert not pathlib.Path("/usr/bin/roostd").exists() and not UNIT.exists()
    assert (data / "roost.db").exists(), "remove keeps the data"
    assert pwd.getpwnam("roost")
    run("dpkg", "--purge", "roost")
    assert not data.exists(), "purge deletes the data"
    with pytest.raises(KeyError):
        pwd.getpwnam("roost")
    assert not pathlib.Path("/etc/roost").exists()


@pytest.fixture
def open_dir():
    """A directory other users may enter (pytest's own tmp_path is root's alone)."""
    path = pathlib.Path(tempfile.mkdtemp(prefix="roost-dist-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_the_tarball_runs_without_the_toolchain(open_dir):
    tmp_path = open_dir
    with tarfile.open(DIST) as tar:
        tar.extractall(tmp_path)
    (top,) = tmp_path.iterdir()
    assert (top / "bin" / "roostd").is_symlink() and (top / "lib" / "roost" / "libswiftCore.so").exists()
    assert (top / "runtime-packages").exists() and (top / "etc" / "roost.yaml").exists()
    # Run as nobody, like a user who unpacked it, with the data in a directory they own.
    data = tmp_path / "data"
    data.mkdir()
    os.chown(data, pwd.getpwnam("nobody").pw_uid, pwd.getpwnam("nobody").pw_gid)
    daemon = Started([str(top / "bin" / "roostd"), "serve", "--config", str(top / "etc" / "roost.yaml")],
                     {"ROOST_DATA_DIR": str(data)}, "nobody", tmp_path)
    try:
        assert daemon.call("POST", "/users", {"username": "tar", "password": "a long enough password"}).status == 201
        assert f"data           {data}" in daemon.log.read_text()
    finally:
        daemon.stop()
    version = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                              f"mount -t tmpfs none {TOOLCHAIN} && {top}/bin/roostd --version"], capture_output=True, text=True)
    assert version.stdout.strip() == VERSION, version.stderr
