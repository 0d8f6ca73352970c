/*
 * GZIP over zlib: each page is one gzip member (RFC 1952), as Parquet's Compression.md asks
 * ("GZIP": the GZIP format, not raw deflate or zlib). windowBits 15 + 16 selects gzip framing;
 * zlib writes mtime 0 and no file name, so output is deterministic. Default level 6.
 */
#include <zlib.h>

#include "codec/codec.h"

static int gzip_open(struct s3l__codec *c)
{
    if (c->level < 1 || c->level > 9)
        return S3L_EINVALID_CONFIG;
    z_stream *z = s3l_calloc(1, sizeof(*z));
    if (!z)
        return S3L_ENOMEM;
    if (deflateInit2(z, c->level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        s3l_free(z);
        return S3L_ECODEC;
    }
    c->state = z;
    return 0;
}

static void gzip_close(struct s3l__codec *c)
{
    if (c->state) {
        deflateEnd(c->state);
        s3l_free(c->state);
    }
}

static size_t gzip_bound(size_t n)
{
    /* deflateBound for the default window and memLevel plus the gzip header and trailer. */
    return n + (n >> 12) + (n >> 14) + (n >> 25) + 13 + 18 + 64;
}

static int gzip_compress(struct s3l__codec *c, const void *src, size_t n, void *dst, size_t cap,
                         size_t *out_len)
{
    z_stream *z = c->state;
    if (deflateReset(z) != Z_OK)
        return S3L_ECODEC;
    size_t done_in = 0, done_out = 0;
    int zr;
    /* avail_in/avail_out are 32-bit; feed at most 1 GiB at a time. */
    do {
        size_t in_chunk = S3L_MIN(n - done_in, (size_t)1 << 30);
        size_t out_chunk = S3L_MIN(cap - done_out, (size_t)1 << 30);
        z->next_in = (Bytef *)((const uint8_t *)src + done_in);
        z->avail_in = (uInt)in_chunk;
        z->next_out = (Bytef *)dst + done_out;
        z->avail_out = (uInt)out_chunk;
        int flush = done_in + in_chunk == n ? Z_FINISH : Z_NO_FLUSH;
        zr = deflate(z, flush);
        done_in += in_chunk - z->avail_in;
        done_out += out_chunk - z->avail_out;
        if (zr == Z_STREAM_ERROR || (zr == Z_BUF_ERROR && done_out == cap))
            return S3L_ECODEC;
    } while (zr != Z_STREAM_END);
    *out_len = done_out;
    return 0;
}

const struct s3l__codec_ops s3l__codec_gzip = {
    S3L_CODEC_GZIP, "gzip", 6, gzip_open, gzip_close, gzip_bound, gzip_compress,
};
