# Re-encodes a Chromium screenshot (8-bit RGB/RGBA PNG) as a palette PNG of
# at most 64 colours (pure Python: no ImageMagick or PIL needed). docs/report.png:
#   ciq report build/demo/ciq/spill_bench -o /tmp/r
#   chromium --headless --no-sandbox --hide-scrollbars --window-size=960,1600 --screenshot=/tmp/r.png file:///tmp/r/index.html
#   python3 docs/report-png.py /tmp/r.png docs/report.png
import struct, sys, zlib
def chunks(b):
    i = 8
    while i < len(b):
        n, = struct.unpack('>I', b[i:i+4]); t = b[i+4:i+8]; yield t, b[i+8:i+8+n]; i += 12 + n
src, dst = sys.argv[1], sys.argv[2]
b = open(src, 'rb').read()
idat = b''; 
for t, d in chunks(b):
    if t == b'IHDR': w, h, depth, ctype = struct.unpack('>IIBB', d[:10])
    elif t == b'IDAT': idat += d
assert depth == 8 and ctype in (2, 6)
bpp = 3 if ctype == 2 else 4
raw = zlib.decompress(idat); stride = w * bpp
rows = []; prev = bytearray(stride); p = 0
for y in range(h):
    f = raw[p]; line = bytearray(raw[p+1:p+1+stride]); p += 1 + stride
    for x in range(stride):
        a = line[x-bpp] if x >= bpp else 0; up = prev[x]; c = prev[x-bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + up) & 255
        elif f == 3: line[x] = (line[x] + ((a + up) >> 1)) & 255
        elif f == 4:
            pa, pb, pc = abs(up - c), abs(a - c), abs(a + up - 2*c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else up if pb <= pc else c)) & 255
    rows.append(bytes(line)); prev = line
# Quantize each channel to 4 levels (64 colours), keeping pure white and black.
def q(v): return min(3, (v + 42) // 85) * 85
pal = {}; out = bytearray()
for r in rows:
    out.append(0)
    for x in range(w):
        px = (q(r[x*bpp]), q(r[x*bpp+1]), q(r[x*bpp+2]))
        out.append(pal.setdefault(px, len(pal)))
def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
png = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 3, 0, 0, 0))
png += chunk(b'PLTE', b''.join(bytes(c) for c in sorted(pal, key=pal.get)))
png += chunk(b'IDAT', zlib.compress(bytes(out), 9)) + chunk(b'IEND', b'')
open(dst, 'wb').write(png)
print(dst, w, h, len(pal), 'colours', len(png), 'bytes')
