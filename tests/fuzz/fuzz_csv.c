/*
 * Fuzz target: the CSV reader on arbitrary bytes, with several block sizes, record limits and
 * delimiters. Every answer must be a record, the end, or an INVALID_INPUT with a message; records
 * must be objects whose keys are the header's and whose offsets only grow; the same input read
 * with a one-byte block and a large block must give the same records (the quote state survives
 * refills). The first byte picks the delimiter.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads everything, hashing the records' JSON text and offsets into *digest. */
static void read_all(const uint8_t *data, size_t size, char delim, size_t block, size_t max,
                     uint64_t *digest)
{
    FILE *f = tmpfile();
    if (!f)
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fflush(f);
    rewind(f);
    struct s3l_reader_options opt = {.version = S3L_READER_OPTIONS_VERSION,
                                     .format = S3L_INPUT_CSV, .name = "fuzz.csv",
                                     .block_bytes = block, .max_record_bytes = max,
                                     .csv_delimiter = delim};
    struct s3l_reader *r;
    struct s3l_error err = {0};
    if (s3l_reader_open(fileno(f), &opt, &r, &err) != 0)
        abort();
    struct s3l_buf b;
    s3l_buf_init(&b, 1 << 24);
    uint64_t h = 1469598103934665603ULL, last_end = 0;
    for (int n = 0; n < 10000; n++) {
        struct s3l_record rec;
        s3l_error_clear(&err);
        int rc = s3l_reader_next(r, &rec, &err);
        if (rc == 0)
            break;
        if (rc < 0) {
            if (err.code != S3L_EINVALID_INPUT || !err.message[0])
                abort();
            h = (h ^ 0xE) * 1099511628211ULL;
            if (r->sticky)
                break;
            continue;
        }
        if (rec.values[0].kind != S3L_VALUE_OBJECT || rec.values[0].len != r->n_columns ||
            rec.end_offset < last_end || rec.end_offset > size)
            abort();
        last_end = rec.end_offset;
        s3l_buf_reset(&b);
        if (s3l__json_write(&b, rec.values, 0) != 0)
            abort();
        for (size_t i = 0; i < b.len; i++)
            h = (h ^ b.ptr[i]) * 1099511628211ULL;
        h = (h ^ rec.end_offset) * 1099511628211ULL;
        /* The JSON we write back is valid JSON: scan it. */
        struct s3l__jscan s;
        s3l__jscan_init(&s, 0);
        if (s3l__json_scan(&s, (const char *)b.ptr, b.len) != 0)
            abort();
        s3l__jscan_cleanup(&s);
    }
    *digest = h;
    s3l_buf_free(&b);
    s3l_reader_free(r);
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char delims[] = {',', ';', '\t', '|'};
    char delim = size ? delims[data[0] % 4] : ',';
    uint64_t a, b, c;
    read_all(data, size, delim, 1, 1 << 20, &a);
    read_all(data, size, delim, 1 << 16, 1 << 20, &b);
    if (a != b) {
        fprintf(stderr, "block size changed the records\n");
        abort();
    }
    read_all(data, size, delim, 7, 48, &c);
    return 0;
}
