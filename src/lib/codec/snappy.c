/*
 * SNAPPY over libsnappy's C API: the raw block format, no framing (Parquet Compression.md,
 * "SNAPPY"). Snappy has no levels and needs no context.
 */
#include <snappy-c.h>

#include "codec/codec.h"

static int snappy_open(struct s3l__codec *c)
{
    (void)c;
    return 0;
}

static size_t snappy_bound(size_t n)
{
    return snappy_max_compressed_length(n);
}

static int snappy_compress_page(struct s3l__codec *c, const void *src, size_t n, void *dst,
                                size_t cap, size_t *out_len)
{
    (void)c;
    size_t len = cap;
    if (snappy_compress(src, n, dst, &len) != SNAPPY_OK)
        return S3L_ECODEC;
    *out_len = len;
    return 0;
}

const struct s3l__codec_ops s3l__codec_snappy = {
    S3L_CODEC_SNAPPY, "snappy", 0, snappy_open, NULL, snappy_bound, snappy_compress_page,
};
