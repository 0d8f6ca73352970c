# Writes the seeds of fuzz_sink_committable: committables encoded by this independent Python
# encoder of the layout in include/s3l/ndjson_sink.h (zlib.crc32 as the checksum), each whole,
# truncated at every field boundary, and with single bytes flipped; and a few foreign inputs.
# Run from this directory: python3 gen.py. Prints the hex of the golden vector test_sink_codec
# checks.
import struct, zlib, os

def s(b):
    return struct.pack('<I', len(b)) + b

def enc(kind, ckpt, key=b'', uid=b'', tok=b'', records=0, parts=()):
    body = b'S3LC' + struct.pack('<HBQ', 1, kind, ckpt) + s(key) + s(uid) + s(tok)
    body += struct.pack('<QQI', records, sum(p[1] for p in parts), len(parts))
    for num, size, etag in parts:
        body += struct.pack('<IQ', num, size) + s(etag)
    return body + struct.pack('<I', zlib.crc32(body))

golden = enc(1, 7, b'events/sub0-1764614400000-0a1b2c3d-00000000000000000007.ndjson',
             b'2~abc', b'00112233445566778899aabbccddeeff', 3,
             [(1, 5242880, b'"e1"'), (2, 17, b'"e2"')])
seeds = {
    'empty': enc(0, 0),
    'empty-ckpt': enc(0, 2**64 - 1),
    'golden': golden,
    'one-part': enc(1, 1, b'k', b'u', b't', 1, [(1, 3, b'"x"')]),
    'no-parts': enc(1, 9, b'a/b', b'id', b'', 0, []),
    'gap-parts': enc(1, 9, b'a/b', b'id', b'tok', 2, [(1, 1, b'"a"'), (10000, 2, b'"b"')]),
}
for name, b in list(seeds.items()):
    with open(name, 'wb') as f:
        f.write(b)
for cut in range(0, len(golden), 3):
    with open('golden-cut-%03d' % cut, 'wb') as f:
        f.write(golden[:cut])
for i in range(0, len(golden), 7):
    b = bytearray(golden)
    b[i] ^= 0x41
    with open('golden-flip-%03d' % i, 'wb') as f:
        f.write(bytes(b))
for name, b in {'foreign-json': b'{"key":"a","uploadId":"u"}', 'foreign-v2': b'S3LC\x02\x00' + b'\0' * 40,
                'huge-count': b'S3LC\x01\x00\x01' + b'\xff' * 60, 'zero': b''}.items():
    with open(name, 'wb') as f:
        f.write(b)
print(golden.hex())
