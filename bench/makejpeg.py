#!/usr/bin/env python3
"""Writes a deterministic, photo-like baseline JPEG of about TARGET bytes
(default 200 KB), so the repository holds no binary test images.

  makejpeg.py OUT.jpg [--bytes 204800] [--width 1280] [--height 960]

Needs Pillow (bench/run.sh installs it into bench/out/.venv). The picture is
smooth colour gradients, a few discs and mild noise (like a photo: neither a
flat colour that compresses to nothing nor pure noise); the JPEG quality is
searched so the file lands within 3% of the target. Prints "bytes=N quality=Q WxH".
"""
import argparse
import io
import random
import sys

from PIL import Image, ImageDraw, ImageFilter


def picture(width, height, seed=7):
    r = random.Random(seed)
    img = Image.new("RGB", (width, height))
    px = img.load()
    for y in range(height):
        for x in range(width):
            px[x, y] = (int(255 * x / width), int(255 * y / height), int(128 + 127 * ((x + y) % 512 - 256) / 256))
    draw = ImageDraw.Draw(img)
    for _ in range(40):
        cx, cy, rad = r.randrange(width), r.randrange(height), r.randrange(20, 200)
        draw.ellipse((cx - rad, cy - rad, cx + rad, cy + rad),
                     fill=(r.randrange(256), r.randrange(256), r.randrange(256)))
    img = img.filter(ImageFilter.GaussianBlur(3))
    noise = Image.effect_noise((width, height), 24).convert("RGB")
    return Image.blend(img, noise, 0.12)


def encode(img, quality):
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=quality, optimize=False, progressive=False)
    return buf.getvalue()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--bytes", type=int, default=200 * 1024)
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--height", type=int, default=960)
    a = p.parse_args()
    img = picture(a.width, a.height)
    lo, hi, best = 5, 98, None
    while lo <= hi:  # the largest quality whose file is not above the target
        q = (lo + hi) // 2
        data = encode(img, q)
        if len(data) <= a.bytes:
            best, lo = (q, data), q + 1
        else:
            hi = q - 1
    if best is None:
        best = (5, encode(img, 5))
    q, data = best
    if abs(len(data) - a.bytes) > a.bytes * 0.03:
        print("makejpeg: %d bytes at quality %d is not within 3%% of %d" % (len(data), q, a.bytes), file=sys.stderr)
        return 1
    with open(a.out, "wb") as f:
        f.write(data)
    print("bytes=%d quality=%d %dx%d" % (len(data), q, a.width, a.height))
    return 0


if __name__ == "__main__":
    sys.exit(main())
