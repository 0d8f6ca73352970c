/*
 * The s3 store backend: the storage vtable of include/s3l/sys/store.h over the S3 client
 * (include/s3l/s3.h), so that the destination runs on s3://BUCKET/PREFIX exactly as on file://.
 * Keys are relative to PREFIX. Uploads stream as multipart parts (8 MiB, 4 in flight, bounded
 * memory) or become one PutObject when small; publish is CompleteMultipartUpload settled by HEAD
 * (src/lib/s3/upload.c); abort is AbortMultipartUpload; put-if-absent is If-None-Match: *, a
 * conditional put is If-Match with the ETag unquoted (as RGW wants it); copy is CopyObject, or
 * UploadPartCopy above a threshold; list follows continuation tokens.
 * The store may be used from several threads at once: the client is thread-safe, so their calls
 * (and the parts of their uploads) go out together, within the client's in-flight limit and its
 * cap on part buffers (include/s3l/s3.h), never one lane after the other.
 */
#include <stdio.h>
#include <stdlib.h>


#include "os/os.h"
#include "s3l/s3.h"
#include "store/store.h"
#include "util/util.h"

struct s3_store {
    struct s3l_store base;
    struct s3l_s3_client *c;
    char *bucket;
    char *prefix; /* "" or "PREFIX/" */
    size_t part_size;
    uint64_t copy_threshold, copy_part_size;
    char *sse, *sse_kms_key_id, *storage_class; /* store options, copied at open */
    struct s3l__ahead ahead; /* answers read ahead (s3_ahead.c) */
    bool ahead_ok;           /* ahead was initialised */
};

struct s3_upload {
    struct s3l_upload base;
    struct s3l_s3_upload *u;
};

static struct s3_store *S(struct s3l_store *s)
{
    return (struct s3_store *)s;
}

/* PREFIX/key into a new string (s3l_free). */
static char *full_key(const struct s3_store *s, const char *key)
{
    size_t a = strlen(s->prefix), b = strlen(key);
    char *k = s3l_malloc(a + b + 1);
    if (k) {
        memcpy(k, s->prefix, a);
        memcpy(k + a, key, b + 1);
    }
    return k;
}

static void to_info(const struct s3l_s3_object *o, struct s3l_object_info *info)
{
    if (!info)
        return;
    info->key = NULL;
    info->size = o->size;
    info->mtime_ns = o->mtime_ns;
    snprintf(info->etag, sizeof(info->etag), "%s", o->etag);
}

static int nomem(struct s3l_error *err)
{
    return s3l_error_set(err, S3L_ENOMEM, "out of memory");
}

/* Encryption on every object; the storage class on those outside "_openetl/" (the destination's
 * metadata root: staged files, markers, checkpoints and schemas stay STANDARD), key relative. */
static void sse_opts(const struct s3_store *s, const char *key, struct s3l_s3_put_options *po)
{
    po->sse = s->sse;
    po->sse_kms_key_id = s->sse_kms_key_id;
    if (strncmp(key, "_openetl/", 9) != 0)
        po->storage_class = s->storage_class;
}

/* Copies the store options' encryption and storage class into s, checked. */
static int sse_init(struct s3_store *s, const struct s3l_s3_store_options *so,
                    struct s3l_error *err)
{
    if (!so)
        return 0;
    int rc = s3l_s3_sse_check(so->sse, so->sse_kms_key_id, so->storage_class, err);
    if (rc == 0 && ((so->sse && !(s->sse = s3l_strdup(so->sse))) ||
                    (so->sse_kms_key_id && !(s->sse_kms_key_id = s3l_strdup(so->sse_kms_key_id))) ||
                    (so->storage_class && !(s->storage_class = s3l_strdup(so->storage_class)))))
        rc = nomem(err);
    return rc;
}

