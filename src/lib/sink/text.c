/*
 * The rolling text sink (`s3_text_sink`, at most once): the buffered lines go out as one part
 * object, `<key_prefix>/part-<n>` or `<key_prefix>/sub<i>-part-<n>`, by a put-if-absent
 * (PutObject with If-None-Match: *, S3 API Reference "PutObject", conditional writes; local:
 * link(2)), so a run never replaces a part an earlier run published: on a conflict it takes the
 * next number. A restored run first lists its own parts (ListObjectsV2: needs s3:ListBucket)
 * and starts after the highest. With a compression the part is compressed whole (a gzip member
 * or a zstd frame, through codec/) and its name ends `.gz` or `.zst`; the numbering counts the
 * names with or without a suffix, so a run restored with another compression still never goes
 * back. docs/internals/sink.md states the loss window.
 */
#include <stdio.h>
#include <string.h>

#include "sink/sink.h"

/* The highest n among keys "<prefix><digits>[.gz|.zst]" (no more than 19 digits). */
struct highest {
    const char *prefix;
    size_t plen;
    bool found;
    uint64_t max;
};

static int see(void *ctx, const struct s3l_object_info *info)
{
    struct highest *h = ctx;
    if (strncmp(info->key, h->prefix, h->plen) != 0)
        return 0;
    const char *d = info->key + h->plen;
    size_t n = strspn(d, "0123456789");
    const char *tail = d + n;
    if (n == 0 || n > 19 || (*tail && strcmp(tail, ".gz") != 0 && strcmp(tail, ".zst") != 0))
        return 0; /* another object (a subtask's, a longer name): not one of ours */
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (uint64_t)(d[i] - '0');
    if (!h->found || v > h->max)
        h->max = v;
    h->found = true;
    return 0;
}

int s3l__text_restore(struct s3l_sink *s, struct s3l_error *err)
{
    struct highest h = {s->prefix, strlen(s->prefix), false, 0};
    int rc = s3l_store_list(s->store, s->prefix, see, &h, err);
    if (rc)
        return s3l_error_set(err, rc, "text sink: listing the parts under '%s' to restore",
                             s->prefix);
    s->next_part = h.found ? h.max + 1 : 0;
    return 0;
}

/* The part's bytes as stored: the buffer, or its compressed form in zbuf. */
static int part_bytes(struct s3l_sink *s, const uint8_t **p, size_t *n, struct s3l_error *err)
{
    if (!s->codec.ops) {
        *p = s->buf.ptr;
        *n = s->buf.len;
        return 0;
    }
    s3l_buf_reset(&s->zbuf);
    int rc = s3l__codec_compress(&s->codec, s->buf.ptr, s->buf.len, &s->zbuf);
    if (rc)
        return s3l_error_set(err, rc, "text sink: %s compression of part %llu (%zu bytes): %s",
                             s->codec.ops->name, (unsigned long long)s->next_part, s->buf.len,
                             s3l_strerror(rc));
    *p = s->zbuf.ptr;
    *n = s->zbuf.len;
    return 0;
}

/* Puts the buffer under the first free number from next_part on. */
int s3l__text_flush(struct s3l_sink *s, struct s3l_error *err)
{
    if (s->buf.len == 0)
        return 0;
    const uint8_t *data = NULL;
    size_t n = 0;
    int prc = part_bytes(s, &data, &n, err);
    if (prc)
        return prc;
    struct s3l_put_options po = {.if_none_match = true, .content_type = s->content_type};
    char key[S3L_COMMITTABLE_KEY_MAX + 32];
    /* A fresh run over many earlier parts would try each number in turn: after a few conflicts
     * it lists them once and jumps past the highest. Conflicts after that jump mean a store that
     * refuses for another reason (or a writer racing on our names): CONFLICT, naming the key. */
    int conflicts = 0;
    bool listed = false;
    for (;;) {
        snprintf(key, sizeof(key), "%s%llu%s", s->prefix, (unsigned long long)s->next_part,
                 s->suffix);
        struct s3l_error e = {0};
        int rc = s3l_store_put(s->store, key, data, n, &po, NULL, &e);
        if (rc == S3L_EPRECONDITION_FAILED) {
            s->next_part++; /* an earlier run's part: never replaced */
            if (++conflicts < 16)
                continue;
            if (listed)
                return s3l_error_set(err, S3L_ECONFLICT,
                                     "text sink: %s exists, as did every part name tried "
                                     "after listing the parts",
                                     key);
            uint64_t before = s->next_part;
            if ((rc = s3l__text_restore(s, err)) != 0)
                return rc;
            s->next_part = S3L_MAX(s->next_part, before);
            listed = true;
            conflicts = 0;
            continue;
        }
        if (rc) {
            if (err && !err->code)
                *err = e;
            return rc;
        }
        break;
    }
    s->next_part++;
    s->parts++;
    s->bytes += s->buf.len;
    s3l_buf_reset(&s->buf);
    s3l_buf_reset(&s->zbuf);
    return 0;
}
