/*
 * Streaming uploads and large copies on top of the operations. Bytes become parts of a multipart
 * upload as they arrive: a full part is sent at once and the caller goes on filling the next
 * buffer while up to max_in_flight parts travel (a sliding window over the libcurl multi handle,
 * pumped at every write), so memory stays at part_size * (max_in_flight + 1). Part buffers come
 * from the client's pool (recycled, so a steady upload faults in no new pages, and capped for all
 * uploads together); each part's CRC32C is computed as its bytes arrive, while they are still in
 * the cache; Content-MD5s are computed for two full parts at once (md5x2.c: 1.7 times the
 * throughput of one MD5), so a full part waits for the next one to fill before both are sent,
 * and an upload then holds one more buffer. curl reads each part straight from its buffer.
 * Between two writes (a Parquet writer emits bytes only at a row group's end, and encodes the
 * next one meanwhile) the caller keeps the parts in flight moving with s3l_s3_upload_progress:
 * libcurl sends a body only while it is driven, and a part's answer is taken in (its buffer
 * freed) only then, so without it a part sent at a row group's end would wait for the next.
 * Publishing settles
 * the cases where S3 leaves the outcome unknown (docs/design.md section 5 and issue 4): a Complete
 * whose answer was lost is retried by the transport; if the retry says NoSuchUpload, 5xx or
 * times out, a HEAD decides, by the random token stored in x-amz-meta-s3land-upload at create and
 * the size, never by an ETag computed from the parts (not an MD5 under SSE-KMS). Ceph RGW's
 * empty Complete ETag is filled by a HEAD too.
 */
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>

#include "s3/s3_int.h"

#define MIN_PART (5u << 20) /* S3: every part but the last is at least 5 MiB */
#define DEFAULT_PART (8u << 20)

/* A part: being filled (cur), travelling (busy), or free (no buffer: it went back to the pool). */
struct slot {
    struct s3l__http_req r;
    struct s3l__digest dg;
    uint8_t *buf;
    size_t len;
    int number;
    bool busy;
    bool hashed; /* b64 holds the part's Content-MD5 already */
    char numstr[16];
    char b64[32];
};

struct s3l_s3_upload {
    struct s3l_s3_client *c;
    char *bucket, *key;
    char *content_type, *sse, *sse_kms_key_id, *storage_class, *if_match;
    bool if_none_match;
    char token[33];
    char *upload_id;
    size_t part_size;
    struct slot *slots;
    int n_slots;
    int cur; /* the slot being filled, or -1 */
    int held; /* a full part waiting to be hashed with the next one (Content-MD5), or -1 */
    bool pair_md5;
    struct s3l__http_req **window;
    struct s3l_s3_part *parts; /* parts[number - 1] */
    size_t n_parts, cap_parts;
    uint64_t size;
    int rc; /* sticky: the first failure */
    struct s3l_error first;
};

uint64_t s3l_s3_upload_size(const struct s3l_s3_upload *u)
{
    return u ? u->size : 0;
}

void s3l_s3_client_counters(const struct s3l_s3_client *c, uint64_t *requests, uint64_t *retries,
                            uint64_t *slowdowns)
{
    if (requests)
        *requests = c->n_requests;
    if (retries)
        *retries = c->n_retries;
    if (slowdowns)
        *slowdowns = c->n_slowdowns;
}

static void cancel_all(struct s3l_s3_upload *u)
{
    for (int i = 0; u->slots && i < u->n_slots; i++) {
        struct slot *s = &u->slots[i];
        if (s->busy)
            s3l__http_cancel(u->c, &s->r);
        s3l__http_req_cleanup(&s->r);
        if (s->busy) { /* the part is dropped: its buffer goes back (the filling one stays) */
            s3l__buf_give(u->c, s->buf, u->part_size);
            s->buf = NULL;
        }
        s->busy = false;
    }
}