static int s3_upload_begin(struct s3l_store *st, const char *key,
                           const struct s3l_put_options *opts, struct s3l_upload **out,
                           struct s3l_error *err)
{
    struct s3_store *s = S(st);
    s3l__ahead_forget(&s->ahead, key);
    struct s3_upload *up = s3l_calloc(1, sizeof(*up));
    char *k = full_key(s, key);
    up = k ? up : (s3l_free(up), NULL);
    if (!up || !(up->base.key = s3l_strdup(key))) {
        s3l_free(k);
        s3l_free(up);
        return nomem(err);
    }
    struct s3l_s3_put_options po = {0};
    sse_opts(s, key, &po);
    size_t part = s->part_size;
    if (opts) {
        po.if_none_match = opts->if_none_match;
        po.if_match = opts->if_match;
        po.content_type = opts->content_type;
    }
    int rc = 0;
    if (opts && opts->part_size) {
        if (opts->part_size > SIZE_MAX || opts->part_size < (5u << 20))
            rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                               "upload of %s: part size %llu is below S3's 5 MiB minimum", key,
                               (unsigned long long)opts->part_size);
        else
            part = (size_t)opts->part_size;
    }
    if (rc == 0 && opts && opts->size_hint) {
        /* 10,000 parts must hold the object: a data file of up to fileSize bytes. */
        uint64_t p = s3l_s3_part_size(opts->size_hint, part);
        p = p && p < part ? part : p;
        if (p == 0 || p > SIZE_MAX)
            rc = s3l_error_set(err, S3L_ETOO_LARGE,
                               "upload of %s: an object of up to %llu bytes exceeds S3's limit "
                               "of 5 TiB per object", key, (unsigned long long)opts->size_hint);
        else
            part = (size_t)p;
    }
    if (rc == 0)
        rc = s3l_s3_upload_begin(s->c, s->bucket, k, &po, part, &up->u, err);
    s3l_free(k);
    if (rc != 0) {
        s3l_free(up->base.key);
        s3l_free(up);
        return rc;
    }
    up->base.store = st;
    *out = &up->base;
    return 0;
}

static int s3_upload_write(struct s3l_upload *ub, const void *data, size_t len,
                           struct s3l_error *err)
{
    struct s3_upload *up = (struct s3_upload *)ub;
    int rc = s3l_s3_upload_write(up->u, data, len, err);
    return rc;
}

static void s3_upload_progress(struct s3l_upload *ub)
{
    s3l_s3_upload_progress(((struct s3_upload *)ub)->u);
}

static void upload_free(struct s3_upload *up)
{
    s3l_free(up->base.key);
    s3l_free(up);
}

static int s3_upload_publish(struct s3l_upload *ub, struct s3l_object_info *info,
                             struct s3l_error *err)
{
    struct s3_upload *up = (struct s3_upload *)ub;
    struct s3l_s3_object o = {0};
    s3l__ahead_forget(&S(ub->store)->ahead, ub->key);
    int rc = s3l_s3_upload_publish(up->u, &o, err);
    if (rc == 0) {
        if (!o.mtime_ns)
            o.mtime_ns = s3l__os_now_ns();
        to_info(&o, info);
    }
    upload_free(up);
    return rc;
}

static void s3_upload_abort(struct s3l_upload *ub)
{
    struct s3_upload *up = (struct s3_upload *)ub;
    s3l_s3_upload_abort(up->u);
    upload_free(up);
}

/* Staged uploads (s3l/sys/store.h): a pending multipart upload, completed by its id. */
static int s3_upload_stage(struct s3l_upload *ub, struct s3l_staged *out, struct s3l_error *err)
{
    struct s3_upload *up = (struct s3_upload *)ub;
    struct s3l_s3_staged st;
    int rc = s3l_s3_upload_stage(up->u, &st, err);
    upload_free(up);
    if (rc != 0)
        return rc;
    out->upload_id = st.upload_id;
    out->token = s3l_strdup(st.token);
    out->parts = s3l_calloc(st.n_parts, sizeof(*out->parts));
    out->size = st.size;
    for (size_t i = 0; out->parts && i < st.n_parts; i++) {
        out->parts[i].number = (uint32_t)st.parts[i].number;
        out->parts[i].size = st.parts[i].size;
        snprintf(out->parts[i].etag, sizeof(out->parts[i].etag), "\"%.128s\"",
                 st.parts[i].etag);
    }
    out->n_parts = out->parts ? (uint32_t)st.n_parts : 0;
    s3l_free(st.parts);
    if (!out->token || !out->parts) {
        s3l_staged_cleanup(out);
        return nomem(err); /* the upload stays pending: a lifecycle rule or gc removes it */
    }
    return 0;
}

