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


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
