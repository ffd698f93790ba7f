"""One harness for the Python API tests (tests/python) and the reliability
drills (tests/drills): start and stop roostd, talk HTTP to it, generate
images. Importable as `roost_harness` (pytest.ini's `pythonpath`, or
PYTHONPATH=tests for the drills)."""

from .client import Client, Response, assert_error, call, json_query, one_request, request, send_json
from .daemon import Roostd, RoostdError, remote_in_access_log, rss_kib, running_roostd
from .images import png, png_chunk, png_from_chunks
from .letters import random_letters
from .paths import REPO, binary, clean_env, free_port

# The admin token and the cheapest password hashing (OWASP's 19 MiB Argon2id minimum, about a
# third of the default `interactive`'s time) most test configurations use.
ADMIN_TOKEN = "roost-test-admin-token-0123456789abcdef"
FAST_HASHING = "password_cost: owasp\nhash_concurrency: 2\n"

__all__ = ["ADMIN_TOKEN", "FAST_HASHING", "REPO", "Client", "Response", "Roostd", "RoostdError", "assert_error", "binary",
           "call", "clean_env", "free_port", "json_query", "one_request", "png", "png_chunk", "png_from_chunks",
           "random_letters", "remote_in_access_log", "request", "rss_kib", "running_roostd", "send_json"]