static int s3_staged_complete(struct s3l_store *st, const char *key, const struct s3l_staged *sg,
                              struct s3l_object_info *info, struct s3l_error *err)
{
    struct s3_store *s = S(st);
    s3l__ahead_forget(&s->ahead, key);
    char *k = full_key(s, key);
    struct s3l_s3_part *parts = s3l_calloc(sg->n_parts, sizeof(*parts));
    int rc = k && parts ? 0 : nomem(err);
    for (uint32_t i = 0; rc == 0 && i < sg->n_parts; i++) {
        const char *e = sg->parts[i].etag;
        size_t n = strlen(e);
        if (n >= 2 && e[0] == '"' && e[n - 1] == '"')
            e++, n -= 2;
        parts[i].number = (int)sg->parts[i].number;
        parts[i].size = sg->parts[i].size;
        snprintf(parts[i].etag, sizeof(parts[i].etag), "%.*s", (int)n, e);
    }
    struct s3l_s3_object o = {0};
    if (rc == 0)
        rc = s3l_s3_complete_staged(s->c, s->bucket, k, sg->upload_id, sg->token, sg->size,
                                    parts, sg->n_parts, &o, err);
    if (rc == 0)
        to_info(&o, info);
    s3l_free(parts);
    s3l_free(k);
    return rc;
}

static int s3_staged_abort(struct s3l_store *st, const char *key, const char *upload_id,
                           struct s3l_error *err)
{
    struct s3_store *s = S(st);
    char *k = full_key(s, key);
    if (!k)
        return nomem(err);
    struct s3l_error e = {0};
    int rc = s3l_s3_abort_multipart(s->c, s->bucket, k, upload_id, &e);
    s3l_free(k);
    if (rc == S3L_ENOT_FOUND)
        return 0; /* gone already: aborted or completed */
    if (rc != 0 && err)
        *err = e;
    return rc;
}

static int s3_put(struct s3l_store *st, const char *key, const void *data, size_t len,
                  const struct s3l_put_options *opts, struct s3l_object_info *info,
                  struct s3l_error *err)
{
    struct s3l_upload *u = NULL;
    int rc = s3_upload_begin(st, key, opts, &u, err);
    if (rc == 0 && len > 0)
        rc = s3_upload_write(u, data, len, err);
    if (rc == 0)
        return s3_upload_publish(u, info, err);
    if (u)
        s3_upload_abort(u);
    return rc;
}

static int s3_get(struct s3l_store *st, const char *key, uint64_t offset, uint64_t len,
                  size_t max, uint8_t **data, size_t *data_len, struct s3l_object_info *info,
                  struct s3l_error *err)
{
    struct s3_store *s = S(st);
    int rc = -1;
    if (s3l__ahead_get(&s->ahead, key, offset, len, max, data, data_len, info, err, &rc))
        return rc;
    char *k = full_key(s, key);
    if (!k)
        return nomem(err);
    struct s3l_s3_object o = {0};
    struct s3l_error e = {0};
    *data = NULL;
    *data_len = 0;
    if (len > 0) {
        rc = s3l_s3_get_object(s->c, s->bucket, k, offset, len == UINT64_MAX ? 0 : len, max,
                               data, data_len, &o, &e);
        /* a range that starts past the end is 416 on S3; the vtable reads it as no bytes */
        if (rc == S3L_EINVALID_ARGUMENT && e.http_status == 416)
            rc = -1;
    }
    if (rc == -1) { /* nothing to read: only whether it exists, and its version */
        s3l_error_clear(&e);
        rc = s3l_s3_head_object(s->c, s->bucket, k, &o, &e);
        if (rc == 0 && !(*data = s3l_calloc(1, 1)))
            rc = s3l_error_set(&e, S3L_ENOMEM, "out of memory");
    }
    s3l_free(k);
    if (rc == 0)
        to_info(&o, info);
    else if (err && err->code == 0)
        *err = e;
    return rc;
}

