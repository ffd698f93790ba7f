"""Incompressible text for large documents."""

import string

# Each byte value stands for a letter (a slight bias towards the first 48 letters does not matter).
_LETTERS = bytes(string.ascii_letters.encode()[i % len(string.ascii_letters)] for i in range(256))


def random_letters(rng, n):
    """`n` random ASCII letters from `rng` (a random.Random): what joining `rng.choice(letters)`
    n times gives, in milliseconds instead of about half a second per megabyte."""
    return rng.randbytes(n).translate(_LETTERS).decode()