static void upload_free(struct s3l_s3_upload *u)
{
    if (!u)
        return;
    cancel_all(u);
    for (int i = 0; u->slots && i < u->n_slots; i++) {
        s3l__buf_give(u->c, u->slots[i].buf, u->part_size);
        s3l__digest_free(&u->slots[i].dg);
    }
    s3l_free(u->slots), s3l_free(u->window), s3l_free(u->parts), s3l_free(u->upload_id);
    s3l_free(u->bucket), s3l_free(u->key), s3l_free(u->content_type), s3l_free(u->sse);
    s3l_free(u->sse_kms_key_id), s3l_free(u->storage_class), s3l_free(u->if_match);
    s3l_free(u);
}

static bool dup_into(char **dst, const char *src)
{
    if (!src)
        return true;
    *dst = s3l_strdup(src);
    return *dst != NULL;
}

static int random_token(char out[33])
{
    uint8_t b[16];
    if (RAND_bytes(b, sizeof(b)) != 1)
        return S3L_EINTERNAL;
    s3l_hex_encode(b, sizeof(b), out);
    return 0;
}

uint64_t s3l_s3_part_size(uint64_t object_size, uint64_t min_part)
{
    if (object_size > S3L_S3_MAX_OBJECT)
        return 0;
    uint64_t part = min_part ? min_part : DEFAULT_PART;
    if (object_size <= part * S3L_S3_MAX_PARTS)
        return part;
    const uint64_t mib = 1u << 20;
    uint64_t need = (object_size + S3L_S3_MAX_PARTS - 1) / S3L_S3_MAX_PARTS;
    return (need + mib - 1) / mib * mib;
}

int s3l_s3_upload_begin(struct s3l_s3_client *c, const char *bucket, const char *key,
                        const struct s3l_s3_put_options *opts, size_t part_size,
                        struct s3l_s3_upload **out, struct s3l_error *err)
{
    *out = NULL;
    int rc = s3l__check_bucket(bucket, err);
    if (rc == 0)
        rc = s3l__check_key(key, err);
    if (rc == 0 && part_size != 0 && part_size < MIN_PART)
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG, "part size %zu is below S3's 5 MiB minimum",
                           part_size);
    if (rc != 0)
        return rc;
    struct s3l_s3_upload *u = s3l_calloc(1, sizeof(*u));
    bool ok = u != NULL;
    if (ok) {
        u->c = c;
        u->cur = u->held = -1;
        u->part_size = part_size ? part_size : DEFAULT_PART;
        u->pair_md5 = c->integrity == S3L_S3_INTEGRITY_MD5;
        u->n_slots = c->max_in_flight + 1 + u->pair_md5;
        u->slots = s3l_calloc((size_t)u->n_slots, sizeof(*u->slots));
        u->window = s3l_calloc((size_t)u->n_slots, sizeof(*u->window));
        ok = u->slots && u->window && dup_into(&u->bucket, bucket) && dup_into(&u->key, key);
    }
    if (ok && opts) {
        u->if_none_match = opts->if_none_match;
        ok = dup_into(&u->content_type, opts->content_type) && dup_into(&u->sse, opts->sse) &&
             dup_into(&u->sse_kms_key_id, opts->sse_kms_key_id) &&
             dup_into(&u->storage_class, opts->storage_class) &&
             dup_into(&u->if_match, opts->if_match);
    }
    if (!ok || random_token(u->token) != 0) {
        upload_free(u);
        return s3l_error_set(err, S3L_ENOMEM, "upload of %s: out of memory", key);
    }
    *out = u;
    return 0;
}

static struct s3l_s3_put_options put_opts(const struct s3l_s3_upload *u, bool conditions)
{
    struct s3l_s3_put_options o = {
        .content_type = u->content_type, .sse = u->sse, .sse_kms_key_id = u->sse_kms_key_id,
        .storage_class = u->storage_class, .upload_meta = u->token,
    };
    if (conditions) {
        o.if_none_match = u->if_none_match;
        o.if_match = u->if_match;
    }
    return o;
}

static int fail(struct s3l_s3_upload *u, int rc, const struct s3l_error *e,
                struct s3l_error *err)
{
    if (u->rc == 0) {
        u->rc = rc;
        u->first = *e;
    }
    if (err && err->code == 0)
        *err = *e;
    cancel_all(u);
    return rc;
}

