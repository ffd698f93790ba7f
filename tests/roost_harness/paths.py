"""Where the repository and the roostd binary are, a clean environment for
the daemon, and a free loopback port."""

import os
import pathlib
import socket

REPO = pathlib.Path(__file__).resolve().parent.parent.parent

# Variables systemd (or a shell that ran roostd) may have left in the test's
# environment; the daemon under test must not see them unless a test sets them.
_INHERITED = ("NOTIFY_SOCKET", "WATCHDOG_", "LISTEN_", "JOURNAL_STREAM", "ROOST_")


def binary():
    """The roostd under test: $ROOSTD, else the debug build."""
    return pathlib.Path(os.environ.get("ROOSTD", str(REPO / ".build" / "debug" / "roostd")))


def clean_env(**extra):
    """The test's environment without anything systemd- or Roost-related, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_INHERITED)}
    env.update({k: str(v) for k, v in extra.items()})
    return env


# Ports below the kernel's ephemeral range (32768 and up), so neither a bind to
# port 0 nor an outgoing connection takes one, split into 16 ranges: one per
# pytest-xdist worker (gw0…gw13) and one for each engine's run without workers
# (`make test` runs SQLite's and PostgreSQL's serial parts side by side). Two
# tests running at once never pick the same port between the pick and the bind:
# a port from bind(0) could be handed to another worker in that window (a
# stand-in then served another test's requests).
_PORTS_PER_RANGE = 1400
_PORTS_FIRST = 10000
_next_port = None


def _range_index():
    """This process's range: pytest-xdist's worker number (gw3 -> 3), else 14 (SQLite) or 15 (PostgreSQL)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if worker.startswith("gw") and worker[2:].isdigit():
        return int(worker[2:]) % 14
    return 15 if os.environ.get("ROOST_TEST_ENGINE") == "postgresql" else 14


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now, from this
    worker's own range, not handed out before by this process (until the range wraps)."""
    global _next_port
    first = _PORTS_FIRST + _range_index() * _PORTS_PER_RANGE
    if _next_port is None:
        _next_port = os.getpid() % _PORTS_PER_RANGE  # a restarted worker starts elsewhere in its range
    for _ in range(_PORTS_PER_RANGE):
        port = first + _next_port
        _next_port = (_next_port + 1) % _PORTS_PER_RANGE
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {first}..{first + _PORTS_PER_RANGE - 1}")
