/*
 * A store rooted at a prefix of another store (s3l_store_sub_new): every key k is the parent's
 * PREFIX + k, so code that runs on a whole destination (the commit protocol of s3l_dest) runs
 * unchanged inside a scratch area of an existing one, through the parent's own backend, its
 * connection and its credentials. `s3land check` lands its scratch table this way under
 * URL/_openetl/check/<uuid>/, where no reader and no other pipeline looks.
 *
 * The sub-store forwards to the parent's dispatch functions (so the parent counts the operations
 * and a test wrapper of the parent sees them), and hands out the parent's upload handles: the
 * upload ops (write, publish, abort, stage) reach the parent through u->store.
 */
#include <stdio.h>
#include <string.h>

#include "store/store.h"
#include "util/util.h"

struct sub_store {
    struct s3l_store base;
    struct s3l_store *parent; /* borrowed */
    char *prefix;             /* "P/" */
    size_t n;
};

static struct sub_store *SUB(struct s3l_store *s)
{
    return (struct sub_store *)s;
}

/* PREFIX + key (s3l_free), or NULL (out of memory; err set). */
static char *full(struct s3l_store *s, const char *key, struct s3l_error *err)
{
    struct sub_store *ss = SUB(s);
    size_t k = strlen(key);
    char *p = s3l_malloc(ss->n + k + 1);
    if (!p) {
        s3l_error_set(err, S3L_ENOMEM, "out of memory for key %s%s", ss->prefix, key);
        return NULL;
    }
    memcpy(p, ss->prefix, ss->n);
    memcpy(p + ss->n, key, k + 1);
    return p;
}

static int sub_upload_begin(struct s3l_store *s, const char *key,
                            const struct s3l_put_options *opts, struct s3l_upload **out,
                            struct s3l_error *err)
{
    char *k = full(s, key, err);
    int rc = k ? s3l_store_upload_begin(SUB(s)->parent, k, opts, out, err) : S3L_ENOMEM;
    s3l_free(k);
    return rc;
}

/* Never called: the handles are the parent's, so dispatch reaches the parent's ops. */
static int sub_upload_write(struct s3l_upload *u, const void *data, size_t len,
                            struct s3l_error *err)
{
    return u->store->ops->upload_write(u, data, len, err);
}

static int sub_upload_publish(struct s3l_upload *u, struct s3l_object_info *info,
                              struct s3l_error *err)
{
    return u->store->ops->upload_publish(u, info, err);
}

static void sub_upload_abort(struct s3l_upload *u)
{
    u->store->ops->upload_abort(u);
}

static int sub_put(struct s3l_store *s, const char *key, const void *data, size_t len,
                   const struct s3l_put_options *opts, struct s3l_object_info *info,
                   struct s3l_error *err)
{
    char *k = full(s, key, err);
    int rc = k ? s3l_store_put(SUB(s)->parent, k, data, len, opts, info, err) : S3L_ENOMEM;
    s3l_free(k);
    return rc;
}

static int sub_get(struct s3l_store *s, const char *key, uint64_t offset, uint64_t len,
                   size_t max, uint8_t **data, size_t *data_len, struct s3l_object_info *info,
                   struct s3l_error *err)
{
    char *k = full(s, key, err);
    int rc = k ? s3l_store_get(SUB(s)->parent, k, offset, len, max, data, data_len, info, err)
               : S3L_ENOMEM;
    s3l_free(k);
    return rc;
}

static int sub_stat(struct s3l_store *s, const char *key, struct s3l_object_info *info,
                    struct s3l_error *err)
{
    char *k = full(s, key, err);
    int rc = k ? s3l_store_stat(SUB(s)->parent, k, info, err) : S3L_ENOMEM;
    s3l_free(k);
    return rc;
}

struct strip {
    size_t n;
    s3l_store_list_cb cb;
    void *ctx;
};

/* The parent's listing with the prefix taken off every key. */
static int strip_cb(void *ctx, const struct s3l_object_info *info)
{
    struct strip *st = ctx;
    struct s3l_object_info o = *info;
    o.key = info->key + st->n;
    return st->cb(st->ctx, &o);
}