static int grow_parts(struct s3l_s3_upload *u, size_t n, struct s3l_error *e)
{
    if (n <= u->cap_parts)
        return 0;
    size_t old = u->cap_parts;
    if (s3l__array_reserve(&u->parts, &u->cap_parts, n, sizeof(*u->parts), n + 16))
        return s3l_error_set(e, S3L_ENOMEM, "upload of %s: out of memory", u->key);
    memset(u->parts + old, 0, (u->cap_parts - old) * sizeof(*u->parts));
    return 0;
}

/* Takes in the parts that have arrived; frees their slots. */
static int collect(struct s3l_s3_upload *u, struct s3l_error *e)
{
    int rc = 0;
    for (int i = 0; i < u->n_slots; i++) {
        struct slot *s = &u->slots[i];
        if (!s->busy || !s3l__http_done(u->c, &s->r))
            continue;
        if (s->r.rc != 0 && rc == 0) {
            *e = s->r.err;
            rc = s->r.rc;
        } else if (s->r.rc == 0) {
            struct s3l_s3_part *p = &u->parts[s->number - 1];
            p->number = s->number;
            p->size = s->len;
            memcpy(p->etag, s->r.etag, sizeof(p->etag));
            if (!p->etag[0] && rc == 0)
                rc = s3l_error_set(e, S3L_ECORRUPT, "UploadPart %s part %d: no ETag in the "
                                   "answer", u->key, s->number);
        }
        s3l__http_req_reset(&s->r);
        s3l__buf_give(u->c, s->buf, u->part_size);
        s->buf = NULL;
        s->busy = false;
        s->len = 0;
    }
    return rc;
}

/* Drives the parts in flight until at most `allowed` are unfinished, then collects. */
static int pump(struct s3l_s3_upload *u, size_t allowed, struct s3l_error *e)
{
    size_t n = 0;
    for (int i = 0; i < u->n_slots; i++)
        if (u->slots[i].busy)
            u->window[n++] = &u->slots[i].r;
    if (n == 0)
        return 0;
    struct s3l_error ignored = {0};
    (void)s3l__http_drive(u->c, u->window, n, allowed, &ignored);
    return s3l__oom(e, collect(u, e), "sending a part");
}

/* Sends slot s as the next part (creating the multipart upload first if needed). */
static int submit(struct s3l_s3_upload *u, struct slot *s, struct s3l_error *e)
{
    int rc = 0;
    if (!u->upload_id) {
        struct s3l_s3_put_options o = put_opts(u, false);
        rc = s3l_s3_create_multipart(u->c, u->bucket, u->key, &o, &u->upload_id, e);
    }
    if (rc == 0 && u->n_parts >= 10000)
        rc = s3l_error_set(e, S3L_ETOO_LARGE, "upload of %s: more than 10,000 parts of %zu "
                           "bytes; raise the part size", u->key, u->part_size);
    if (rc == 0)
        rc = grow_parts(u, u->n_parts + 1, e);
    const char *digest = s->hashed ? "Content-MD5" : NULL;
    if (rc == 0 && !digest && u->pair_md5) { /* hashed alone: the last part, or no partner */
        if (s3l__digest_begin(&s->dg, S3L_S3_INTEGRITY_MD5) != 0 ||
            s3l__digest_update(&s->dg, s->buf, s->len) != 0)
            rc = S3L_EINTERNAL;
    }
    if (rc == 0 && !digest && s3l__digest_end(&s->dg, &digest, s->b64) != 0)
        rc = S3L_EINTERNAL;
    if (rc == S3L_EINTERNAL)
        rc = s3l_error_set(e, rc, "upload of %s: libcrypto failed", u->key);
    if (rc == 0) {
        s->number = (int)++u->n_parts;
        rc = s3l__part_request(u->c, &s->r, u->bucket, u->key, u->upload_id, s->buf, s->len,
                               s->numstr, s->number, s->b64, digest);
    }
    if (rc != 0)
        return rc;
    s->busy = true;
    /* keep one slot free to fill: wait only while every slot travels */
    return pump(u, (size_t)u->n_slots - 1, e);
}