static int s3_stat(struct s3l_store *st, const char *key, struct s3l_object_info *info,
                   struct s3l_error *err)
{
    struct s3_store *s = S(st);
    int rc = 0;
    if (s3l__ahead_stat(&s->ahead, key, info, err, &rc))
        return rc;
    char *k = full_key(s, key);
    if (!k)
        return nomem(err);
    struct s3l_s3_object o = {0};
    rc = s3l_s3_head_object(s->c, s->bucket, k, &o, err);
    s3l_free(k);
    if (rc == 0)
        to_info(&o, info);
    return rc;
}

/* s3_list's callback over s3l_s3_list_all: each object as the vtable's info, its key relative to
 * the store's root. */
struct list_ctx {
    s3l_store_list_cb cb;
    void *ctx;
    size_t strip; /* strlen of the store's prefix */
};

static int list_one(void *ctx, const struct s3l_s3_object *o)
{
    struct list_ctx *l = ctx;
    struct s3l_object_info info;
    to_info(o, &info);
    info.key = o->key + l->strip;
    return l->cb(l->ctx, &info);
}

/* Page by page (s3l_s3_list_all); the callbacks may call back into this store (the destination
 * reads each marker it lists). */
static int s3_list(struct s3l_store *st, const char *prefix, s3l_store_list_cb cb, void *ctx,
                   struct s3l_error *err)
{
    struct s3_store *s = S(st);
    int rc = 0;
    if (s3l__ahead_list(&s->ahead, prefix ? prefix : "", cb, ctx, err, &rc))
        return rc;
    char *k = full_key(s, prefix ? prefix : "");
    if (!k)
        return nomem(err);
    struct list_ctx l = {cb, ctx, strlen(s->prefix)};
    rc = s3l_s3_list_all(s->c, s->bucket, k, list_one, &l, err);
    s3l_free(k);
    return rc;
}

static int s3_remove(struct s3l_store *st, const char *key, struct s3l_error *err)
{
    struct s3_store *s = S(st);
    s3l__ahead_forget(&s->ahead, key);
    char *k = full_key(s, key);
    if (!k)
        return nomem(err);
    int rc = s3l_s3_delete_object(s->c, s->bucket, k, err);
    s3l_free(k);
    return rc;
}

static int s3_copy(struct s3l_store *st, const char *src_key, const char *dst_key,
                   struct s3l_error *err)
{
    struct s3_store *s = S(st);
    s3l__ahead_forget(&s->ahead, dst_key);
    char *a = full_key(s, src_key), *b = full_key(s, dst_key);
    int rc = a && b ? 0 : nomem(err);
    if (rc == 0) {
        struct s3l_s3_put_options po = {0};
        sse_opts(s, dst_key, &po); /* S3 would give the copy the bucket's defaults */
        rc = s3l_s3_copy_with(s->c, s->bucket, a, s->bucket, b, s->copy_threshold,
                              s->copy_part_size, &po, NULL, err);
    }
    s3l_free(a);
    s3l_free(b);
    return rc;
}

/* The copy of a staged file whose size the checkpoint holds: no HeadObject to learn it. */
static int s3_copy_sized(struct s3l_store *st, const char *src_key, uint64_t size,
                         const char *dst_key, struct s3l_error *err)
{
    struct s3_store *s = S(st);
    s3l__ahead_forget(&s->ahead, dst_key);
    char *a = full_key(s, src_key), *b = full_key(s, dst_key);
    int rc = a && b ? 0 : nomem(err);
    if (rc == 0) {
        struct s3l_s3_put_options po = {0};
        sse_opts(s, dst_key, &po); /* S3 would give the copy the bucket's defaults */
        rc = s3l_s3_copy_sized_with(s->c, s->bucket, a, size, s->bucket, b, s->copy_threshold,
                                    s->copy_part_size, &po, NULL, err);
    }
    s3l_free(a);
    s3l_free(b);
    return rc;
}

