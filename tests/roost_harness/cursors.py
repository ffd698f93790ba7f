"""Opens and seals roostd's feed cursors for tests and drills (`roost_harness.cursors`).

Cursors are sealed (`Sources/Store/CursorSeal.swift`): base64url of a version
byte (2), a 24-byte nonce and a libsodium `crypto_secretbox` (XSalsa20-Poly1305)
of `r2|epoch|level|seq|after|base` (numbers in 19 digits, a missing one as 19
`-`), under the 32-byte key in the database's `_meta.cursor_key`. Clients
cannot read them; tests can, with the key read from the data directory's
SQLite file (read-only) and PyNaCl.

    register(data_dir)          # once per daemon whose cursors a test reads
    open_cursor(token)          # {"version", "epoch", "level", "seq", "after", "base"} or None
    cursor_seq(token)           # the feed position, or None
    reseal(token, seq="x1")     # the same cursor with fields changed, sealed again
"""

import base64
import pathlib
import sqlite3
import subprocess
import threading

from . import engine
import nacl.exceptions
import nacl.secret

FIELDS = ("version", "epoch", "level", "seq", "after", "base")
VERSION_BYTE = 2
_lock = threading.Lock()
_dirs = []       # data directories registered, newest first
_keys = {}       # data directory -> key (re-read when a token opens with none)


def read_key(data_dir):
    """The cursor key of the database in `data_dir` (bytes), read-only."""
    rows = engine.sql(data_dir, "SELECT value FROM _meta WHERE key = 'cursor_key'")
    if not rows:
        raise LookupError(f"the database of {data_dir} has no cursor key")
    return bytes.fromhex(rows[0][0])


def register(data_dir):
    """Lets `open_cursor` try the key of the database in `data_dir` (read when first needed)."""
    with _lock:
        data_dir = str(data_dir)
        if data_dir in _dirs:
            _dirs.remove(data_dir)
        _dirs.insert(0, data_dir)


def _b64decode(token):
    return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))


def _open_with(key, raw):
    try:
        return nacl.secret.SecretBox(key).decrypt(raw[1 + 24:], raw[1:1 + 24]).decode()
    except nacl.exceptions.CryptoError:
        return None


def _keys_to_try(refresh):
    with _lock:
        dirs = list(_dirs)
    keys = []
    for d in dirs:
        if refresh or d not in _keys:
            try:
                _keys[d] = read_key(d)
            except (sqlite3.Error, subprocess.CalledProcessError, LookupError):
                continue
        keys.append(_keys[d])
    return keys


def open_text(token, key=None):
    """The sealed text of `token` (str), or None when no known key opens it."""
    try:
        raw = _b64decode(token)
    except (ValueError, TypeError):
        return None
    if len(raw) < 1 + 24 + 16 or raw[0] != VERSION_BYTE:
        return None
    if key is not None:
        return _open_with(key, raw)
    for refresh in (False, True):
        for k in _keys_to_try(refresh):
            text = _open_with(k, raw)
            if text is not None:
                return text
    return None


def open_cursor(token, key=None):
    """The fields of `token` as text ({"seq": "0000…42", …}; `seq_int` etc. below), or None."""
    text = open_text(token, key) if token else None
    if text is None:
        return None
    return dict(zip(FIELDS, text.split("|")))


def _number(text):
    return None if text is None or set(text) == {"-"} else int(text)


def cursor_seq(token, key=None):
    """The feed position inside a cursor (or a live event id), or None."""
    fields = open_cursor(token, key)
    return _number(fields["seq"]) if fields else None


def cursor_epoch(token, key=None):
    fields = open_cursor(token, key)
    return fields["epoch"] if fields else None


def seal_text(text, key):
    """A token for the sealed text `text` under `key`, with a fresh nonce."""
    box = nacl.secret.SecretBox(key).encrypt(text.encode())   # nonce (24) + box
    return base64.urlsafe_b64encode(bytes([VERSION_BYTE]) + bytes(box)).decode().rstrip("=")


def reseal(token, key=None, **change):
    """`token`'s cursor with `change` applied to its text fields (as given: numbers are
    not padded), sealed again with the key that opened it."""
    raw = _b64decode(token)
    keys = [key] if key is not None else _keys_to_try(False) + _keys_to_try(True)
    for k in keys:
        text = _open_with(k, raw) if len(raw) > 41 else None
        if text is not None:
            fields = dict(zip(FIELDS, text.split("|")))
            fields.update(change)
            return seal_text("|".join(fields[f] for f in FIELDS), k)
    raise ValueError("no registered key opens this cursor")
