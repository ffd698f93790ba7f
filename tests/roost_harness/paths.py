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
# port 0 nor an outgoing connection takes one, split between pytest-xdist's
# workers, so two tests running at once never pick the same port between the
# pick and the bind (a port from bind(0) could be handed to another worker in
# that window; a stand-in then served the other test's requests).
_PORTS_PER_WORKER = 1500
_PORTS_FIRST = 10000
_next_port = None


def _worker_index():
    """pytest-xdist's worker number (gw3 -> 3); 14 for a run without workers."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(worker[2:]) % 14 if worker.startswith("gw") and worker[2:].isdigit() else 14


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now, from this
    worker's own range, not handed out before by this process (until the range wraps)."""
    global _next_port
    first = _PORTS_FIRST + _worker_index() * _PORTS_PER_WORKER
    if _next_port is None:
        _next_port = os.getpid() % _PORTS_PER_WORKER  # a restarted worker starts elsewhere in its range
    for _ in range(_PORTS_PER_WORKER):
        port = first + _next_port
        _next_port = (_next_port + 1) % _PORTS_PER_WORKER
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {first}..{first + _PORTS_PER_WORKER - 1}")
