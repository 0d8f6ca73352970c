/*
 * Page compression codecs: one table of thin wrappers over libzstd, libsnappy and zlib. Parquet
 * compresses each page on its own (parquet.thrift CompressionCodec; Compression.md): ZSTD is a
 * zstd frame, SNAPPY the raw snappy block format (no framing), GZIP a gzip (RFC 1952) member.
 * A s3l__codec keeps the library's compression context so pages reuse it (no per-page setup).
 */
#ifndef S3L_CODEC_H
#define S3L_CODEC_H

#include <stddef.h>

#include "s3l/codec.h"
#include "util/util.h"

struct s3l__codec;

struct s3l__codec_ops {
    enum s3l_codec id;
    const char *name;
    int default_level;
    /* Creates the library context in c->state (may leave NULL). S3L_ENOMEM, S3L_ECODEC. */
    int (*open)(struct s3l__codec *c);
    void (*close)(struct s3l__codec *c);
    /* Worst-case compressed size of n input bytes. */
    size_t (*bound)(size_t n);
    /* Compresses src[0..n) into dst (cap >= bound(n)); *out_len gets the bytes written. */
    int (*compress)(struct s3l__codec *c, const void *src, size_t n, void *dst, size_t cap,
                    size_t *out_len);
};

struct s3l__codec {
    const struct s3l__codec_ops *ops;
    int level;
    void *state;
};

/* The ops of a codec, or NULL when this build has none for it. */
const struct s3l__codec_ops *s3l__codec_ops_find(enum s3l_codec id);

/*
 * Opens codec id at level (0: the codec's default). S3L_EUNSUPPORTED for a codec this build
 * lacks, S3L_EINVALID_CONFIG for a level out of the codec's range, S3L_ENOMEM, S3L_ECODEC.
 */
int s3l__codec_open(struct s3l__codec *c, enum s3l_codec id, int level, struct s3l_error *err);
void s3l__codec_close(struct s3l__codec *c);

/*
 * Appends the compressed form of src[0..n) to dst. S3L_ENOMEM, S3L_ETOO_LARGE (dst's cap),
 * S3L_ECODEC when the library fails.
 */
int s3l__codec_compress(struct s3l__codec *c, const void *src, size_t n, struct s3l_buf *dst);

/* The thin codec files. */
extern const struct s3l__codec_ops s3l__codec_none;
extern const struct s3l__codec_ops s3l__codec_zstd;
extern const struct s3l__codec_ops s3l__codec_snappy;
extern const struct s3l__codec_ops s3l__codec_gzip;

#endif
