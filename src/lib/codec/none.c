/* The UNCOMPRESSED codec: pages are stored as they are. */
#include "codec/codec.h"

static int none_open(struct s3l__codec *c)
{
    (void)c;
    return 0;
}

static size_t none_bound(size_t n)
{
    return n;
}

static int none_compress(struct s3l__codec *c, const void *src, size_t n, void *dst, size_t cap,
                         size_t *out_len)
{
    (void)c;
    (void)cap;
    if (n)
        memcpy(dst, src, n);
    *out_len = n;
    return 0;
}

const struct s3l__codec_ops s3l__codec_none = {
    S3L_CODEC_NONE, "none", 0, none_open, NULL, none_bound, none_compress,
};