/* The CopyObjects of a batch at once; a source above the copy threshold (UploadPartCopy) alone. */
static int s3_copy_many(struct s3l_store *st, const struct s3l_copy_item *items, size_t n,
                        struct s3l_error *err)
{
    struct s3_store *s = S(st);
    uint64_t threshold = s->copy_threshold ? s->copy_threshold : (uint64_t)5 << 30;
    char **src = s3l_calloc(n, sizeof(*src)), **dst = s3l_calloc(n, sizeof(*dst));
    int rc = src && dst ? 0 : nomem(err);
    size_t m = 0; /* the small ones, gathered in src/dst[0..m) */
    for (size_t i = 0; rc == 0 && i < n; i++) {
        /* The batch sends no encryption or storage class headers (and knows no 501 fallback):
         * with either set, each copy goes its own way. */
        if (items[i].size > threshold || s->sse || s->storage_class) {
            rc = s3_copy_sized(st, items[i].src, items[i].size, items[i].dst, err);
            continue;
        }
        s3l__ahead_forget(&s->ahead, items[i].dst);
        src[m] = full_key(s, items[i].src);
        dst[m] = full_key(s, items[i].dst);
        rc = src[m] && dst[m] ? 0 : nomem(err);
        m++;
    }
    if (rc == 0)
        rc = s3l_s3_copy_objects(s->c, s->bucket, (const char *const *)src,
                                 (const char *const *)dst, m, err);
    for (size_t i = 0; i < m; i++) {
        s3l_free(src[i]);
        s3l_free(dst[i]);
    }
    s3l_free(src);
    s3l_free(dst);
    return rc;
}

/* DeleteObjects, 1,000 keys a request; one by one when a key holds a byte XML 1.0 cannot carry
 * (the keys travel in an XML body). */
static int s3_remove_many(struct s3l_store *st, const char *const *keys, size_t n,
                          struct s3l_error *err)
{
    struct s3_store *s = S(st);
    char **full = s3l_calloc(n, sizeof(*full));
    int rc = full ? 0 : nomem(err);
    bool xml_ok = true;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        s3l__ahead_forget(&s->ahead, keys[i]);
        rc = (full[i] = full_key(s, keys[i])) ? 0 : nomem(err);
        for (const unsigned char *p = (const unsigned char *)keys[i]; rc == 0 && *p; p++)
            xml_ok = xml_ok && *p >= 0x20 && *p != 0x7f;
    }
    if (rc == 0 && xml_ok)
        rc = s3l_s3_delete_objects(s->c, s->bucket, (const char *const *)full, n, err);
    for (size_t i = 0; rc == 0 && !xml_ok && i < n; i++)
        rc = s3l_s3_delete_object(s->c, s->bucket, full[i], err);
    for (size_t i = 0; full && i < n; i++)
        s3l_free(full[i]);
    s3l_free(full);
    return rc;
}

/* The PutObjects of a batch at once (the markers of an epoch's streams: small documents); an item
 * over the part size goes its own way (s3_put: a multipart upload). */
static int s3_put_many(struct s3l_store *st, struct s3l_put_item *items, size_t n)
{
    struct s3_store *s = S(st);
    struct s3l_s3_put_item *q = s3l_calloc(n, sizeof(*q));
    struct s3l_s3_put_options *po = s3l_calloc(n, sizeof(*po));
    size_t *at = s3l_calloc(n, sizeof(*at)); /* q[j] is items[at[j]] */
    size_t m = 0;
    size_t one = s->part_size ? s->part_size : (size_t)5 << 20; /* surely one PutObject */
    for (size_t i = 0; i < n; i++) {
        struct s3l_put_item *it = &items[i];
        s3l__ahead_forget(&s->ahead, it->key);
        if (!q || !po || !at || it->len > one) {
            it->rc = s3_put(st, it->key, it->data, it->len, it->opts, NULL, &it->err);
            continue;
        }
        sse_opts(s, it->key, &po[m]);
        if (it->opts) {
            po[m].if_none_match = it->opts->if_none_match;
            po[m].if_match = it->opts->if_match;
            po[m].content_type = it->opts->content_type;
        }
        q[m] = (struct s3l_s3_put_item){.key = full_key(s, it->key), .data = it->data,
                                        .len = it->len, .opts = &po[m]};
        if (!q[m].key) {
            it->rc = nomem(&it->err);
            continue;
        }
        at[m++] = i;
    }
    if (m)
        s3l_s3_put_objects(s->c, s->bucket, q, m);
    for (size_t j = 0; j < m; j++) {
        items[at[j]].rc = q[j].rc;
        if (q[j].rc)
            items[at[j]].err = q[j].err;
        s3l_free((char *)q[j].key);
    }
    s3l_free(at);
    s3l_free(po);
    s3l_free(q);
    for (size_t i = 0; i < n; i++)
        if (items[i].rc)
            return items[i].rc;
    return 0;
}

