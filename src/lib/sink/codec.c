/*
 * The committable codec: the bytes a sink's prepare hands an engine to keep in its checkpoint,
 * and the strict decoder that commit and abort run before they act. The layout is in
 * include/s3l/ndjson_sink.h (s3l_committable_encode); docs/internals/sink.md explains it. The
 * decoder checks every length against what is left, every limit and the trailing CRC-32 before
 * it returns anything, so a truncated, altered or foreign committable is refused whole.
 */
#include <string.h>

#include "sink/sink.h"
#include "util/util.h"

static const uint8_t magic[4] = {'S', '3', 'L', 'C'};

/* CRC-32/ISO-HDLC (reflected, polynomial 0xEDB88320, init and final xor 0xFFFFFFFF): the CRC
 * of zlib's crc32() and of gzip (RFC 1952 section 8). Bitwise: committables are small. */
uint32_t s3l__sink_crc32(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

static int put_le(struct s3l_buf *b, uint64_t v, int n)
{
    uint8_t t[8];
    for (int i = 0; i < n; i++)
        t[i] = (uint8_t)(v >> (8 * i));
    return s3l_buf_append(b, t, (size_t)n);
}

static int put_str(struct s3l_buf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    int rc = put_le(b, n, 4);
    return rc ? rc : s3l_buf_append(b, s ? s : "", n);
}

/* The rules both directions share; what names the field at fault. */
static int check_str(const char *s, size_t max, const char *what, struct s3l_error *err)
{
    if (s && strlen(s) > max)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "committable: %s is longer than %zu bytes",
                             what, max);
    return 0;
}

static int check(const struct s3l_committable *c, struct s3l_error *err)
{
    if (c->kind == S3L_COMMITTABLE_EMPTY) {
        if (c->key || c->upload_id || c->token || c->n_parts || c->records || c->bytes)
            return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                                 "committable: an empty committable holds no key, upload, "
                                 "parts or counts");
        return 0;
    }
    if (c->kind != S3L_COMMITTABLE_MULTIPART)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "committable: unknown kind %d",
                             (int)c->kind);
    if (!c->key || !*c->key || !c->upload_id || !*c->upload_id)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                             "committable: a multipart committable needs a key and an upload id");
    int rc = check_str(c->key, S3L_COMMITTABLE_KEY_MAX, "key", err);
    if (!rc)
        rc = check_str(c->upload_id, S3L_COMMITTABLE_ID_MAX, "upload id", err);
    if (!rc)
        rc = check_str(c->token, S3L_COMMITTABLE_TOKEN_MAX, "token", err);
    if (rc)
        return rc;
    if (c->n_parts > S3L_COMMITTABLE_PARTS_MAX || (c->n_parts && !c->parts))
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "committable: %u parts (at most %u)",
                             (unsigned)c->n_parts, (unsigned)S3L_COMMITTABLE_PARTS_MAX);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < c->n_parts; i++) {
        const struct s3l_committable_part *p = &c->parts[i];
        if (p->number == 0 || p->number > S3L_COMMITTABLE_PARTS_MAX ||
            (i && p->number <= c->parts[i - 1].number))
            return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                                 "committable: part %u has number %u (1..10000, increasing)",
                                 (unsigned)i, (unsigned)p->number);
        if (!p->etag || !*p->etag)
            return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "committable: part %u has no ETag",
                                 (unsigned)p->number);
        rc = check_str(p->etag, S3L_COMMITTABLE_ETAG_MAX, "a part's ETag", err);
        if (rc)
            return rc;
        if (sum + p->size < sum)
            return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "committable: part sizes overflow");
        sum += p->size;
    }
    if (sum != c->bytes)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                             "committable: byte count %llu is not the parts' sum %llu",
                             (unsigned long long)c->bytes, (unsigned long long)sum);
    return 0;
}

