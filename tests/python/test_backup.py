"""Backups you can restore: writers and uploads run; a backup is taken mid-load
(`roostd backup` beside the serving daemon) and one through
`POST /admin/backups`; a second CLI backup is kill -9ed mid-way and must not
look complete; the daemon is kill -9ed, the data directory deleted, the good
backup restored; the restored daemon passes integrity_check, holds every
write acknowledged before the backup began, and serves every file (and its
thumbnail) with its hash."""

import hashlib
import json
import shutil
import signal
import sqlite3
import subprocess
import threading
import time

from roost_harness import Roostd, binary, clean_env, png

TOKEN = "backup-admin-token-0123456789abcdef0123456789"
ADMIN = {"Authorization": f"Bearer {TOKEN}"}


def config(tmp):
    return (f"default_permission: public\nfiles_permission: public\nadmin_token: {TOKEN}\nthumbnail_workers: 1\n"
            f"backups:\n  dir: {tmp}/scheduled\n  keep: 2\n")


def roostd(*args, timeout=120):
    return subprocess.run([str(binary()), *map(str, args)], env=clean_env(), capture_output=True, text=True, timeout=timeout)


class Load:
    """Writers creating notes and one uploader, each remembering what was
    acknowledged and when (monotonic), until stopped."""

    def __init__(self, daemon, images):
        self.daemon, self.images = daemon, images
        self.notes, self.files = [], []   # (acknowledged_at, id, body or sha256)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.writer, args=(w,)) for w in range(3)]
        self.threads.append(threading.Thread(target=self.uploader))

    def writer(self, w):
        n = 0
        while not self.stop.is_set():
            n += 1
            body = {"w": w, "n": n, "pad": "x" * 200}
            try:
                status, _, raw = self.daemon.request("POST", "/notes", json.dumps(body))
            except OSError:
                continue
            if status == 201:
                with self.lock:
                    self.notes.append((time.monotonic(), json.loads(raw)["_id"], body))

    def uploader(self):
        k = 0
        while not self.stop.is_set():
            image = self.images[k % len(self.images)]
            k += 1
            try:
                status, _, raw = self.daemon.request("POST", "/files", image, {"Content-Type": "image/png"})
            except OSError:
                continue
            if status == 201:
                with self.lock:
                    self.files.append((time.monotonic(), json.loads(raw)["_id"], hashlib.sha256(image).hexdigest()))
            time.sleep(0.05)

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=30)

    def before(self, instant):
        with self.lock:
            return [n for n in self.notes if n[0] < instant], [f for f in self.files if f[0] < instant]