/* Sends the held full part and slot `other` (full too), hashed together (md5x2.c). */
static int submit_pair(struct s3l_s3_upload *u, int other, struct s3l_error *e)
{
    struct slot *a = &u->slots[u->held], *b = &u->slots[other];
    uint8_t da[16], db[16];
    s3l__md5x2(a->buf, b->buf, u->part_size, da, db);
    s3l__base64(da, 16, a->b64);
    s3l__base64(db, 16, b->b64);
    a->hashed = b->hashed = true;
    u->held = -1;
    int rc = submit(u, a, e); /* a first: part numbers follow the bytes */
    return rc ? rc : submit(u, b, e);
}

/* Makes a free slot the one being filled, with a buffer from the client's pool; when all the
 * buffers the client allows are taken, waits for one of this upload's parts to come back. */
static int next_slot(struct s3l_s3_upload *u, struct s3l_error *e)
{
    for (;;) {
        int travelling = 0, free_slot = -1;
        for (int i = 0; i < u->n_slots; i++) {
            travelling += u->slots[i].busy;
            if (!u->slots[i].busy && i != u->held && free_slot < 0)
                free_slot = i;
        }
        if (free_slot >= 0) {
            struct slot *s = &u->slots[free_slot];
            /* with no part travelling none comes back: the cap may not stop this upload */
            if (s3l__buf_take(u->c, u->part_size, travelling, &s->buf) != 0)
                return s3l_error_set(e, S3L_ENOMEM, "upload of %s: no memory for a part",
                                     u->key);
            if (s->buf) {
                s->hashed = false;
                if (!u->pair_md5 && s3l__digest_begin(&s->dg, u->c->integrity) != 0)
                    return s3l_error_set(e, S3L_ENOMEM, "upload of %s: libcrypto failed",
                                         u->key);
                s->len = 0;
                u->cur = free_slot;
                return 0;
            }
        }
        /* every slot travels, or the client's cap is reached: wait for one of ours */
        int rc = pump(u, travelling > 0 ? (size_t)travelling - 1 : 0, e);
        if (rc != 0)
            return rc;
    }
}

/* The room of the part being filled, sending the previous one when it is full. */
static int reserve(struct s3l_s3_upload *u, struct s3l_error *e)
{
    /* a full part waits for more bytes: while it might be the only one, it may be a PUT */
    if (u->cur >= 0 && u->slots[u->cur].len == u->part_size) {
        int full = u->cur, rc = 0;
        u->cur = -1;
        if (u->pair_md5 && u->held < 0)
            u->held = full; /* hashed with the next full part */
        else
            rc = u->pair_md5 ? submit_pair(u, full, e) : submit(u, &u->slots[full], e);
        if (rc != 0)
            return rc;
    }
    return u->cur < 0 ? next_slot(u, e) : 0;
}

static int commit(struct s3l_s3_upload *u, size_t n, struct s3l_error *e)
{
    struct slot *s = &u->slots[u->cur];
    /* hashed now, while the bytes just written are in the cache (MD5s later, by pairs) */
    if (n > 0 && !u->pair_md5 && s3l__digest_update(&s->dg, s->buf + s->len, n) != 0)
        return s3l_error_set(e, S3L_EINTERNAL, "upload of %s: libcrypto failed", u->key);
    s->len += n;
    u->size += n;
    return 0;
}

static int poisoned(const struct s3l_s3_upload *u, struct s3l_error *err)
{
    return s3l_error_set(err, u->rc, "upload of %s failed earlier: %s", u->key,
                         u->first.message);
}