/* An answer read ahead into an entry kept for the calls that follow (relative keys). */
static void keep_read(struct s3_store *s, const struct s3l_read_item *want,
                      struct s3l_s3_read_item *got)
{
    if (got->kind == S3L_S3_READ_LIST && got->rc == 0 && got->page.truncated)
        return; /* more than a page: the list call walks it itself */
    struct s3l__ahead_entry *e = s3l__ahead_entry_new(want->kind, want->key, want->max);
    if (!e)
        return;
    struct s3l_object_info info;
    to_info(&got->object, &info);
    s3l__ahead_entry_set(e, got->rc, &got->err, got->data, got->len, &info);
    got->data = NULL;
    size_t strip = strlen(s->prefix);
    int rc = 0;
    for (size_t i = 0; rc == 0 && got->rc == 0 && i < got->page.n_objects; i++) {
        to_info(&got->page.objects[i], &info);
        info.key = got->page.objects[i].key + strip;
        rc = s3l__ahead_entry_add(e, &info);
    }
    if (rc == 0)
        s3l__ahead_keep(&s->ahead, e);
    else
        s3l__ahead_entry_free(e); /* out of memory: the list call lists for itself */
}

/* The reads of a start at once (s3l_s3_read_objects), kept in s->ahead. */
static void s3_read_ahead(struct s3l_store *st, const struct s3l_read_item *all, size_t n_all)
{
    struct s3_store *s = S(st);
    /* What is kept already (read ahead by an earlier batch) is not read again, unless fresh. */
    struct s3l_read_item *items = s3l_calloc(n_all ? n_all : 1, sizeof(*items));
    size_t n = 0;
    for (size_t i = 0; items && i < n_all; i++) {
        items[n] = all[i];
        n += s3l__ahead_wanted(&s->ahead, &items[n]);
    }
    struct s3l_s3_read_item *q = items && n ? s3l_calloc(n, sizeof(*q)) : NULL;
    bool ok = q != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        q[i].kind = items[i].kind == S3L_READ_GET    ? S3L_S3_READ_GET
                    : items[i].kind == S3L_READ_STAT ? S3L_S3_READ_HEAD
                                                     : S3L_S3_READ_LIST;
        q[i].max = items[i].max;
        ok = (q[i].key = full_key(s, items[i].key)) != NULL;
    }
    if (ok)
        s3l_s3_read_objects(s->c, s->bucket, q, n);
    for (size_t i = 0; q && i < n; i++) {
        if (ok)
            keep_read(s, &items[i], &q[i]);
        s3l_free(q[i].data);
        s3l_s3_list_page_free(&q[i].page);
        s3l_free((char *)q[i].key);
    }
    s3l_free(q);
    s3l_free(items);
}

/* The client counts the S3 requests (at each attempt it starts), so it owns a thread's tally. */
static const void *s3_counts_owner(struct s3l_store *st)
{
    return S(st)->c;
}

/* The client's requests by S3 operation (include/s3l/s3.h s3l_s3_client_op_counts). */
static void s3_counts(struct s3l_store *st, struct s3l_store_counts *out)
{
    const char *names[S3L_S3_N_OPS];
    uint64_t n[S3L_S3_N_OPS];
    s3l_s3_client_op_counts(S(st)->c, names, n);
    out->unit = "s3 requests";
    out->n = 0;
    out->total = 0;
    for (int i = 0; i < S3L_S3_N_OPS && out->n < S3L_STORE_COUNTS_MAX; i++) {
        if (n[i] == 0)
            continue;
        out->ops[out->n].op = names[i];
        out->ops[out->n++].n = n[i];
        out->total += n[i];
    }
}

