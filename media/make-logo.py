#!/usr/bin/env python3
"""Draws media/logo.png: a 240x96 "LiveLine" badge with a real alpha channel.

A translucent dark rounded plate (alpha 160), an opaque red "live" dot and the
letters LL in opaque white, anti-aliased edges (partial alpha) on the plate's
corners. Standard library only (zlib + struct), so it runs anywhere.
"""
import struct
import zlib

W, H = 240, 96
R = 20  # corner radius


def plate_alpha(x, y):
    """Coverage of the rounded rectangle at pixel centre (x+.5, y+.5), 0..1."""
    cx = min(max(x + 0.5, R), W - R)
    cy = min(max(y + 0.5, R), H - R)
    d = ((x + 0.5 - cx) ** 2 + (y + 0.5 - cy) ** 2) ** 0.5
    return max(0.0, min(1.0, R - d + 0.5))


def in_letters(x, y):
    """Two block capital Ls and a dot, in a 240x96 box."""
    def ell(x0):
        return (x0 <= x < x0 + 14 and 22 <= y < 74) or (x0 <= x < x0 + 44 and 60 <= y < 74)
    return ell(96) or ell(156)


def in_dot(x, y):
    return (x + 0.5 - 52) ** 2 + (y + 0.5 - 48) ** 2 <= 22 ** 2


rows = []
for y in range(H):
    row = bytearray([0])  # filter type none
    for x in range(W):
        a = plate_alpha(x, y)
        if in_dot(x, y):
            px = (230, 30, 40, 255)
        elif in_letters(x, y):
            px = (255, 255, 255, 255)
        else:
            px = (20, 20, 28, int(round(160 * a)))
        row += bytes(px)
    rows.append(bytes(row))


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


png = b"\x89PNG\r\n\x1a\n"
png += chunk(b"IHDR", struct.pack(">IIBBBBB", W, H, 8, 6, 0, 0, 0))
png += chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
png += chunk(b"IEND", b"")
with open(__file__.rsplit("/", 1)[0] + "/logo.png" if "/" in __file__ else "logo.png", "wb") as f:
    f.write(png)
