"""Decode the PNG screenshots headless Chromium writes (8-bit RGB/RGBA, not interlaced) into rows
of RGB pixels, for the HTML reports' picture checks (no imaging library needed)."""

from __future__ import annotations

import struct
import zlib


def rgb_rows(png: bytes) -> list[list[tuple[int, int, int]]]:
    """The image as rows of (r, g, b)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, ihdr = 8, [], None
    while pos < len(png):
        n, kind = struct.unpack(">I4s", png[pos:pos + 8])
        body = png[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    assert depth == 8 and ctype in (2, 6) and not interlace
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    i = 0
    for _ in range(h):
        f = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(list(zip(line[0::bpp], line[1::bpp], line[2::bpp])))
        prev = line
    return rows