/* ListMultipartUploads under PREFIX/prefix, page by page; keys given relative to the root. */
static int s3_list_uploads(struct s3l_store *st, const char *prefix, s3l_store_uploads_cb cb,
                           void *ctx, struct s3l_error *err)
{
    struct s3_store *s = S(st);
    char *k = full_key(s, prefix ? prefix : "");
    if (!k)
        return nomem(err);
    size_t strip = strlen(s->prefix);
    char *km = NULL, *im = NULL;
    int rc = 0;
    do {
        struct s3l_s3_uploads_page p;
        rc = s3l_s3_list_uploads(s->c, s->bucket, k, km, im, 1000, &p, err);
        s3l_free(km);
        s3l_free(im);
        km = im = NULL;
        for (size_t i = 0; rc == 0 && i < p.n; i++) {
            if (strncmp(p.uploads[i].key, s->prefix, strip) != 0)
                continue; /* not under the root (cannot happen: the prefix was sent) */
            struct s3l_pending_upload u = {p.uploads[i].key + strip, p.uploads[i].upload_id,
                                           p.uploads[i].initiated_ns};
            rc = cb(ctx, &u);
        }
        if (rc == 0 && p.truncated) {
            km = p.next_key_marker;
            im = p.next_upload_id_marker;
            p.next_key_marker = p.next_upload_id_marker = NULL;
            if (!km)
                rc = s3l_error_set(err, S3L_ECORRUPT, "ListMultipartUploads of s3://%s/%s: a "
                                   "truncated page without NextKeyMarker", s->bucket, k);
        }
        s3l_s3_uploads_page_free(&p);
    } while (rc == 0 && km);
    s3l_free(km);
    s3l_free(im);
    s3l_free(k);
    return rc;
}

static void s3_destroy(struct s3l_store *st)
{
    struct s3_store *s = S(st);
    if (s->ahead_ok)
        s3l__ahead_cleanup(&s->ahead);
    s3l_s3_client_free(s->c);
    s3l_free(s->bucket);
    s3l_free(s->prefix);
    s3l_free(s->sse), s3l_free(s->sse_kms_key_id), s3l_free(s->storage_class);
    s3l__store_base_cleanup(st);
    s3l_free(s);
}

static const struct s3l_store_ops s3_ops = {
    .version = S3L_STORE_OPS_VERSION,
    .name = "s3",
    .caps = S3L_STORE_CAP_PUT_IF_ABSENT | S3L_STORE_CAP_CONDITIONAL | S3L_STORE_CAP_MULTIPART |
            S3L_STORE_CAP_SERVER_COPY | S3L_STORE_CAP_STAGED,
    .upload_begin = s3_upload_begin,
    .upload_write = s3_upload_write,
    .upload_publish = s3_upload_publish,
    .upload_abort = s3_upload_abort,
    .put = s3_put,
    .get = s3_get,
    .stat = s3_stat,
    .list = s3_list,
    .remove = s3_remove,
    .copy = s3_copy,
    .destroy = s3_destroy,
    .counts = s3_counts,
    .counts_owner = s3_counts_owner,
    .copy_sized = s3_copy_sized,
    .remove_many = s3_remove_many,
    .copy_many = s3_copy_many,
    .upload_stage = s3_upload_stage,
    .staged_complete = s3_staged_complete,
    .staged_abort = s3_staged_abort,
    .upload_progress = s3_upload_progress,
    .list_uploads = s3_list_uploads,
    .put_many = s3_put_many,
    .read_ahead = s3_read_ahead,
};

int s3l_s3_store_bucket_probe(struct s3l_store *st, char region[64], struct s3l_error *err)
{
    region[0] = 0;
    if (!st || st->ops != &s3_ops)
        return s3l_error_set(err, S3L_EUNSUPPORTED, "bucket probe: %.200s is not an s3:// store",
                             st && st->url ? st->url : "(none)");
    struct s3_store *s = S(st);
    return s3l_s3_bucket_probe(s->c, s->bucket, s->prefix, region, err);
}

