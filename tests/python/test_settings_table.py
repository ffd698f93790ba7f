"""Settings are declared once (issue #34): `roostd check-config` prints every
scalar setting of the table, docs/CONFIGURATION.md's table is exactly what
`roostd settings --markdown` generates from it (issue #41), and
etc/roost/roost.yaml names each of them, and a SIGHUP applies every changed
setting it can (listed in "configuration reloaded") and names every other
one as needing a restart: none is dropped silently."""

import pathlib
import re
import signal
import subprocess
import time

import pytest

from roost_harness import ADMIN_TOKEN, Roostd
from roost_harness.paths import binary

REPO = pathlib.Path(__file__).resolve().parents[2]

# A different valid value for every scalar setting; a new setting must be added here.
OTHER = {
    "listen": None, "data_dir": None,                     # set by the harness's flags, which win over the file
    "loops": 1, "readers": 3, "queue_capacity": 1000, "read_slice_ms": 150, "slow_readers": 2, "loop_reads": "false", "query_time_limit": 7,
    "write_batch": 100, "durability": "power", "max_body_bytes": 2097152, "log_level": "debug", "log_target": "stderr",
    "default_permission": "readonly", "session_lifetime": 3600, "changes_retention": 86400, "live_heartbeat": 5,
    "live_buffer_bytes": 65536, "live_max_connections": 50, "live_max_per_address": 7, "live_max_per_account": 5, "password_cost": "owasp",
    "hash_concurrency": 1, "admin_token": "b" * 40, "sqlite_cache_bytes": 16777216, "sqlite_mmap_bytes": 1048576,
    "max_upload_bytes": 1048576, "max_image_pixels": 1000000, "thumbnail_sizes": "[64, 256]", "file_url_max_ttl": 600, "upload_workers": 8,
    "upload_validation": "decode", "thumbnail_workers": 1, "upload_queue": 16, "files_permission": "private",
    "files_store": None,                                  # s3 needs a bucket: covered by test_files_s3.py
    "hook_budget_ms": 100, "scripts_dir": "/nonexistent/scripts", "tls_certificate": "/nonexistent/cert.pem", "tls_key": "/nonexistent/key.pem",
    "tls_hsts": "off", "trusted_proxies": '["10.0.0.1"]', "forwarded_header": "Forwarded", "references_max_cascade": 10,
    "database_url": None,                                 # switching engines on a running node: not by a reload test
    "header_timeout": 20, "max_connections_per_address": 100,
    "cors_origins": '["http://localhost:5173"]', "cors_credentials": "true",
    "node_id": "node-b", "claim_lease_seconds": 30, "metrics_access": "admin", "server_info": "public",
    "signup_requires": "either", "unverified_login": "false", "account_code_lifetime": 600, "app_name": "Chat",
    "public_url": "https://app.example.org", "smtp_url": "smtp://127.0.0.1:2525", "smtp_from": "app@example.org",
    "smtp_username": "mailer", "smtp_password_file": "/run/credentials/roost/smtp", "smtp_tls": "try", "smtp_timeout": 30,
    "mail_templates_dir": "/etc/roost/mail", "anonymous_accounts": "true", "anonymous_max_idle": 86400,
    "auto_create_collections": "false",
}
MAPPINGS = ("tls_", "cors_")  # scalar settings written as a mapping's members in YAML
APPLIED = {"log_level", "default_permission", "auto_create_collections", "tls_certificate", "tls_key", "scripts_dir"}


def check_config(path):
    r = subprocess.run([str(binary()), "check-config", "--config", str(path)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return dict(line.split(": ", 1) if ": " in line else (line.rstrip(":"), "")
                for line in r.stdout.splitlines() if not line.startswith(("collection ", "s3: ", "rate_limits: ")))


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    path = tmp_path_factory.mktemp("cfg") / "roost.yaml"
    path.write_text("")
    return list(check_config(path))


def test_every_setting_has_a_reload_case(keys):
    assert set(keys) == set(OTHER), f"new or gone settings: {set(keys) ^ set(OTHER)}"


def test_the_configuration_page_is_the_generated_table(keys):
    generated = subprocess.run([str(binary()), "settings", "--markdown"], capture_output=True, text=True, timeout=30)
    assert generated.returncode == 0, generated.stderr
    page = (REPO / "docs" / "CONFIGURATION.md").read_text()
    block = re.search(r"<!-- BEGIN roostd settings --markdown -->\n(.*?)<!-- END roostd settings --markdown -->", page, re.S)
    assert block, "docs/CONFIGURATION.md lost its generated table's markers"
    assert block.group(1) == generated.stdout, "regenerate the table: roostd settings --markdown"
    # Each key once, as the docs name it (tls_* and cors_* as their mapping's members).
    named = re.findall(r"^\| `([^`]+)` \|", generated.stdout, re.M)
    assert sorted(named) == sorted(next((p[:-1] + "." + k[len(p):] for p in MAPPINGS if k.startswith(p)), k) for k in keys)


def test_every_setting_is_in_the_example(keys):
    example = (REPO / "etc" / "roost" / "roost.yaml").read_text()

    def member(k):
        return next((k[len(p):] for p in MAPPINGS if k.startswith(p)), None)
    missing_example = [k for k in keys if not re.search(r"^#?\s*%s:" % re.escape(k), example, re.M)
                       and not (member(k) and re.search(r"^#?\s*%s:" % member(k), example, re.M))]
    assert missing_example == [], f"etc/roost/roost.yaml misses {missing_example}"


def test_a_changed_setting_is_parsed_and_shown(tmp_path):
    (tmp_path / "empty.yaml").write_text("")
    defaults = check_config(tmp_path / "empty.yaml")
    for key, value in OTHER.items():
        if value is None:
            continue
        path = tmp_path / f"{key}.yaml"
        path.write_text(f"{key}: {value}\n")
        assert check_config(path)[key] != defaults[key], key


def test_sighup_applies_or_names_every_changed_setting(tmp_path):
    daemon = Roostd(tmp_path, config=f"default_permission: public\nadmin_token: {'a' * 40}\n").start()
    try:
        changed = {k: v for k, v in OTHER.items() if v is not None}
        daemon.config_path.write_text("".join(f"{k}: {v}\n" for k, v in changed.items()))
        daemon.signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while "changed settings take effect only after a restart" not in daemon.log_text():
            assert daemon.alive() and time.monotonic() < deadline, daemon.log_text()[-3000:]
            time.sleep(0.05)
        time.sleep(0.2)
        log = daemon.log_text()
        reloaded = [line for line in log.splitlines() if "configuration reloaded" in line][-1]
        restart = [line for line in log.splitlines() if "take effect only after a restart" in line][-1]
        restart_names = set(re.search(r"settings=(\S+)", restart).group(1).strip('"').split(","))
        for key in changed:
            if key in APPLIED:
                assert f"{key}: " in reloaded, (key, reloaded)
                assert key not in restart_names, (key, restart)
            else:
                assert key in restart_names, (key, restart)
        assert "a" * 40 not in log and "b" * 40 not in log            # secrets never logged
        # Applied: the new default level, on the running daemon.
        assert daemon.request("POST", "/things", body=b'{"a":1}')[0] in (401, 403)
        assert daemon.request("GET", "/healthz")[0] == 200
    finally:
        daemon.stop(strict=False)
