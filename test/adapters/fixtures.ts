// Guest programs shared by the adapter tests.

/** Python that writes a 4×4 red PNG with only the standard library (zlib, struct). */
export const PNG_PYTHON = `
import struct, zlib
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
raw = b"".join(b"\\x00" + bytes([255, 0, 0] * 4) for _ in range(4))
png = b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
with open("red.png", "wb") as f:
    f.write(png)
len(png)
`;
