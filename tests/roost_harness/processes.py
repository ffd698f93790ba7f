"""Stopping the helper servers tests start (moto, HAProxy, PgBouncer)."""

import subprocess


def terminate(proc, timeout=10):
    """SIGTERM, then SIGKILL if `proc` has not exited within `timeout` seconds; reaped either way."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
