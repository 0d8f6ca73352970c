/*
 * The two-phase sink (`s3_2pc_string_sink`, exactly once): one object per (subtask,
 * checkpoint), `<key_prefix>/sub<N>-<run>-<ckpt>.ndjson`, written as a staged upload of the
 * store (s3l/store.h: on S3 a multipart upload whose parts stream as they fill, on file:// a
 * staged file). begin names the object; the first record starts the upload (an empty interval
 * makes none); prepare stages it (every part sent, nothing visible) and returns the committable
 * (key, upload id, token, parts, counts); commit completes it, idempotently, from this process or
 * one restored from the engine's checkpoint; abort drops it. The protocol points after_prepare
 * and before_commit are announced to the store (s3l_store_event) for test wrappers; the sink has
 * no test switches. docs/internals/sink.md has the invariants.
 */
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

#include "os/os.h"
#include "sink/sink.h"

#define PART_MIN (5ull << 20) /* S3: every part but the last is at least 5 MiB */

int s3l__twopc_open(struct s3l_sink *s, const struct s3l_sink_options *o, struct s3l_error *err)
{
    s->part_size = o->part_size ? o->part_size : S3L_SINK_PART_DEFAULT;
    if (s->part_size < PART_MIN)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "sink: part_size %llu is below 5 MiB (5242880), S3's minimum part",
                             (unsigned long long)s->part_size);
    uint8_t r[4];
    if (RAND_bytes(r, sizeof(r)) != 1)
        return s3l_error_set(err, S3L_EINTERNAL, "sink: no random bytes for the run id");
    /* Run ids sort by start time: 13 digits of ms hold every date until the year 2286. */
    uint64_t ms = (uint64_t)(s3l__os_now_ns() / 1000000);
    snprintf(s->run, sizeof(s->run), "%013llu%02x%02x%02x%02x", (unsigned long long)ms, r[0], r[1],
             r[2], r[3]);
    return 0;
}

int s3l__twopc_begin(struct s3l_sink *s, uint64_t ckpt, struct s3l_error *err)
{
    int n =
        snprintf(s->key, sizeof(s->key), "%s%020llu.ndjson", s->prefix, (unsigned long long)ckpt);
    if (n < 0 || (size_t)n > S3L_COMMITTABLE_KEY_MAX)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "sink: the key of checkpoint %llu is over "
                             "%d bytes: shorten key_prefix",
                             (unsigned long long)ckpt, S3L_COMMITTABLE_KEY_MAX);
    s->iv_records = s->iv_bytes = 0;
    return 0;
}

static int start(struct s3l_sink *s, struct s3l_error *err)
{
    struct s3l_put_options po = {.content_type = s->content_type, .part_size = s->part_size};
    int rc = s3l_store_upload_begin(s->store, s->key, &po, &s->up, err);
    if (rc)
        s->up = NULL;
    return rc;
}

int s3l__twopc_room(const struct s3l_sink *s, uint64_t n, struct s3l_error *err)
{
    /* 10,000 parts: S3's limit on one multipart upload (S3 API Reference, "Amazon S3 multipart
     * upload limits"). */
    uint64_t max = s->part_size * S3L_COMMITTABLE_PARTS_MAX;
    if (n > max || s->iv_bytes > max - n)
        return s3l_error_set(err, S3L_ETOO_LARGE,
                             "sink: checkpoint %llu would hold more than part_size (%llu bytes) "
                             "x 10,000 parts, S3's limit for one object; raise part_size or "
                             "checkpoint more often",
                             (unsigned long long)s->ckpt, (unsigned long long)s->part_size);
    return 0;
}

int s3l__twopc_write(struct s3l_sink *s, const uint8_t *r, size_t len, bool add_nl,
                     struct s3l_error *err)
{
    uint64_t n = (uint64_t)len + add_nl;
    int rc = s3l__twopc_room(s, n, err);
    if (rc == 0 && !s->up)
        rc = start(s, err);
    if (rc == 0 && len)
        rc = s3l_store_upload_write(s->up, r, len, err);
    if (rc == 0 && add_nl)
        rc = s3l_store_upload_write(s->up, "\n", 1, err);
    if (rc)
        return rc;
    s->iv_bytes += n;
    s->iv_records++;
    return 0;
}

