"""The first ten minutes (issue #41): the port is bound before the data
directory is made; start-up prints one readable block (URLs, absolute data
directory, engine, admin credential, a warning per open-by-config risk) and
one migration line; without an admin credential a one-time setup code
creates it (single use, throttled, stored hashed in a 0600 file); `/` lists
what the caller may see."""

import os
import re
import socket
import stat
import subprocess

import pytest

from roost_harness import ADMIN_TOKEN, FAST_HASHING, Roostd, assert_error, binary, clean_env

SETUP_LINK = re.compile(r"(http://127\.0\.0\.1:\d+/_/)#setup=([A-Za-z0-9_-]{43})")


def setup_code(daemon):
    found = SETUP_LINK.findall(daemon.log_text())
    assert found, daemon.log_text()[-2000:]
    return found[-1][1]


def test_a_busy_port_fails_before_the_data_directory_is_made(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = subprocess.run([str(binary()), "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", str(tmp_path / "data")],
                           capture_output=True, text=True, timeout=30, env=clean_env())
    assert r.returncode != 0 and "Address already in use" in r.stderr
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("config,warnings", [
    ("default_permission: shared\n", []),
    ("default_permission: public\n", ["default_permission is public"]),
    ("files_permission: public\ncollections:\n  spots: {permission: public}\n  notes: {permission: private}\n",
     ["collection spots is public", "files_permission is public"]),
    ('cors: {origins: ["*"]}\n', ["cors.origins is *"]),
    ('cors: {origins: ["https://app.example.org"]}\n', []),
])
def test_the_start_up_block_orients_and_warns(tmp_path, config, warnings):
    with Roostd(tmp_path, FAST_HASHING + config).start() as d:
        log = d.log_text()
        block = log[log.index("is serving"):]
        assert f"API            http://127.0.0.1:{d.port}/" in block
        assert f"console        http://127.0.0.1:{d.port}/_/" in block
        assert f"API reference  http://127.0.0.1:{d.port}/openapi.yaml" in block
        assert f"data           {os.path.realpath(d.data_dir)}" in block
        assert "engine         SQLite" in block or "engine         PostgreSQL" in block
        assert "admin          none yet" in block
        assert SETUP_LINK.search(block)
        assert sorted(re.findall(r"warning: (.+?):", block)) == sorted(warnings), block
        # Migrations: one line, not one per migration.
        assert "applied schema migration" not in log
        assert len(re.findall(r"schema migrations applied: \d+", log)) <= 1


def test_a_plain_non_loopback_listener_is_warned_about(tmp_path):
    with Roostd(tmp_path, FAST_HASHING, args=("--listen", "0.0.0.0:0")).start() as d:
        assert re.search(r"warning: 0\.0\.0\.0:\d+ is plain HTTP on a non-loopback address", d.log_text()), d.log_text()


def test_with_admin_token_there_is_no_setup_link(tmp_path):
    with Roostd(tmp_path, FAST_HASHING + f"admin_token: {ADMIN_TOKEN}\n").start() as d:
        log = d.log_text()
        assert "admin          admin_token (configuration)" in log
        assert "#setup=" not in log and ADMIN_TOKEN not in log
        assert d.call("GET", "/admin/setup").body == {"adminCredential": True, "setupPending": False}
        assert_error(d.call("POST", "/admin/setup", {"code": "x" * 43}), 409, "AdminCredentialExists")


def test_the_setup_code_creates_the_admin_credential_once(tmp_path):
    d = Roostd(tmp_path, FAST_HASHING + "default_permission: shared\n").start()
    try:
        code = setup_code(d)
        assert d.call("GET", "/admin/setup").body == {"adminCredential": False, "setupPending": True}
        assert d.call("GET", "/admin/stats").status == 401
        wrong = d.call("POST", "/admin/setup", {"code": code[:-1] + ("A" if code[-1] != "A" else "B")})
        assert_error(wrong, 403, "SetupCodeRefused")
        assert "4 attempts left" in wrong.body["description"]
        # Not a code (the spec: {code} alone, 1 to 64 characters): 400, and not counted as a guess.
        for body in ({}, {"code": 5}, {"code": ""}, {"code": code, "extra": 1}, {"code": "x" * 65}, {"code": None}):
            assert_error(d.call("POST", "/admin/setup", body), 400, "InvalidDocument")
        assert "3 attempts left" in d.call("POST", "/admin/setup", {"code": "x" * 64}).body["description"]
        assert_error(d.call("POST", "/admin/setup", raw_body=b"{", headers={"Content-Type": "application/json"}), 400)
        made = d.call("POST", "/admin/setup", {"code": code})
        assert made.status == 201 and made.header("cache-control") == "no-store"
        token = made.body["token"]
        assert len(token) >= 32
        assert d.call("GET", "/admin/stats", token=token).status == 200
        # Single use.
        assert_error(d.call("POST", "/admin/setup", {"code": code}), 409, "AdminCredentialExists")
        assert d.call("GET", "/admin/setup").body == {"adminCredential": True, "setupPending": False}
        # Kept hashed, 0600; neither the code nor the token reaches a log the console shows.
        path = d.data_dir / "admin-credential"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert token not in path.read_text() and re.fullmatch(r"[0-9a-f]{64}\n", path.read_text())
        logs = d.call("GET", "/admin/logs", token=token)
        assert logs.status == 200 and code not in logs.raw.decode() and token not in logs.raw.decode()
        assert token not in d.log_text()
        # A restart keeps it and prints no new link.
        d.stop()
        d.start()
        assert d.call("GET", "/admin/stats", token=token).status == 200
        last = d.logs[-1].read_text()
        assert "#setup=" not in last and "created in the console" in last
    finally:
        d.stop(strict=False)


def test_wrong_guesses_void_the_code(tmp_path):
    with Roostd(tmp_path, FAST_HASHING).start() as d:
        code = setup_code(d)
        for left in (4, 3, 2, 1, 0):
            r = d.call("POST", "/admin/setup", {"code": "g" * 43})
            assert_error(r, 403, "SetupCodeRefused")
            assert (f"{left} attempts left" if left else "now voided") in r.body["description"]
        # The right code no longer works: restart for a new one.
        assert_error(d.call("POST", "/admin/setup", {"code": code}), 410, "SetupCodeExpired")
        assert d.call("GET", "/admin/setup").body == {"adminCredential": False, "setupPending": False}
        assert not (d.data_dir / "admin-credential").exists()
        d.stop()
        d.start()
        fresh = setup_code(d)
        assert fresh != code
        assert d.call("POST", "/admin/setup", {"code": fresh}).status == 201


def test_a_damaged_credential_file_is_a_clear_start_up_error(tmp_path):
    d = Roostd(tmp_path, FAST_HASHING)
    d.data_dir.mkdir(parents=True)
    (d.data_dir / "admin-credential").write_text("not a hash\n")
    with pytest.raises(AssertionError) as failed:
        d.start(timeout=15)
    assert "admin-credential is not an admin credential hash" in str(failed.value)


def test_the_front_page_lists_what_the_caller_may_see(tmp_path):
    cfg = FAST_HASHING + f"admin_token: {ADMIN_TOKEN}\ndefault_permission: shared\ncollections:\n" \
        "  spots: {permission: public}\n  diary: {permission: private}\n"
    with Roostd(tmp_path, cfg).start() as d:
        token = d.sign_up("fern")["token"]
        for name in ("spots", "notes", "diary"):
            assert d.call("POST", f"/{name}", {"a": 1}, token=token).status == 201
        d.call("POST", "/diary", {"a": 2}, token=d.sign_up("gus")["token"])
        anonymous = d.call("GET", "/").raw.decode()
        user = d.call("GET", "/", token=token).raw.decode()
        admin = d.call("GET", "/", token=ADMIN_TOKEN).raw.decode()
        for page in (anonymous, user, admin):
            assert 'href="/_/"' in page and 'href="/openapi.yaml"' in page and "/style.css" in page
        assert ">spots<" in anonymous and ">notes<" not in anonymous and ">diary<" not in anonymous
        assert ">spots<" in user and ">notes<" in user and ">diary<" in user
        assert re.search(r">diary</a></td><td>private</td><td>your own only<", user)   # no count of others' rows
        assert re.search(r">diary</a></td><td>private</td><td>2<", admin)
