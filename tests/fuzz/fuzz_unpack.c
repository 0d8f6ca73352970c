/*
 * Fuzz target: the reader's decompressing byte source (src/lib/input/unpack.c) on arbitrary
 * compressed bytes: gzip and zstd, under NDJSON, a JSON array and CSV. Byte 0 picks the
 * compression (bit 0) and the format (/ 2 % 3); the rest is the compressed file. Every answer must
 * be a record, the end, or an INVALID_INPUT with a message (corrupt data, a bad record); offsets
 * only grow; the same file read with one-byte blocks and with 64 KiB blocks must give the same
 * records, errors and cut state (the decoders' state survives any split of the output), and a
 * reader resumed at a record's end offset (decompressing from the start, dropping the bytes
 * before it) must give the records after it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input/input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
    uint64_t digest;
    uint64_t ends[64]; /* end offsets of the first records */
    size_t n_ends;
    bool cut;
};

static void read_all(FILE *f, enum s3l_input_compression c, enum s3l_input_format fmt, size_t block,
                     uint64_t start, struct seen *out)
{
    rewind(f);
    struct s3l_reader_options opt = {.version = S3L_READER_OPTIONS_VERSION,
                                     .format = fmt,
                                     .name = "fuzz.gz",
                                     .block_bytes = block,
                                     .max_record_bytes = 1 << 16,
                                     .compression = c,
                                     .start_offset = start};
    struct s3l_reader *r;
    struct s3l_error err = {0};
    memset(out, 0, sizeof(*out));
    uint64_t h = 1469598103934665603ULL, last = start;
    if (s3l_reader_open(fileno(f), &opt, &r, &err) != 0) {
        if (!start || !err.code || !err.message[0])
            abort(); /* only a resumed reader may fail to open (the input ends before it) */
        out->digest = 1;
        return;
    }
    for (int n = 0; n < 5000; n++) {
        struct s3l_record rec;
        s3l_error_clear(&err);
        int rc = s3l_reader_next(r, &rec, &err);
        if (rc == 0)
            break;
        if (rc < 0) {
            if (err.code != S3L_EINVALID_INPUT || !err.message[0])
                abort();
            h = (h ^ 0xE) * 1099511628211ULL;
            if (s3l_reader_broken(r))
                break;
            continue;
        }
        if (rc != 1 || rec.end_offset < last)
            abort();
        last = rec.end_offset;
        if (out->n_ends < 64)
            out->ends[out->n_ends++] = rec.end_offset;
        h = (h ^ rec.end_offset) * 1099511628211ULL;
        for (size_t i = 0; i < rec.raw_len; i++)
            h = (h ^ (uint8_t)rec.raw[i]) * 1099511628211ULL;
    }
    out->cut = s3l_reader_cut(r);
    out->digest = h;
    s3l_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    enum s3l_input_compression c = data[0] & 1 ? S3L_INPUT_ZSTD : S3L_INPUT_GZIP;
    enum s3l_input_format fmt = (enum s3l_input_format)(S3L_INPUT_NDJSON + (data[0] / 2) % 3);
    FILE *f = tmpfile();
    if (!f || (size > 1 && fwrite(data + 1, 1, size - 1, f) != size - 1) || fflush(f) != 0)
        abort();
    struct seen a, b, r;
    read_all(f, c, fmt, 1, 0, &a);
    read_all(f, c, fmt, 1 << 16, 0, &b);
    if (a.digest != b.digest || a.cut != b.cut || a.n_ends != b.n_ends) {
        fprintf(stderr, "the block size changed the records\n");
        abort();
    }
    /* Resumed after the first record (NDJSON: every line stands alone; the other formats need
     * the header or their state): the records after it are those read from the start. */
    if (fmt == S3L_INPUT_NDJSON && a.n_ends >= 2 && a.n_ends < 64) {
        read_all(f, c, fmt, 1 << 16, a.ends[0], &r);
        if (r.n_ends != a.n_ends - 1 || memcmp(r.ends, a.ends + 1, r.n_ends * sizeof(*r.ends)))
            abort();
    }
    fclose(f);
    return 0;
}