int s3l_committable_encode(const struct s3l_committable *c, uint8_t **out, size_t *out_len,
                           struct s3l_error *err)
{
    if (!c || !out || !out_len)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "committable: NULL argument");
    int rc = check(c, err);
    if (rc)
        return rc;
    struct s3l_buf b;
    s3l_buf_init(&b, SIZE_MAX / 2);
    rc = s3l_buf_append(&b, magic, sizeof(magic));
    if (!rc)
        rc = put_le(&b, S3L_COMMITTABLE_VERSION, 2);
    if (!rc)
        rc = put_le(&b, (uint64_t)c->kind, 1);
    if (!rc)
        rc = put_le(&b, c->checkpoint, 8);
    if (!rc)
        rc = put_str(&b, c->key);
    if (!rc)
        rc = put_str(&b, c->upload_id);
    if (!rc)
        rc = put_str(&b, c->token);
    if (!rc)
        rc = put_le(&b, c->records, 8);
    if (!rc)
        rc = put_le(&b, c->bytes, 8);
    if (!rc)
        rc = put_le(&b, c->n_parts, 4);
    for (uint32_t i = 0; !rc && i < c->n_parts; i++) {
        rc = put_le(&b, c->parts[i].number, 4);
        if (!rc)
            rc = put_le(&b, c->parts[i].size, 8);
        if (!rc)
            rc = put_str(&b, c->parts[i].etag);
    }
    if (!rc)
        rc = put_le(&b, s3l__sink_crc32(b.ptr, b.len), 4);
    if (!rc)
        rc = s3l_buf_detach(&b, out, out_len);
    s3l_buf_free(&b);
    return rc ? s3l_error_set(err, rc, "committable: out of memory while encoding") : 0;
}

/* A cursor over the bytes being decoded. */
struct rd {
    const uint8_t *p;
    size_t len, at;
    struct s3l_error *err;
};

static int need(struct rd *r, size_t n, const char *what)
{
    if (r->len - r->at < n)
        return s3l_error_set(r->err, S3L_ECORRUPT,
                             "committable: truncated at byte %zu (%s needs %zu bytes, %zu left)",
                             r->at, what, n, r->len - r->at);
    return 0;
}

static int get_le(struct rd *r, int n, const char *what, uint64_t *v)
{
    int rc = need(r, (size_t)n, what);
    if (rc)
        return rc;
    *v = 0;
    for (int i = 0; i < n; i++)
        *v |= (uint64_t)r->p[r->at + (size_t)i] << (8 * i);
    r->at += (size_t)n;
    return 0;
}

static int get_str(struct rd *r, size_t max, const char *what, char **out)
{
    uint64_t n;
    int rc = get_le(r, 4, what, &n);
    if (rc)
        return rc;
    if (n > max)
        return s3l_error_set(r->err, S3L_ECORRUPT,
                             "committable: %s of %llu bytes at byte %zu (at most %zu)", what,
                             (unsigned long long)n, r->at - 4, max);
    if ((rc = need(r, (size_t)n, what)) != 0)
        return rc;
    if (memchr(r->p + r->at, 0, (size_t)n))
        return s3l_error_set(r->err, S3L_ECORRUPT, "committable: %s holds a NUL byte", what);
    if (n == 0) {
        *out = NULL;
        return 0;
    }
    *out = s3l_strndup((const char *)r->p + r->at, (size_t)n);
    if (!*out)
        return s3l_error_set(r->err, S3L_ENOMEM, "committable: out of memory");
    r->at += (size_t)n;
    return 0;
}

/* The header: magic, version, kind, checkpoint; and the checksum, checked before the rest. */
static int decode_head(struct rd *r, struct s3l_committable *c)
{
    int rc = need(r, sizeof(magic), "the magic");
    if (rc)
        return rc;
    if (memcmp(r->p, magic, sizeof(magic)) != 0)
        return s3l_error_set(r->err, S3L_ECORRUPT,
                             "committable: not an s3land sink committable (no \"S3LC\" magic)");
    r->at = sizeof(magic);
    uint64_t version, kind;
    if ((rc = get_le(r, 2, "the version", &version)) != 0)
        return rc;
    if (version != S3L_COMMITTABLE_VERSION)
        return s3l_error_set(r->err, S3L_ECORRUPT,
                             "committable: version %llu is not one this build reads (%d)",
                             (unsigned long long)version, S3L_COMMITTABLE_VERSION);
    if ((rc = need(r, 4, "the checksum")) != 0)
        return rc;
    uint64_t want = 0;
    for (int i = 0; i < 4; i++)
        want |= (uint64_t)r->p[r->len - 4 + (size_t)i] << (8 * i);
    if (s3l__sink_crc32(r->p, r->len - 4) != (uint32_t)want)
        return s3l_error_set(r->err, S3L_ECORRUPT,
                             "committable: checksum mismatch (altered or truncated bytes)");
    r->len -= 4; /* the fields end where the checksum starts */
    if ((rc = get_le(r, 1, "the kind", &kind)) != 0)
        return rc;
    if (kind != S3L_COMMITTABLE_EMPTY && kind != S3L_COMMITTABLE_MULTIPART)
        return s3l_error_set(r->err, S3L_ECORRUPT, "committable: unknown kind %llu",
                             (unsigned long long)kind);
    c->kind = (enum s3l_committable_kind)kind;
    return get_le(r, 8, "the checkpoint id", &c->checkpoint);
}

