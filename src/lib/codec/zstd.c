/*
 * ZSTD over libzstd: one frame per page (Parquet Compression.md, "ZSTD": RFC 8478 frames).
 * The context is kept and reused for every page; the level is set once (default 3, zstd's own).
 */
#include <zstd.h>

#include "codec/codec.h"

static int zstd_open(struct s3l__codec *c)
{
    if (c->level < ZSTD_minCLevel() || c->level > ZSTD_maxCLevel())
        return S3L_EINVALID_CONFIG;
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    if (!cc)
        return S3L_ENOMEM;
    if (ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, c->level))) {
        ZSTD_freeCCtx(cc);
        return S3L_EINVALID_CONFIG;
    }
    c->state = cc;
    return 0;
}

static void zstd_close(struct s3l__codec *c)
{
    ZSTD_freeCCtx(c->state);
}

static size_t zstd_bound(size_t n)
{
    return ZSTD_compressBound(n);
}

static int zstd_compress(struct s3l__codec *c, const void *src, size_t n, void *dst, size_t cap,
                         size_t *out_len)
{
    size_t r = ZSTD_compress2(c->state, dst, cap, src, n);
    if (ZSTD_isError(r))
        return S3L_ECODEC;
    *out_len = r;
    return 0;
}

const struct s3l__codec_ops s3l__codec_zstd = {
    S3L_CODEC_ZSTD, "zstd", 3, zstd_open, zstd_close, zstd_bound, zstd_compress,
};
