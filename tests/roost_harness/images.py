"""Generated PNGs (zlib only), so that no binary test image is committed."""

import struct
import zlib


def png(width, height, seed):
    """An RGB PNG with a seed-dependent pattern, so sizes and hashes differ."""
    rows = []
    for y in range(height):
        row = bytes(((x * 3 + y * seed + c * 85) & 0xFF) for x in range(width) for c in range(3))
        rows.append(b"\x00" + row)
    return png_from_chunks(width, height, zlib.compress(b"".join(rows), 1))


def png_chunk(kind, data):
    """One PNG chunk: length, type, data, CRC."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_from_chunks(width, height, idat, color_type=2, bit_depth=8):
    """A PNG with the given IHDR fields and IDAT payload."""
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", idat)
            + png_chunk(b"IEND", b""))