int s3l_s3_upload_reserve(struct s3l_s3_upload *u, void **buf, size_t *room,
                          struct s3l_error *err)
{
    *buf = NULL;
    *room = 0;
    if (u->rc != 0)
        return poisoned(u, err);
    struct s3l_error e = {0};
    int rc = pump(u, SIZE_MAX, &e); /* let the parts in flight move on */
    if (rc == 0)
        rc = reserve(u, &e);
    if (rc != 0)
        return fail(u, rc, &e, err);
    struct slot *s = &u->slots[u->cur];
    *buf = s->buf + s->len;
    *room = u->part_size - s->len;
    return 0;
}

int s3l_s3_upload_commit(struct s3l_s3_upload *u, size_t n, struct s3l_error *err)
{
    if (u->rc != 0)
        return poisoned(u, err);
    struct s3l_error e = {0};
    int rc = 0;
    if (u->cur < 0 || n > u->part_size - u->slots[u->cur].len)
        rc = s3l_error_set(&e, S3L_EINVALID_ARGUMENT, "upload of %s: commit of %zu bytes "
                           "without a reserve of that much room", u->key, n);
    if (rc == 0)
        rc = commit(u, n, &e);
    return rc ? fail(u, rc, &e, err) : 0;
}

int s3l_s3_upload_write(struct s3l_s3_upload *u, const void *data, size_t len,
                        struct s3l_error *err)
{
    if (u->rc != 0)
        return poisoned(u, err);
    struct s3l_error e = {0};
    int rc = pump(u, SIZE_MAX, &e); /* let the parts in flight move on */
    const uint8_t *p = data;
    while (rc == 0 && len > 0 && (rc = reserve(u, &e)) == 0) {
        struct slot *s = &u->slots[u->cur];
        size_t n = S3L_MIN(len, u->part_size - s->len);
        memcpy(s->buf + s->len, p, n);
        rc = commit(u, n, &e);
        p += n;
        len -= n;
    }
    return rc ? fail(u, rc, &e, err) : 0;
}

void s3l_s3_upload_progress(struct s3l_s3_upload *u)
{
    if (!u || u->rc != 0)
        return;
    struct s3l_error e = {0};
    int rc = 0;
    if (u->held >= 0) {
        /* A full part waiting for its Content-MD5 partner (md5x2.c): the writer went quiet, so
         * the partner may be far off; it goes alone now (its MD5 computed alone by submit).
         * submit does not wait: the held slot and the one being filled were not travelling. */
        struct slot *s = &u->slots[u->held];
        u->held = -1;
        rc = submit(u, s, &e);
    } else {
        bool travelling = false;
        for (int i = 0; i < u->n_slots && !travelling; i++)
            travelling = u->slots[i].busy;
        if (!travelling)
            return; /* nothing of ours moves: no round of the driver at all (cheap per row) */
        rc = pump(u, SIZE_MAX, &e); /* one round without waiting, or none if another drives */
    }
    if (rc != 0)
        (void)fail(u, rc, &e, NULL); /* sticky: the next write, stage or publish returns it */
}

/* HEAD after an unknown or empty-ETag Complete: ours when it has our token and our size. */
static int settle(struct s3l_s3_client *c, const char *bucket, const char *key, const char *token,
                  uint64_t size, struct s3l_s3_object *o, struct s3l_error *err)
{
    struct s3l_error e = {0};
    int rc = s3l_s3_head_object(c, bucket, key, o, &e);
    if (rc != 0) {
        *err = e;
        return rc;
    }
    if (strcmp(o->upload_meta, token) != 0 || o->size != size)
        return s3l_error_set(err, S3L_ECONFLICT, "upload of %s: the object is not ours (another "
                             "writer's, or the Complete did not happen)", key);
    return 0;
}

