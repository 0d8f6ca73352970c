#!/usr/bin/env python3
"""verify.py DIR N B: the exactly-once check of the eos suite and the two-phase sink's tests.

Reads every *.ndjson file under DIR (objects the test fetched with the AWS CLI, or the file://
store's own files), each line one record as tests/tools/twopc_engine.c writes it: the sequence
number in 12 digits, a space, 'x' up to B bytes with the newline. Prints "ok: N records exactly
once in K objects" and exits 0 when records 1..N each occur exactly once and every line is well
formed; else prints what is wrong (missing, duplicated, malformed, the first few of each) and
exits 1. Object names must follow <prefix>sub<N>-<13 digits><8 hex>-<20 digits>.ndjson.
"""
import os
import re
import sys

root, n, b = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
name_re = re.compile(r'sub[0-9]+-[0-9]{13}[0-9a-f]{8}-[0-9]{20}\.ndjson$')
seen = {}
bad = []
objects = 0
for dirpath, _, files in os.walk(root):
    for f in sorted(files):
        if f.startswith('.s3l-'):
            continue
        path = os.path.join(dirpath, f)
        if not name_re.search(f):
            bad.append(f'object name {f!r}')
            continue
        objects += 1
        with open(path, 'rb') as fh:
            data = fh.read()
        if data and not data.endswith(b'\n'):
            bad.append(f'{f}: no final newline')
        for line in data.split(b'\n')[:-1]:
            seq = line[:12]
            want = seq + b' ' + b'x' * (b - 14)
            if not seq.isdigit() or line != want:
                bad.append(f'{f}: malformed line {line[:40]!r}')
                continue
            k = int(seq)
            seen[k] = seen.get(k, 0) + 1
missing = [k for k in range(1, n + 1) if k not in seen]
dups = sorted(k for k, c in seen.items() if c > 1)
extra = sorted(k for k in seen if k < 1 or k > n)
if missing or dups or extra or bad:
    print(f'FAIL: {len(missing)} missing {missing[:5]}, {len(dups)} duplicated {dups[:5]}, '
          f'{len(extra)} out of range {extra[:5]}, {len(bad)} bad {bad[:3]}')
    sys.exit(1)
print(f'ok: {n} records exactly once in {objects} objects')
