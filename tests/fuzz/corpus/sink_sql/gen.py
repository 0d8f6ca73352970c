#!/usr/bin/env python3
# Writes the derived inputs of the sink_sql corpus (tests/fuzz/fuzz_sink_sql.c): each seed
# *.sql cut at a few places, and statements that each exercise one rule of src/lib/config/sql.c.
# Deterministic; run from this directory: python3 gen.py
import glob
import os

seeds = sorted(p for p in glob.glob('*.sql') if not p.startswith('gen-'))
for p in seeds:
    data = open(p, 'rb').read()
    for k, cut in enumerate((1, 7, len(data) // 3, len(data) // 2, len(data) - 1)):
        if 0 < cut < len(data):
            open('gen-cut%d-%s' % (k, p), 'wb').write(data[:cut])
head = "CREATE TABLE t (l STRING) WITH (connector = 's3', bucket = 'b'"
rules = {
    'unknown': ", colour = 'red')",
    'dup': ", bucket = 'c')",
    'cred': ", access_key_id = 'AKIA')",
    'size-num': ", rollover_bytes = 16777216)",
    'size-big': ", rollover_bytes = 99999999999999999999)",
    'interval': ", rollover_interval = '500ms')",
    'interval-bad': ", rollover_interval = 'soon')",
    'compression': ", compression = 'zstd')",
    'compression-bad': ", compression = 'lz4')",
    'endpoint': ", endpoint_override = 'http://127.0.0.1:7480')",
    'endpoint-bad': ", endpoint_override = 'ftp://x')",
    'prefix-slash': ", key_prefix = '/abs')",
    'guarantee': ", delivery_guarantee = 'at_most_once')",
    'part-min': ", part_size = '5MiB')",
    'part-low': ", part_size = 5242879)",
    'trailing-comma': ",)",
    'no-eq': ", part_size '5MiB')",
    'number-key': ", 5 = 'x')",
    'semi': ");",
    'two-semi': ");;;" + head + ");",
    'after': ") garbage",
    'empty-string': ", content_type = '')",
    'quote-key': ", \"key_prefix\" = 'a')",
    'backtick-key': ", `region` = 'eu-west-1')",
    'upper-key': ", KEY_PREFIX = 'a')",
    'utf8-value': ", content_type = 'text/\u00e9')",
    'comment-inside': " /* c */, -- d\n region = 'x')",
    'unclosed-comment': " /* c",
    'bad-char': ", region = 'x') #",
    'utf8-char': ", region = 'x') \u00e9",
}
for name, tail in rules.items():
    open('gen-rule-%s.sql' % name, 'w', encoding='utf-8').write(head + tail)
for name, text in {
    'if-not-exists': "CREATE TABLE IF NOT EXISTS t (l STRING) WITH (connector='s3', bucket='b')",
    'if-bad': "CREATE TABLE IF EXISTS t (l STRING) WITH (connector='s3', bucket='b')",
    'no-with': "CREATE TABLE t (l STRING)",
    'no-cols': "CREATE TABLE t WITH (connector='s3', bucket='b')",
    'type-int': "CREATE TABLE t (l INT) WITH (connector='s3', bucket='b')",
    'connector-num': "CREATE TABLE t (l STRING) WITH (connector=3, bucket='b')",
    'empty': "",
    'only-comment': "-- nothing",
    'only-semis': ";;;",
    'quoted-table': "CREATE TABLE `a``b` (\"l\" STRING) WITH (connector='s3', bucket='b')",
    'unclosed-name': "CREATE TABLE \"abc (l STRING)",
}.items():
    open('gen-form-%s.sql' % name, 'w', encoding='utf-8').write(text)