/* The committable of a staged upload, encoded. */
static int encode_staged(struct s3l_sink *s, uint64_t ckpt, const struct s3l_staged *st,
                         uint8_t **out, size_t *out_len, struct s3l_error *err)
{
    struct s3l_committable c = {.kind = S3L_COMMITTABLE_MULTIPART,
                                .checkpoint = ckpt,
                                .key = s->key,
                                .upload_id = st->upload_id,
                                .token = st->token,
                                .n_parts = st->n_parts,
                                .records = s->iv_records,
                                .bytes = st->size};
    c.parts = s3l_calloc(st->n_parts ? st->n_parts : 1, sizeof(*c.parts));
    if (!c.parts)
        return s3l_error_set(err, S3L_ENOMEM, "sink: out of memory");
    for (uint32_t i = 0; i < st->n_parts; i++) {
        c.parts[i].number = st->parts[i].number;
        c.parts[i].size = st->parts[i].size;
        c.parts[i].etag = (char *)st->parts[i].etag;
    }
    int rc = s3l_committable_encode(&c, out, out_len, err);
    s3l_free(c.parts);
    return rc;
}

int s3l__twopc_prepare(struct s3l_sink *s, uint64_t ckpt, uint8_t **out, size_t *out_len,
                       struct s3l_error *err)
{
    if (!s->up) { /* an empty interval: no object, no upload */
        struct s3l_committable c = {.kind = S3L_COMMITTABLE_EMPTY, .checkpoint = ckpt};
        return s3l_committable_encode(&c, out, out_len, err);
    }
    struct s3l_staged st;
    struct s3l_upload *up = s->up;
    s->up = NULL;
    struct s3l_error e = {0};
    int rc = s3l_store_upload_stage(up, &st, &e);
    if (rc)
        return s3l_error_set(err, rc, "sink: staging checkpoint %llu as '%s': %s",
                             (unsigned long long)ckpt, s->key, e.message);
    if (st.size != s->iv_bytes)
        rc = s3l_error_set(err, S3L_EINTERNAL, "sink: '%s' staged %llu bytes, %llu written", s->key,
                           (unsigned long long)st.size, (unsigned long long)s->iv_bytes);
    if (rc == 0)
        rc = encode_staged(s, ckpt, &st, out, out_len, err);
    if (rc == 0) {
        s->parts += st.n_parts;
        s->bytes += st.size;
        s3l_store_event(s->store, "after_prepare");
    }
    s3l_staged_cleanup(&st);
    return rc;
}

int s3l__twopc_commit(struct s3l_sink *s, const struct s3l_committable *c, struct s3l_error *err)
{
    if (!c->token) /* the sink always makes one: without it a HEAD could not settle anything */
        return s3l_error_set(err, S3L_ECORRUPT,
                             "sink: the committable of checkpoint %llu ('%s') has no upload "
                             "token, so a repeated complete could not be settled; refused",
                             (unsigned long long)c->checkpoint, c->key);
    struct s3l_staged st = {.upload_id = c->upload_id,
                            .token = c->token,
                            .size = c->bytes,
                            .n_parts = c->n_parts};
    st.parts = s3l_calloc(c->n_parts ? c->n_parts : 1, sizeof(*st.parts));
    if (!st.parts)
        return s3l_error_set(err, S3L_ENOMEM, "sink: out of memory");
    for (uint32_t i = 0; i < c->n_parts; i++) {
        st.parts[i].number = c->parts[i].number;
        st.parts[i].size = c->parts[i].size;
        snprintf(st.parts[i].etag, sizeof(st.parts[i].etag), "%s", c->parts[i].etag);
    }
    s3l_store_event(s->store, "before_commit");
    struct s3l_error e = {0};
    int rc = s3l_store_staged_complete(s->store, c->key, &st, NULL, &e);
    s3l_free(st.parts);
    if (rc)
        return s3l_error_set(err, rc, "sink: commit of checkpoint %llu ('%s', %llu records): %s",
                             (unsigned long long)c->checkpoint, c->key,
                             (unsigned long long)c->records, e.message);
    return 0;
}

int s3l__twopc_abort(struct s3l_sink *s, const struct s3l_committable *c, struct s3l_error *err)
{
    struct s3l_error e = {0};
    int rc = s3l_store_staged_abort(s->store, c->key, c->upload_id, &e);
    if (rc)
        return s3l_error_set(err, rc, "sink: abort of checkpoint %llu ('%s'): %s",
                             (unsigned long long)c->checkpoint, c->key, e.message);
    return 0;
}

void s3l__twopc_drop(struct s3l_sink *s)
{
    s3l_store_upload_abort(s->up);
    s->up = NULL;
}