static int sub_list(struct s3l_store *s, const char *prefix, s3l_store_list_cb cb, void *ctx,
                    struct s3l_error *err)
{
    char *k = full(s, prefix, err);
    struct strip st = {SUB(s)->n, cb, ctx};
    int rc = k ? s3l_store_list(SUB(s)->parent, k, strip_cb, &st, err) : S3L_ENOMEM;
    s3l_free(k);
    return rc;
}

static int sub_remove(struct s3l_store *s, const char *key, struct s3l_error *err)
{
    char *k = full(s, key, err);
    int rc = k ? s3l_store_remove(SUB(s)->parent, k, err) : S3L_ENOMEM;
    s3l_free(k);
    return rc;
}

static int sub_copy_sized(struct s3l_store *s, const char *src, uint64_t size, const char *dst,
                          struct s3l_error *err)
{
    char *a = full(s, src, err), *b = a ? full(s, dst, err) : NULL;
    int rc = b ? s3l_store_copy_sized(SUB(s)->parent, a, size, b, err) : S3L_ENOMEM;
    s3l_free(a);
    s3l_free(b);
    return rc;
}

static int sub_copy(struct s3l_store *s, const char *src, const char *dst, struct s3l_error *err)
{
    char *a = full(s, src, err), *b = a ? full(s, dst, err) : NULL;
    int rc = b ? s3l_store_copy(SUB(s)->parent, a, b, err) : S3L_ENOMEM;
    s3l_free(a);
    s3l_free(b);
    return rc;
}

/* The n keys (or n copies' keys) with the prefix, in one allocation each; freed by free_keys. */
static char **full_keys(struct s3l_store *s, const char *const *keys, size_t n,
                        struct s3l_error *err)
{
    char **v = s3l_calloc(n ? n : 1, sizeof(*v));
    for (size_t i = 0; v && i < n; i++)
        if (!(v[i] = full(s, keys[i], err))) {
            for (size_t j = 0; j < i; j++)
                s3l_free(v[j]);
            s3l_free(v);
            return NULL;
        }
    if (!v)
        s3l_error_set(err, S3L_ENOMEM, "out of memory for %zu keys", n);
    return v;
}

static void free_keys(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        s3l_free(v[i]);
    s3l_free(v);
}

static int sub_remove_many(struct s3l_store *s, const char *const *keys, size_t n,
                           struct s3l_error *err)
{
    char **v = full_keys(s, keys, n, err);
    int rc = v ? s3l_store_remove_many(SUB(s)->parent, (const char *const *)v, n, err)
               : S3L_ENOMEM;
    free_keys(v, n);
    return rc;
}

static int sub_copy_many(struct s3l_store *s, const struct s3l_copy_item *items, size_t n,
                         struct s3l_error *err)
{
    struct s3l_copy_item *it = s3l_calloc(n ? n : 1, sizeof(*it));
    int rc = it ? 0 : s3l_error_set(err, S3L_ENOMEM, "out of memory for %zu copies", n);
    size_t done = 0;
    for (; rc == 0 && done < n; done++) {
        it[done].size = items[done].size;
        char *a = full(s, items[done].src, err), *b = a ? full(s, items[done].dst, err) : NULL;
        it[done].src = a;
        it[done].dst = b;
        if (!b) {
            done++;
            rc = S3L_ENOMEM;
            break;
        }
    }
    if (rc == 0)
        rc = s3l_store_copy_many(SUB(s)->parent, it, n, err);
    for (size_t i = 0; it && i < done; i++) {
        s3l_free((char *)it[i].src);
        s3l_free((char *)it[i].dst);
    }
    s3l_free(it);
    return rc;
}

static void sub_event(struct s3l_store *s, const char *name)
{
    s3l_store_event(SUB(s)->parent, name);
}

static int sub_sweep(struct s3l_store *s, const char *prefix, int64_t before_ns,
                     uint64_t *removed, struct s3l_error *err)
{
    char *k = full(s, prefix, err);
    int rc = k ? s3l_store_sweep(SUB(s)->parent, k, before_ns, removed, err) : S3L_ENOMEM;
    s3l_free(k);
    return rc;
}