/* CompleteMultipartUpload, its unknown outcomes settled by a HEAD (token and size). */
static int complete_as(struct s3l_s3_client *c, const char *bucket, const char *key,
                       const char *upload_id, const struct s3l_s3_part *parts, size_t n,
                       bool if_none_match, const char *if_match, const char *token,
                       uint64_t size, struct s3l_s3_object *out, struct s3l_error *err)
{
    struct s3l_s3_object o = {0};
    struct s3l_error e = {0};
    int rc = s3l__complete(c, bucket, key, upload_id, parts, n, if_none_match, if_match, &o, &e);
    if (rc == 0 && o.etag[0] == 0)
        rc = settle(c, bucket, key, token, size, &o, &e); /* RGW answers <ETag></ETag> */
    else if (rc == S3L_ETRANSIENT || rc == S3L_ETHROTTLED || rc == S3L_ENOT_FOUND) {
        struct s3l_error e2 = {0};
        if (settle(c, bucket, key, token, size, &o, &e2) == 0)
            rc = 0; /* the lost answer was a success */
    }
    if (rc != 0) {
        *err = e;
        return rc;
    }
    o.size = size;
    if (out)
        *out = o;
    return 0;
}

static int complete(struct s3l_s3_upload *u, struct s3l_s3_object *out, struct s3l_error *err)
{
    return complete_as(u->c, u->bucket, u->key, u->upload_id, u->parts, u->n_parts,
                       u->if_none_match, u->if_match, u->token, u->size, out, err);
}

int s3l_s3_complete_staged(struct s3l_s3_client *c, const char *bucket, const char *key,
                           const char *upload_id, const char *token, uint64_t size,
                           const struct s3l_s3_part *parts, size_t n, struct s3l_s3_object *out,
                           struct s3l_error *err)
{
    struct s3l_error e = {0};
    int rc = complete_as(c, bucket, key, upload_id, parts, n, false, NULL, token, size, out, &e);
    if (rc == 0)
        return 0;
    /* Gone, and the object is not this upload's: settled as not done, naming the key. */
    struct s3l_s3_object o = {0};
    struct s3l_error eh = {0};
    int hrc = rc == S3L_ENOT_FOUND ? s3l_s3_head_object(c, bucket, key, &o, &eh) : rc;
    if (hrc == S3L_ENOT_FOUND)
        return s3l_error_set(err, S3L_ENOT_FOUND,
                             "complete of %s: the upload %s is gone (aborted, or never made) and "
                             "no object is at the key", key, upload_id);
    if (hrc == 0)
        return s3l_error_set(err, S3L_ECONFLICT,
                             "complete of %s: the upload %s is gone and the object at the key is "
                             "not this upload's (token or size differ: %llu bytes, %llu staged)",
                             key, upload_id, (unsigned long long)o.size,
                             (unsigned long long)size);
    return s3l_error_set(err, rc, "complete of %s: %s", key, e.message);
}

/* Sends what is left (the held part, the one being filled) and waits for every part. */
static int flush_parts(struct s3l_s3_upload *u, struct s3l_error *e)
{
    int rc = 0;
    struct slot *last = u->cur >= 0 ? &u->slots[u->cur] : NULL;
    if (u->held >= 0 && last && last->len == u->part_size)
        rc = submit_pair(u, u->cur, e);
    else {
        if (u->held >= 0) {
            rc = submit(u, &u->slots[u->held], e);
            u->held = -1;
        }
        if (rc == 0 && last && last->len > 0)
            rc = submit(u, last, e);
    }
    u->cur = -1;
    while (rc == 0 && pump(u, 0, e) == 0) {
        bool busy = false;
        for (int i = 0; i < u->n_slots; i++)
            busy = busy || u->slots[i].busy;
        if (!busy)
            break;
    }
    return rc ? rc : e->code;
}

int s3l_s3_upload_stage(struct s3l_s3_upload *u, struct s3l_s3_staged *out,
                        struct s3l_error *err)
{
    memset(out, 0, sizeof(*out));
    int rc = u->rc;
    if (rc != 0)
        s3l_error_set(err, rc, "upload of %s failed earlier: %s", u->key, u->first.message);
    else if (u->size == 0)
        rc = s3l_error_set(err, S3L_EINVALID_ARGUMENT, "stage of %s: no bytes (S3 needs a part)",
                           u->key);
    struct s3l_error e = {0};
    if (rc == 0 && (rc = flush_parts(u, &e)) != 0 && err && err->code == 0)
        *err = e;
    if (rc == 0 && !(out->parts = s3l_calloc(u->n_parts, sizeof(*out->parts))))
        rc = s3l_error_set(err, S3L_ENOMEM, "stage of %s: out of memory", u->key);
    if (rc != 0) {
        s3l_s3_upload_abort(u);
        return rc;
    }
    memcpy(out->parts, u->parts, u->n_parts * sizeof(*out->parts));
    out->n_parts = u->n_parts;
    out->size = u->size;
    memcpy(out->token, u->token, sizeof(out->token));
    out->upload_id = u->upload_id;
    u->upload_id = NULL; /* left pending: completed or aborted by its id */
    upload_free(u);
    return 0;
}