/* s3://BUCKET[/PREFIX]: bucket and prefix (no leading or trailing '/', no empty segment). */
static int parse_url(const char *url, struct s3_store *s, struct s3l_error *err)
{
    const char *b = url + 5, *slash = strchr(b, '/');
    size_t blen = slash ? (size_t)(slash - b) : strlen(b);
    const char *p = slash ? slash + 1 : "";
    size_t plen = strlen(p);
    while (plen > 0 && p[plen - 1] == '/')
        plen--;
    bool bad = blen == 0 || (plen > 0 && (p[0] == '/' || strstr(p, "//")));
    if (bad)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "URL '%.200s': expected s3://BUCKET or s3://BUCKET/PREFIX", url);
    /* XML 1.0 cannot carry most control characters, and S3 answers carry keys in XML: such a
     * prefix would list, delete and upload unreliably (RGW answers "&#x01;", or 400, or 500). */
    for (size_t i = 0; i < blen + 1 + plen && b[i]; i++)
        if ((unsigned char)b[i] < 0x20 || b[i] == 0x7f)
            return s3l_error_set(err, S3L_EINVALID_CONFIG,
                                 "s3:// URL: byte %zu of the bucket and prefix is a control "
                                 "character (0x%02x): S3 answers carry keys in XML, which cannot "
                                 "hold it; use a prefix without control characters",
                                 i, (unsigned)(unsigned char)b[i]);
    s->bucket = s3l_strndup(b, blen);
    s->prefix = s3l_malloc(plen + 2);
    s->base.url = s3l_malloc(5 + blen + 1 + plen + 1);
    if (!s->bucket || !s->prefix || !s->base.url)
        return nomem(err);
    memcpy(s->prefix, p, plen);
    s->prefix[plen] = '/';
    s->prefix[plen ? plen + 1 : 0] = 0;
    snprintf(s->base.url, 5 + blen + 1 + plen + 1, "s3://%.*s%s%.*s", (int)blen, b,
             plen ? "/" : "", (int)plen, p);
    return 0;
}

int s3l__store_s3_open(const char *url, const struct s3l_store_options *opts,
                       struct s3l_store **out, struct s3l_error *err)
{
    *out = NULL;
    const struct s3l_s3_store_options *so = opts ? opts->s3 : NULL;
    struct s3l_s3_config flat_cfg = {0};
    struct s3l_s3_store_options flat = {0};
    if (!so && opts && opts->version >= 2 &&
        (opts->path_style || opts->credentials || opts->sse || opts->sse_kms_key_id ||
         opts->storage_class)) {
        flat_cfg.version = S3L_S3_CONFIG_VERSION; /* the store options' own S3 fields */
        flat_cfg.path_style = opts->path_style;
        flat_cfg.credentials = opts->credentials;
        flat.version = S3L_S3_STORE_OPTIONS_VERSION;
        flat.client = &flat_cfg;
        flat.sse = opts->sse;
        flat.sse_kms_key_id = opts->sse_kms_key_id;
        flat.storage_class = opts->storage_class;
        so = &flat;
    }
    if (so && so->version != S3L_S3_STORE_OPTIONS_VERSION)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "s3 store options: version must be %d",
                             S3L_S3_STORE_OPTIONS_VERSION);
    struct s3_store *s = s3l_calloc(1, sizeof(*s));
    if (!s)
        return nomem(err);
    s->base.ops = &s3_ops;
    int rc = parse_url(url, s, err);
    struct s3l_s3_config cfg = {0};
    if (so && so->client)
        cfg = *so->client;
    cfg.version = S3L_S3_CONFIG_VERSION;
    if (opts && opts->region)
        cfg.region = opts->region;
    if (opts && opts->endpoint)
        cfg.endpoint = opts->endpoint;
    if (rc == 0)
        rc = sse_init(s, so, err);
    if (rc == 0)
        rc = s3l_s3_client_new(&cfg, &s->c, err);
    if (rc == 0 && (rc = s3l__ahead_init(&s->ahead)) != 0)
        nomem(err);
    s->ahead_ok = rc == 0;
    s->part_size = so ? so->part_size : 0;
    s->copy_threshold = so ? so->copy_threshold : 0;
    s->copy_part_size = so ? so->copy_part_size : 0;
    if (rc != 0) {
        s3_destroy(&s->base);
        return rc;
    }
    *out = &s->base;
    return 0;
}

int s3l_s3_store_client(struct s3l_store *st, struct s3l_s3_client **c, const char **bucket,
                        const char **prefix)
{
    if (!st || st->ops != &s3_ops)
        return S3L_EUNSUPPORTED;
    *c = S(st)->c;
    *bucket = S(st)->bucket;
    *prefix = S(st)->prefix;
    return 0;
}
