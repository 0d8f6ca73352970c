/*
 * A trivial file format for protocol tests (the format vtable of src/lib/commit/commit.h): a file
 * is "TESTFMT\n", one text line per row (values comma-separated: integers in decimal, null as
 * N, bytes as is), then "END rows=N\n". A row whose bytes value is "BAD" is rejected with
 * S3L_EINVALID_INPUT. Schema records are {"columns":[{"name":..,"type":<type id>},...]}.
 */
#ifndef S3L_TEST_CODEC_H
#define S3L_TEST_CODEC_H

#include "commit/commit.h"

/* Fills c with the test format. */
void s3l_test_format(struct s3l__dest_format *c);

/* Parses a test-format file: calls row(ctx, line, len) for each row line; returns the row count
 * the trailer states, or -1 when the file is not a whole test-format file. */
long s3l_test_format_parse(const char *data, size_t len,
                          void (*row)(void *ctx, const char *line, size_t len), void *ctx);

#endif