static int decode_parts(struct rd *r, struct s3l_committable *c)
{
    uint64_t n;
    int rc = get_le(r, 4, "the part count", &n);
    if (rc)
        return rc;
    /* Each part takes at least 16 bytes: a count the bytes cannot hold is refused before any
     * allocation. */
    if (n > S3L_COMMITTABLE_PARTS_MAX || n > (r->len - r->at) / 16)
        return s3l_error_set(
            r->err, S3L_ECORRUPT, "committable: %llu parts do not fit (at most %u, %zu bytes left)",
            (unsigned long long)n, (unsigned)S3L_COMMITTABLE_PARTS_MAX, r->len - r->at);
    if (n) {
        c->parts = s3l_calloc((size_t)n, sizeof(*c->parts));
        if (!c->parts)
            return s3l_error_set(r->err, S3L_ENOMEM, "committable: out of memory");
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t num, size;
        if ((rc = get_le(r, 4, "a part number", &num)) != 0 ||
            (rc = get_le(r, 8, "a part size", &size)) != 0)
            return rc;
        c->parts[i].number = (uint32_t)num;
        c->parts[i].size = size;
        c->n_parts = (uint32_t)(i + 1);
        if ((rc = get_str(r, S3L_COMMITTABLE_ETAG_MAX, "a part's ETag", &c->parts[i].etag)) != 0)
            return rc;
    }
    return 0;
}

int s3l_committable_decode(const uint8_t *data, size_t len, struct s3l_committable *c,
                           struct s3l_error *err)
{
    if (!c || (!data && len))
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "committable: NULL argument");
    memset(c, 0, sizeof(*c));
    struct rd r = {data, len, 0, err};
    int rc = decode_head(&r, c);
    if (!rc)
        rc = get_str(&r, S3L_COMMITTABLE_KEY_MAX, "the key", &c->key);
    if (!rc)
        rc = get_str(&r, S3L_COMMITTABLE_ID_MAX, "the upload id", &c->upload_id);
    if (!rc)
        rc = get_str(&r, S3L_COMMITTABLE_TOKEN_MAX, "the token", &c->token);
    if (!rc)
        rc = get_le(&r, 8, "the record count", &c->records);
    if (!rc)
        rc = get_le(&r, 8, "the byte count", &c->bytes);
    if (!rc)
        rc = decode_parts(&r, c);
    if (!rc && r.at != r.len)
        rc = s3l_error_set(err, S3L_ECORRUPT, "committable: %zu bytes after the last field",
                           r.len - r.at);
    if (!rc) {
        /* The encoder's rules, as an error about the bytes. */
        struct s3l_error e = {0};
        if (check(c, &e) != 0)
            rc = s3l_error_set(err, S3L_ECORRUPT, "%s", e.message);
    }
    if (rc)
        s3l_committable_cleanup(c);
    return rc;
}

void s3l_committable_cleanup(struct s3l_committable *c)
{
    if (!c)
        return;
    s3l_free(c->key);
    s3l_free(c->upload_id);
    s3l_free(c->token);
    for (uint32_t i = 0; i < c->n_parts; i++)
        s3l_free(c->parts[i].etag);
    s3l_free(c->parts);
    memset(c, 0, sizeof(*c));
}