int s3l_s3_upload_publish(struct s3l_s3_upload *u, struct s3l_s3_object *out,
                          struct s3l_error *err)
{
    int rc = u->rc;
    if (rc != 0) {
        s3l_error_set(err, rc, "upload of %s failed earlier: %s", u->key, u->first.message);
        s3l_s3_upload_abort(u);
        return rc;
    }
    struct slot *last = u->cur >= 0 ? &u->slots[u->cur] : NULL;
    if (!u->upload_id && u->held < 0) { /* at most one part's worth: one PutObject */
        struct s3l_s3_put_options o = put_opts(u, true);
        const char *digest = NULL; /* NULL: s3l__put_object computes it */
        if (last && !u->pair_md5 && s3l__digest_end(&last->dg, &digest, last->b64) != 0)
            rc = s3l_error_set(err, S3L_EINTERNAL, "upload of %s: libcrypto failed", u->key);
        if (rc == 0)
            rc = s3l__put_object(u->c, u->bucket, u->key, last && last->len ? last->buf : NULL,
                                 u->size, &o, digest, last ? last->b64 : NULL, out, err);
        upload_free(u);
        return rc;
    }
    struct s3l_error e = {0};
    rc = flush_parts(u, &e);
    if (rc == 0)
        rc = complete(u, out, &e);
    if (rc != 0) {
        if (err && err->code == 0)
            *err = e;
        s3l_s3_upload_abort(u);
        return rc;
    }
    upload_free(u);
    return 0;
}

void s3l_s3_upload_abort(struct s3l_s3_upload *u)
{
    if (!u)
        return;
    cancel_all(u);
    if (u->upload_id) {
        struct s3l_error e = {0};
        (void)s3l_s3_abort_multipart(u->c, u->bucket, u->key, u->upload_id, &e);
    }
    upload_free(u);
}

int s3l__copy_parts(struct s3l_s3_client *c, const char *src_bucket, const char *src_key,
                    const char *bucket, const char *key, uint64_t size, uint64_t part_size,
                    const struct s3l_s3_put_options *opts, struct s3l_s3_object *out,
                    struct s3l_error *err)
{
    struct s3l_s3_upload *u = NULL;
    int rc = s3l_s3_upload_begin(c, bucket, key, opts, 0, &u, err);
    if (rc != 0)
        return rc;
    size_t n = (size_t)((size + part_size - 1) / part_size);
    struct s3l_s3_put_options o = put_opts(u, false);
    rc = n > 10000 ? s3l_error_set(err, S3L_ETOO_LARGE, "copy of %s: over 10,000 parts", key)
                   : s3l_s3_create_multipart(c, bucket, key, &o, &u->upload_id, err);
    if (rc == 0 && !(u->parts = s3l_calloc(n, sizeof(*u->parts))))
        rc = s3l_error_set(err, S3L_ENOMEM, "copy of %s: out of memory", key);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        uint64_t first = i * part_size, last = S3L_MIN(size, first + part_size) - 1;
        u->parts[i].number = (int)i + 1;
        rc = s3l_s3_upload_part_copy(c, bucket, key, u->upload_id, src_bucket, src_key, first,
                                     last, &u->parts[i], err);
        u->n_parts += rc == 0;
    }
    u->size = size;
    if (rc == 0)
        rc = complete(u, out, err);
    if (rc != 0)
        s3l_s3_upload_abort(u);
    else
        upload_free(u);
    return rc;
}
