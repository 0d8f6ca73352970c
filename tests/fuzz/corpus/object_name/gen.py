#!/usr/bin/env python3
# Writes the seed corpus of fuzz_object_name (tests/fuzz/fuzz_object_name.c): three keys per
# file, one per line: the sinks' names (part-<n>, sub<i>-part-<n>, two-phase names with runs
# whose hex digits start with digits or letters), near misses of the two-phase pattern (short
# or long fields, uppercase hex, other extensions), numbers with leading zeros and past 64 bits,
# _openetl segments, and bytes above 0x7f. Deterministic (seeded), so a rerun rewrites the same
# files. Usage: python3 gen.py (in this directory).
import random

rnd = random.Random(13)


def twopc(sub, ms, hexd, ckpt, ext=".ndjson"):
    return "sub%d-%013d%s-%020d%s" % (sub, ms, hexd, ckpt, ext)


def rhex():
    return "".join(rnd.choice("0123456789abcdef") for _ in range(8))


cases = []
for i in range(20):
    ms = 1700000000000 + rnd.randrange(5)
    keys = [twopc(rnd.randrange(12), ms + rnd.randrange(3), rhex(), rnd.randrange(30),
                  rnd.choice([".ndjson", ".ndjson.gz", ".ndjson.zst", ".ndjson.zstd"]))
            for _ in range(3)]
    if i % 2:
        keys = ["events/" + k for k in keys]
    cases.append(keys)
for i in range(15):
    cases.append(["%spart-%s" % (rnd.choice(["", "sub1-", "sub10-", "x/"]),
                                 "0" * rnd.randrange(3) + str(rnd.randrange(200)))
                  for _ in range(3)])
near = [
    "sub-1700000000000aaaaaaaa-00000000000000000001.ndjson",
    "sub1-170000000000aaaaaaaa-00000000000000000001.ndjson",
    "sub1-1700000000000aaaaaaa-00000000000000000001.ndjson",
    "sub1-1700000000000AAAAAAAA-00000000000000000001.ndjson",
    "sub1-1700000000000aaaaaaaa-0000000000000000001.ndjson",
    "sub1-1700000000000aaaaaaaa-00000000000000000001.json",
    "sub12345678901-1700000000000aaaaaaaa-00000000000000000001.ndjson",
    "sub1-1700000000000aaaaaaaa-00000000000000000001.ndjson.bz2",
    "a/b/sub1-1700000000000aaaaaaaa-00000000000000000001.ndjson/",
]
for i in range(0, len(near), 3):
    cases.append(near[i:i + 3])
for i in range(10):
    cases.append(["%s%d" % (rnd.choice(["a", "a-", "a1", "b", ""]), rnd.randrange(10 ** rnd.randrange(1, 25)))
                  for _ in range(3)])
cases.append(["_openetl/checkpoints/p.json", "t/_openetl/markers/x.json", "_openetlx/part-0"])
cases.append(["_openetl", "a/_openetl", "/_openetl/"])
cases.append(["caf\u00e9-1", "caf\u00e9-10", "cafe-2"])
cases.append(["", "0", "00"])
for n, keys in enumerate(cases):
    with open("seed-%03d" % n, "wb") as f:
        f.write("\n".join(keys).encode("utf-8"))