static void sub_counts(struct s3l_store *s, struct s3l_store_counts *out)
{
    s3l_store_counts(SUB(s)->parent, out);
}

static const void *sub_counts_owner(struct s3l_store *s)
{
    return s3l__store_counts_owner(SUB(s)->parent);
}

static int sub_staged_complete(struct s3l_store *s, const char *key, const struct s3l_staged *st,
                               struct s3l_object_info *info, struct s3l_error *err)
{
    char *k = full(s, key, err);
    int rc = k ? s3l_store_staged_complete(SUB(s)->parent, k, st, info, err) : S3L_ENOMEM;
    s3l_free(k);
    return rc;
}

static int sub_staged_abort(struct s3l_store *s, const char *key, const char *upload_id,
                            struct s3l_error *err)
{
    char *k = full(s, key, err);
    int rc = k ? s3l_store_staged_abort(SUB(s)->parent, k, upload_id, err) : S3L_ENOMEM;
    s3l_free(k);
    return rc;
}

static int sub_upload_stage(struct s3l_upload *u, struct s3l_staged *out, struct s3l_error *err)
{
    return u->store->ops->upload_stage(u, out, err);
}

static void sub_destroy(struct s3l_store *s)
{
    struct sub_store *ss = SUB(s);
    s3l_free(ss->prefix);
    s3l__store_base_cleanup(s);
    s3l_free(ss);
}

int s3l_store_sub_new(struct s3l_store *parent, const char *prefix, struct s3l_store **out,
                      struct s3l_error *err)
{
    *out = NULL;
    size_t n = prefix ? strlen(prefix) : 0;
    bool shaped = n >= 2 && prefix[n - 1] == '/';
    char *segs = shaped ? s3l_strndup(prefix, n - 1) : NULL;
    if (shaped && !segs)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory checking sub-store prefix '%s'",
                             prefix);
    bool ok = parent && segs && s3l_store_key_valid(segs);
    s3l_free(segs);
    if (!ok)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                             "sub-store prefix '%s': expected key segments ending in '/'",
                             prefix ? prefix : "");
    struct sub_store *ss = s3l_calloc(1, sizeof(*ss) + sizeof(struct s3l_store_ops));
    char *url = NULL;
    if (ss && (ss->prefix = s3l_strdup(prefix)) != NULL)
        url = s3l_malloc(strlen(parent->url) + n + 2);
    if (!url) {
        if (ss)
            s3l_free(ss->prefix);
        s3l_free(ss);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for sub-store %s", prefix);
    }
    snprintf(url, strlen(parent->url) + n + 2, "%s/%.*s", parent->url, (int)(n - 1), prefix);
    /* The ops live after the struct: per sub-store, since its caps are the parent's and the
     * staged ops exist only when the parent has them. */
    struct s3l_store_ops *ops = (struct s3l_store_ops *)(ss + 1);
    *ops = (struct s3l_store_ops){
        .version = S3L_STORE_OPS_VERSION,
        .name = parent->ops->name,
        .caps = parent->ops->caps,
        .upload_begin = sub_upload_begin,
        .upload_write = sub_upload_write,
        .upload_publish = sub_upload_publish,
        .upload_abort = sub_upload_abort,
        .put = sub_put,
        .get = sub_get,
        .stat = sub_stat,
        .list = sub_list,
        .remove = sub_remove,
        .copy = sub_copy,
        .destroy = sub_destroy,
        .event = sub_event,
        .sweep = sub_sweep,
        .counts = sub_counts,
        .counts_owner = sub_counts_owner,
        .copy_sized = sub_copy_sized,
        .remove_many = sub_remove_many,
        .copy_many = sub_copy_many,
    };
    if (parent->ops->caps & S3L_STORE_CAP_STAGED) {
        ops->upload_stage = sub_upload_stage;
        ops->staged_complete = sub_staged_complete;
        ops->staged_abort = sub_staged_abort;
    }
    ss->base.ops = ops;
    ss->base.url = url;
    ss->parent = parent;
    ss->n = n;
    *out = &ss->base;
    return 0;
}
