/*
 * The codec table and the public names (include/s3l/codec.h: s3l_codec_parse, s3l_codec_name).
 * lz4_raw is recognised by name but this build has no liblz4, so opening it is S3L_EUNSUPPORTED.
 */
#include <strings.h>

#include "codec/codec.h"

static const struct s3l__codec_ops *const table[] = {
    &s3l__codec_none,
    &s3l__codec_snappy,
    &s3l__codec_gzip,
    &s3l__codec_zstd,
};

const struct s3l__codec_ops *s3l__codec_ops_find(enum s3l_codec id)
{
    for (size_t i = 0; i < S3L_ARRAY_LEN(table); i++)
        if (table[i]->id == id)
            return table[i];
    return NULL;
}

int s3l_codec_parse(const char *name, enum s3l_codec *out, struct s3l_error *err)
{
    static const struct {
        const char *name;
        enum s3l_codec id;
    } names[] = {
        {"zstd", S3L_CODEC_ZSTD}, {"snappy", S3L_CODEC_SNAPPY},     {"gzip", S3L_CODEC_GZIP},
        {"none", S3L_CODEC_NONE}, {"uncompressed", S3L_CODEC_NONE}, {"lz4_raw", S3L_CODEC_LZ4_RAW},
    };
    for (size_t i = 0; name && i < S3L_ARRAY_LEN(names); i++) {
        if (strcasecmp(name, names[i].name) == 0) {
            *out = names[i].id;
            return 0;
        }
    }
    return s3l_error_set(err, S3L_EINVALID_CONFIG,
                         "compression '%s': expected zstd, snappy, gzip, none or lz4_raw",
                         name ? name : "(null)");
}

const char *s3l_codec_name(enum s3l_codec codec)
{
    switch (codec) {
    case S3L_CODEC_NONE:
        return "none";
    case S3L_CODEC_SNAPPY:
        return "snappy";
    case S3L_CODEC_GZIP:
        return "gzip";
    case S3L_CODEC_ZSTD:
        return "zstd";
    case S3L_CODEC_LZ4_RAW:
        return "lz4_raw";
    }
    return "unknown";
}

int s3l__codec_open(struct s3l__codec *c, enum s3l_codec id, int level, struct s3l_error *err)
{
    c->ops = s3l__codec_ops_find(id);
    c->state = NULL;
    if (!c->ops)
        return s3l_error_set(err, S3L_EUNSUPPORTED, "compression %s is not built in",
                             s3l_codec_name(id));
    c->level = level ? level : c->ops->default_level;
    int rc = c->ops->open(c);
    if (rc == S3L_EINVALID_CONFIG)
        return s3l_error_set(err, rc, "compression %s: level %d is out of range", c->ops->name,
                             level);
    if (rc)
        return s3l_error_set(err, rc, "compression %s: cannot open: %s", c->ops->name,
                             s3l_strerror(rc));
    return 0;
}

void s3l__codec_close(struct s3l__codec *c)
{
    if (c->ops && c->ops->close)
        c->ops->close(c);
    c->state = NULL;
}

int s3l__codec_compress(struct s3l__codec *c, const void *src, size_t n, struct s3l_buf *dst)
{
    size_t bound = c->ops->bound(n);
    int rc = s3l_buf_reserve(dst, bound);
    if (rc)
        return rc;
    size_t out = 0;
    rc = c->ops->compress(c, src, n, dst->ptr + dst->len, bound, &out);
    if (rc)
        return rc;
    dst->len += out;
    dst->ptr[dst->len] = 0;
    return 0;
}