def wait_for(predicate, timeout=30, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False


def test_backup_under_load_restores_everything_acknowledged_before_it(tmp_path):
    images = [png(160 + 13 * i, 120 + 7 * i, i + 1) for i in range(6)]
    daemon = Roostd(tmp_path, config=config(tmp_path)).start()
    good, torn = tmp_path / "good", tmp_path / "torn"
    try:
        with Load(daemon, images) as load:
            assert wait_for(lambda: len(load.before(time.monotonic())[1]) >= 4 and len(load.notes) >= 200, timeout=60)
            began = time.monotonic()
            taken = roostd("backup", "--config", daemon.config_path, "--data-dir", daemon.data_dir, "--to", good)
            assert taken.returncode == 0, taken.stderr
            assert "verified" in taken.stdout
            notes, files = load.before(began)

            status, _, raw = daemon.request("POST", "/admin/backups?wait=true", headers=ADMIN, timeout=120)
            assert status == 201, raw
            assert json.loads(raw)["verified"] is True
            status, _, raw = daemon.request("GET", "/admin/backups", headers=ADMIN)
            listing = json.loads(raw)
            assert status == 200 and [b["state"] for b in listing["backups"]] == ["verified"], listing
            assert daemon.request("GET", "/admin/backups")[0] == 401
            assert daemon.request("POST", "/admin/backups")[0] == 401

            # A second backup, slowed down, is killed mid-way: nothing of it may look complete.
            slow = subprocess.Popen([str(binary()), "backup", "--config", str(daemon.config_path), "--data-dir", str(daemon.data_dir),
                                     "--to", str(torn), "--max-rate", "32K"], env=clean_env(),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                assert wait_for(lambda: any((p / "roost.db").exists() for p in torn.glob(".partial-*")), timeout=30)
                time.sleep(0.5)
                assert slow.poll() is None, "the slowed backup finished before it could be killed"
            finally:
                slow.send_signal(signal.SIGKILL)
                slow.wait()
        assert not list(torn.glob("roost-*")), list(torn.iterdir())
        assert roostd("verify-backup", torn).returncode != 0
        refused = roostd("restore", "--from", torn, "--data-dir", tmp_path / "never")
        assert refused.returncode != 0 and "no complete backup" in refused.stderr

        metrics = daemon.request("GET", "/metrics")[2].decode()
        last = [l for l in metrics.splitlines() if l.startswith("roost_backup_last_success_timestamp_seconds ")]
        assert last and float(last[0].split()[1]) > 0, metrics
    finally:
        daemon.kill9()

    verified = roostd("verify-backup", good)
    assert verified.returncode == 0, verified.stdout
    shutil.rmtree(daemon.data_dir)
    restored = roostd("restore", "--from", good, "--data-dir", daemon.data_dir)
    assert restored.returncode == 0, restored.stderr
    again = roostd("restore", "--from", good, "--data-dir", daemon.data_dir)
    assert again.returncode != 0 and "--force" in again.stderr

    with sqlite3.connect(f"file:{daemon.data_dir}/roost.db?mode=ro", uri=True) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    back = Roostd(tmp_path, config=None, data_dir=daemon.data_dir).start()
    try:
        assert len(notes) >= 200 and len(files) >= 4
        for _, note_id, body in notes:
            status, _, raw = back.request("GET", f"/notes/{note_id}")
            assert status == 200, (note_id, raw)
            doc = json.loads(raw)
            assert {k: doc[k] for k in body} == body
        for _, file_id, sha in files:
            status, _, raw = back.request("GET", f"/files/{file_id}")
            assert status == 200 and hashlib.sha256(raw).hexdigest() == sha, file_id
            status, headers, raw = back.request("GET", f"/files/{file_id}/thumbnail?size=128")
            assert status == 200 and raw and headers.get("Content-Type", "").startswith("image/"), (file_id, status)
    finally:
        back.stop()


def metric_values(daemon):
    """{name with labels: value} of /metrics."""
    text = daemon.request("GET", "/metrics")[2].decode()
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
            if line and not line.startswith("#")}


def test_metrics_and_a_partial_directory_named_by_path_is_refused(tmp_path):
    """A successful backup sets issue #20's three gauges. A `.partial-` directory is never
    trusted, even named by its path and even when what it holds checks out (its run may
    have been killed before it was synced): verify-backup and restore refuse it."""
    daemon = Roostd(tmp_path, config=config(tmp_path)).start()
    try:
        for n in range(20):
            assert daemon.request("POST", "/notes", json.dumps({"n": n}))[0] == 201
        status, _, raw = daemon.request("POST", "/admin/backups?wait=true", headers=ADMIN, timeout=120)
        assert status == 201, raw
        name = json.loads(raw)["name"]
        metrics = metric_values(daemon)
        assert abs(metrics["roost_backup_last_success_timestamp_seconds"] - time.time()) < 120, metrics
        assert metrics["roost_backup_duration_seconds"] > 0
        assert metrics["roost_backup_size_bytes"] == json.loads(raw)["bytes"] > 0
        assert metrics['roost_backups_total{outcome="success"}'] == 1
    finally:
        daemon.stop()
    good = tmp_path / "scheduled" / name
    partial = tmp_path / "elsewhere" / f".partial-{name}"
    shutil.copytree(good, partial)
    assert roostd("verify-backup", good).returncode == 0
    for args in (("verify-backup", partial), ("restore", "--from", partial, "--data-dir", tmp_path / "never")):
        refused = roostd(*args)
        assert refused.returncode != 0 and "partial" in refused.stdout + refused.stderr, (args, refused)
    assert not (tmp_path / "never" / "roost.db").exists()


def test_a_failed_scheduled_backup_is_logged_at_error_level_with_its_reason(tmp_path):
    (tmp_path / "blocker").write_text("a file where the backups directory should be\n")
    cfg = (f"default_permission: public\nadmin_token: {TOKEN}\n"
           f"backups:\n  dir: {tmp_path}/blocker/backups\n  every: 1s\n")
    daemon = Roostd(tmp_path, config=cfg).start()
    try:
        line = lambda: next((l for l in daemon.log_text().splitlines() if "scheduled backup failed" in l), None)  # noqa: E731
        assert wait_for(lambda: line() is not None, timeout=30), daemon.log_text()[-2000:]
        assert " error " in line() and "reason=" in line() and "blocker" in line(), line()
        metrics = metric_values(daemon)
        assert metrics.get('roost_backups_total{outcome="failure"}', 0) >= 1, metrics
        assert metrics.get("roost_backup_last_success_timestamp_seconds", 0) == 0
        assert daemon.request("GET", "/healthz")[0] == 200
    finally:
        daemon.stop()
