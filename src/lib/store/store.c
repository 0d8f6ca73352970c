/*
 * The storage dispatch layer: every caller reaches a backend through these functions. They check
 * keys (so no backend ever sees a key that could escape its root), count operations and bytes
 * (atomically: lanes call from several threads), and apply the registered wrapper to every store
 * s3l_store_open creates, which is how test builds inject crashes without production switches.
 * Also here: URL parsing and the table/namespace name rules.
 */
#include <stdio.h>
#include <string.h>

#include "store/store.h"
#include "util/util.h"

static s3l_store_wrap_fn g_wrap;
static void *g_wrap_ctx;

void s3l_store_set_wrapper(s3l_store_wrap_fn wrap, void *ctx)
{
    g_wrap = wrap;
    g_wrap_ctx = ctx;
}

static void count(uint64_t *field, uint64_t n)
{
    __atomic_add_fetch(field, n, __ATOMIC_RELAXED);
}

static const char *const op_names[S3L_STORE_N_OPS] = {
    "upload", "upload_abort", "put", "get", "stat", "list", "remove", "copy", "remove_many",
};

/* Counts n calls of op on s, and in the calling thread's tally when s is its owner (a store
 * whose counts are its own dispatch counts: util.h "tally"). */
static void count_op(struct s3l_store *s, enum s3l_store_op op, uint64_t n)
{
    count(&s->op_n[op], n);
    s3l__tally_add(s3l__tally_current(), s, op_names[op], n);
}

/* The key rules over key[0..len): no allocation, so a check never fails for want of memory. */
static bool key_valid_n(const char *key, size_t len)
{
    if (len == 0 || key[0] == '/' || memchr(key, 0, len))
        return false;
    size_t i = 0;
    for (;;) {
        const char *end = memchr(key + i, '/', len - i);
        size_t n = end ? (size_t)(end - (key + i)) : len - i;
        const char *seg = key + i;
        if (n == 0 || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
            return false;
        if (!end)
            return true;
        i += n + 1;
    }
}

bool s3l_store_key_valid(const char *key)
{
    return key && key_valid_n(key, strlen(key));
}

/* A list prefix: every complete segment (before the last '/') follows the key rules. */
static bool prefix_valid(const char *prefix)
{
    if (!prefix)
        return false;
    const char *last = strrchr(prefix, '/');
    return !last || key_valid_n(prefix, (size_t)(last - prefix));
}

static int bad_key(struct s3l_error *err, const char *key)
{
    return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "invalid store key '%s'", key ? key : "");
}

/* An operation's out-of-memory failure that left err without a message gets one naming the
 * operation and the key, at the one place every operation passes (s3l__oom), so that a backend's
 * helper that cannot take err (a key join, a sub-store's prefix) needs no message of its own. */
static int said(int rc, struct s3l_error *err, const char *op, const char *key)
{
    if (rc != S3L_ENOMEM || !err || err->message[0])
        return rc; /* the common case, every write of an upload included: nothing to format */
    char what[320];
    snprintf(what, sizeof(what), "in %s of '%s'", op, key ? key : "");
    return s3l__oom(err, rc, what);
}

int s3l_store_upload_begin(struct s3l_store *s, const char *key, const struct s3l_put_options *opts,
                           struct s3l_upload **out, struct s3l_error *err)
{
    if (!s3l_store_key_valid(key))
        return bad_key(err, key);
    count(&s->n_ops, 1);
    static const struct s3l_put_options none;
    return said(s->ops->upload_begin(s, key, opts ? opts : &none, out, err), err, "upload", key);
}

int s3l_store_upload_write(struct s3l_upload *u, const void *data, size_t len,
                           struct s3l_error *err)
{
    count(&u->store->n_ops, 1);
    count(&u->store->bytes_written, len);
    return said(u->store->ops->upload_write(u, data, len, err), err, "upload", u->key);
}

int s3l_store_upload_publish(struct s3l_upload *u, struct s3l_object_info *info,
                             struct s3l_error *err)
{
    count(&u->store->n_ops, 1);
    count_op(u->store, S3L_STORE_OP_UPLOAD, 1);
    char k[256];
    snprintf(k, sizeof(k), "%s", u->key); /* u is gone after the publish */
    return said(u->store->ops->upload_publish(u, info, err), err, "publish", k);
}

void s3l_store_upload_abort(struct s3l_upload *u)
{
    if (!u)
        return;
    count(&u->store->n_ops, 1);
    count_op(u->store, S3L_STORE_OP_UPLOAD_ABORT, 1);
    u->store->ops->upload_abort(u);
}

void s3l_store_upload_progress(struct s3l_upload *u)
{
    if (u && u->store->ops->upload_progress)
        u->store->ops->upload_progress(u);
}

void s3l_staged_cleanup(struct s3l_staged *st)
{
    if (!st)
        return;
    s3l_free(st->upload_id);
    s3l_free(st->token);
    s3l_free(st->parts);
    memset(st, 0, sizeof(*st));
}

static int no_staged(struct s3l_store *s, struct s3l_error *err)
{
    return s3l_error_set(err, S3L_EUNSUPPORTED,
                         "the %s store has no staged uploads (complete or abort by upload id)",
                         s->ops->name);
}

int s3l_store_upload_stage(struct s3l_upload *u, struct s3l_staged *out, struct s3l_error *err)
{
    memset(out, 0, sizeof(*out));
    struct s3l_store *s = u->store;
    if (!s->ops->upload_stage) {
        s->ops->upload_abort(u);
        return no_staged(s, err);
    }
    count(&s->n_ops, 1);
    char k[256];
    snprintf(k, sizeof(k), "%s", u->key); /* u is gone after the stage */
    return said(s->ops->upload_stage(u, out, err), err, "stage", k);
}

int s3l_store_staged_complete(struct s3l_store *s, const char *key, const struct s3l_staged *st,
                              struct s3l_object_info *info, struct s3l_error *err)
{
    if (!s3l_store_key_valid(key))
        return bad_key(err, key);
    if (!s->ops->staged_complete)
        return no_staged(s, err);
    if (!st || !st->upload_id || !*st->upload_id || !st->token || !st->n_parts || !st->parts)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                             "complete of '%s': a staged upload needs an id, a token and parts",
                             key);
    count(&s->n_ops, 1);
    return said(s->ops->staged_complete(s, key, st, info, err), err, "complete", key);
}

int s3l_store_staged_abort(struct s3l_store *s, const char *key, const char *upload_id,
                           struct s3l_error *err)
{
    if (!s3l_store_key_valid(key))
        return bad_key(err, key);
    if (!s->ops->staged_abort)
        return no_staged(s, err);
    if (!upload_id || !*upload_id)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "abort of '%s': no upload id", key);
    count(&s->n_ops, 1);
    return said(s->ops->staged_abort(s, key, upload_id, err), err, "abort", key);
}

int s3l_store_put(struct s3l_store *s, const char *key, const void *data, size_t len,
                  const struct s3l_put_options *opts, struct s3l_object_info *info,
                  struct s3l_error *err)
{
    if (!s3l_store_key_valid(key))
        return bad_key(err, key);
    count(&s->n_ops, 1);
    count_op(s, S3L_STORE_OP_PUT, 1);
    count(&s->bytes_written, len);
    static const struct s3l_put_options none;
    return said(s->ops->put(s, key, data, len, opts ? opts : &none, info, err), err, "put", key);
}

int s3l_store_get(struct s3l_store *s, const char *key, uint64_t offset, uint64_t len, size_t max,
                  uint8_t **data, size_t *data_len, struct s3l_object_info *info,
                  struct s3l_error *err)
{
    if (!s3l_store_key_valid(key))
        return bad_key(err, key);
    count(&s->n_ops, 1);
    count_op(s, S3L_STORE_OP_GET, 1);
    int rc = said(s->ops->get(s, key, offset, len, max, data, data_len, info, err), err, "get",
                  key);
    if (rc == 0)
        count(&s->bytes_read, *data_len);
    return rc;
}

int s3l_store_stat(struct s3l_store *s, const char *key, struct s3l_object_info *info,
                   struct s3l_error *err)
{
    if (!s3l_store_key_valid(key))
        return bad_key(err, key);
    count(&s->n_ops, 1);
    count_op(s, S3L_STORE_OP_STAT, 1);
    return said(s->ops->stat(s, key, info, err), err, "stat", key);
}

int s3l_store_list(struct s3l_store *s, const char *prefix, s3l_store_list_cb cb, void *ctx,
                   struct s3l_error *err)
{
    if (!prefix_valid(prefix))
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "invalid list prefix '%s'",
                             prefix ? prefix : "");
    count(&s->n_ops, 1);
    count_op(s, S3L_STORE_OP_LIST, 1);
    return said(s->ops->list(s, prefix, cb, ctx, err), err, "list", prefix);
}

int s3l_store_remove(struct s3l_store *s, const char *key, struct s3l_error *err)
{
    if (!s3l_store_key_valid(key))
        return bad_key(err, key);
    count(&s->n_ops, 1);
    count_op(s, S3L_STORE_OP_REMOVE, 1);
    return said(s->ops->remove(s, key, err), err, "remove", key);
}

int s3l_store_copy(struct s3l_store *s, const char *src_key, const char *dst_key,
                   struct s3l_error *err)
{
    if (!s3l_store_key_valid(src_key))
        return bad_key(err, src_key);
    if (!s3l_store_key_valid(dst_key))
        return bad_key(err, dst_key);
    count(&s->n_ops, 1);
    count_op(s, S3L_STORE_OP_COPY, 1);
    return said(s->ops->copy(s, src_key, dst_key, err), err, "copy", src_key);
}

int s3l_store_copy_sized(struct s3l_store *s, const char *src_key, uint64_t size,
                         const char *dst_key, struct s3l_error *err)
{
    if (!s->ops->copy_sized)
        return s3l_store_copy(s, src_key, dst_key, err);
    if (!s3l_store_key_valid(src_key))
        return bad_key(err, src_key);
    if (!s3l_store_key_valid(dst_key))
        return bad_key(err, dst_key);
    count(&s->n_ops, 1);
    count_op(s, S3L_STORE_OP_COPY, 1);
    return said(s->ops->copy_sized(s, src_key, size, dst_key, err), err, "copy", src_key);
}

int s3l_store_copy_many(struct s3l_store *s, const struct s3l_copy_item *items, size_t n,
                        struct s3l_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!s3l_store_key_valid(items[i].src))
            return bad_key(err, items[i].src);
        if (!s3l_store_key_valid(items[i].dst))
            return bad_key(err, items[i].dst);
    }
    if (n < 2 || !s->ops->copy_many) {
        int rc = 0;
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = s3l_store_copy_sized(s, items[i].src, items[i].size, items[i].dst, err);
        return rc;
    }
    count(&s->n_ops, n);
    count_op(s, S3L_STORE_OP_COPY, n);
    return said(s->ops->copy_many(s, items, n, err), err, "copy", items[0].src);
}

int s3l_store_remove_many(struct s3l_store *s, const char *const *keys, size_t n,
                          struct s3l_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (!s3l_store_key_valid(keys[i]))
            return bad_key(err, keys[i]);
    if (n < 2 || !s->ops->remove_many) {
        int first = 0;
        for (size_t i = 0; i < n; i++) {
            int rc = s3l_store_remove(s, keys[i], first ? NULL : err);
            first = first ? first : rc;
        }
        return first;
    }
    count(&s->n_ops, 1);
    count_op(s, S3L_STORE_OP_REMOVE_MANY, 1);
    return said(s->ops->remove_many(s, keys, n, err), err, "remove", keys[0]);
}

int s3l_store_put_many(struct s3l_store *s, struct s3l_put_item *items, size_t n,
                       struct s3l_error *err)
{
    for (size_t i = 0; i < n; i++) {
        items[i].rc = 0;
        s3l_error_clear(&items[i].err);
    }
    for (size_t i = 0; i < n; i++)
        if (!s3l_store_key_valid(items[i].key)) {
            /* refused as a whole: nothing was sent, and every item says so */
            for (size_t j = 0; j < n; j++)
                items[j].rc = bad_key(&items[j].err, items[i].key);
            return bad_key(err, items[i].key);
        }
    int first = -1; /* the first failing item */
    if (n < 2 || !s->ops->put_many) {
        for (size_t i = 0; i < n; i++) {
            items[i].rc = s3l_store_put(s, items[i].key, items[i].data, items[i].len,
                                        items[i].opts, NULL, &items[i].err);
            first = first < 0 && items[i].rc ? (int)i : first;
        }
    } else {
        count(&s->n_ops, n);
        count_op(s, S3L_STORE_OP_PUT, n);
        for (size_t i = 0; i < n; i++)
            count(&s->bytes_written, items[i].len);
        s->ops->put_many(s, items, n);
        for (size_t i = 0; i < n && first < 0; i++)
            first = items[i].rc ? (int)i : -1;
    }
    if (first < 0)
        return 0;
    if (err && err->code == 0)
        *err = items[first].err;
    return items[first].rc;
}

void s3l_store_read_ahead(struct s3l_store *s, const struct s3l_read_item *items, size_t n)
{
    if (!s->ops->read_ahead || n == 0)
        return;
    struct s3l_read_item *ok = s3l_calloc(n, sizeof(*ok));
    size_t m = 0;
    for (size_t i = 0; ok && i < n; i++)
        if (items[i].kind == S3L_READ_LIST ? prefix_valid(items[i].key)
                                           : s3l_store_key_valid(items[i].key))
            ok[m++] = items[i];
    if (m)
        s->ops->read_ahead(s, ok, m);
    s3l_free(ok);
}

const void *s3l__store_counts_owner(struct s3l_store *s)
{
    if (!s->ops->counts || !s->ops->counts_owner)
        return s;
    return s->ops->counts_owner(s);
}

void s3l_store_counts(struct s3l_store *s, struct s3l_store_counts *out)
{
    memset(out, 0, sizeof(*out));
    if (s->ops->counts) {
        s->ops->counts(s, out);
        return;
    }
    out->unit = "store operations";
    for (int i = 0; i < S3L_STORE_N_OPS; i++) {
        uint64_t n = __atomic_load_n(&s->op_n[i], __ATOMIC_RELAXED);
        if (n == 0)
            continue;
        out->ops[out->n].op = op_names[i];
        out->ops[out->n++].n = n;
        out->total += n;
    }
}


void s3l_store_event(struct s3l_store *s, const char *name)
{
    if (s && s->ops->event)
        s->ops->event(s, name);
}

int s3l_store_sweep(struct s3l_store *s, const char *prefix, int64_t before_ns,
                    uint64_t *removed, struct s3l_error *err)
{
    size_t n = strlen(prefix);
    char *k = s3l_strndup(prefix, n > 0 && prefix[n - 1] == '/' ? n - 1 : n);
    if (!k)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory sweeping %s", prefix);
    bool ok = n == 0 || s3l_store_key_valid(k);
    s3l_free(k);
    if (!ok)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "sweep: bad prefix '%s'", prefix);
    if (!s->ops->sweep)
        return 0;
    return said(s->ops->sweep(s, prefix, before_ns, removed, err), err, "sweep", prefix);
}

void s3l__store_base_cleanup(struct s3l_store *s)
{
    s3l_free(s->url);
    s->url = NULL;
}

void s3l_store_free(struct s3l_store *s)
{
    if (s)
        s->ops->destroy(s);
}

/* Decodes %XX and normalises: collapses "//", drops "." segments and the trailing "/". */
static int normalise_path(const char *url, const char *p, struct s3l_buf *out,
                          struct s3l_error *err)
{
    struct s3l_buf raw;
    s3l_buf_init(&raw, 1 << 16);
    int rc = 0;
    for (size_t i = 0; p[i] && rc == 0; i++) {
        char c = p[i];
        if (c == '%') {
            int h = s3l_hex_value(p[i + 1]), l = h < 0 ? -1 : s3l_hex_value(p[i + 2]);
            if (h < 0 || l < 0 || (h == 0 && l == 0)) {
                rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                                   "URL '%s': bad %%-escape (a NUL or not two hex digits)", url);
                break;
            }
            c = (char)(h * 16 + l);
            i += 2;
        }
        rc = s3l_buf_append_byte(&raw, (uint8_t)c);
    }
    const char *r = raw.ptr ? (const char *)raw.ptr : "";
    for (size_t i = 0; rc == 0 && r[i];) {
        while (r[i] == '/')
            i++;
        size_t n = strcspn(r + i, "/");
        if (n == 0)
            break;
        if (n == 2 && r[i] == '.' && r[i + 1] == '.')
            rc = s3l_error_set(err, S3L_EINVALID_CONFIG, "URL '%s': a '..' segment is not allowed",
                               url);
        else if (!(n == 1 && r[i] == '.'))
            rc = s3l_buf_append_byte(out, '/') || s3l_buf_append(out, r + i, n) ? S3L_ENOMEM : 0;
        i += n;
    }
    if (rc == 0 && out->len == 0)
        rc = s3l_buf_append_byte(out, '/');
    s3l_buf_free(&raw);
    return rc;
}

int s3l__file_url_parse(const char *url, char **path, char **canonical, struct s3l_error *err)
{
    const char *p = NULL;
    if (strncmp(url, "file:///", 8) == 0)
        p = url + 7;
    else if (strncmp(url, "file://localhost/", 17) == 0)
        p = url + 16;
    if (!p)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "URL '%s': expected file:///ABSOLUTE/PATH",
                             url);
    struct s3l_buf b;
    s3l_buf_init(&b, 1 << 16);
    int rc = normalise_path(url, p, &b, err);
    char *canon = NULL;
    if (rc == 0) {
        size_t n = b.len + 8;
        canon = s3l_malloc(n);
        if (!canon)
            rc = S3L_ENOMEM;
        else
            snprintf(canon, n, "file://%s", (char *)b.ptr);
    }
    if (rc) {
        s3l_buf_free(&b);
        if (rc == S3L_ENOMEM)
            s3l_error_set(err, rc, "out of memory parsing URL '%s'", url);
        return rc;
    }
    size_t len;
    uint8_t *out;
    s3l_buf_detach(&b, &out, &len);
    *path = (char *)out;
    *canonical = canon;
    return 0;
}

int s3l_store_open(const char *url, const struct s3l_store_options *opts, struct s3l_store **out,
                   struct s3l_error *err)
{
    if (!url)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "no destination URL");
    struct s3l_store *s = NULL;
    int rc;
    if (strncmp(url, "s3://", 5) == 0) {
        rc = s3l__store_s3_open(url, opts, &s, err);
    } else if (strncmp(url, "file:", 5) == 0) {
        char *path = NULL, *canon = NULL;
        rc = s3l__file_url_parse(url, &path, &canon, err);
        if (rc == 0)
            rc = s3l__store_local_open(path, canon, opts && opts->create, &s, err);
        s3l_free(path);
        s3l_free(canon);
    } else {
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "URL '%s': unknown scheme (expected file:/// or s3://)", url);
    }
    if (rc)
        return said(rc, err, "opening", url);
    if (g_wrap) {
        struct s3l_store *outer = NULL;
        rc = g_wrap(g_wrap_ctx, s, &outer, err);
        if (rc) {
            s3l_store_free(s);
            return rc;
        }
        s = outer;
    }
    *out = s;
    return 0;
}

/* Length of the valid UTF-8 sequence at s (RFC 3629 section 4: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or 0 when the bytes there are not one. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        lo = c == 0xE0 ? 0xA0 : 0x80;
        hi = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        lo = c == 0xF0 ? 0x90 : 0x80;
        hi = c == 0xF4 ? 0x8F : 0xBF;
    } else {
        return 0;
    }
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return len;
}

/* The first byte offset of a control character, backslash or invalid UTF-8 in name (len if
 * none); *why says which. */
static size_t bad_char(const char *name, size_t len, const char **why)
{
    const unsigned char *s = (const unsigned char *)name;
    for (size_t i = 0; i < len;) {
        if (s[i] == 0) {
            *why = "it holds a NUL byte";
            return i;
        }
        if (s[i] < 0x20 || s[i] == 0x7F) {
            *why = "it holds a control character (U+0000-U+001F, U+007F)";
            return i;
        }
        if (s[i] == '\\') {
            *why = "it holds a backslash";
            return i;
        }
        size_t n = utf8_seq(s + i, len - i);
        if (n == 0) {
            *why = "it is not valid UTF-8";
            return i;
        }
        i += n;
    }
    return len;
}

/* Shows at most the first 64 bytes of name in out, escaping control bytes, backslashes and
 * bytes >= 0x80 that are not valid UTF-8 as \xNN, so that the message stays one clean line. */
static void show_name(const char *name, size_t len, char *out, size_t cap)
{
    const unsigned char *s = (const unsigned char *)name;
    size_t o = 0, shown = S3L_MIN(len, (size_t)64);
    for (size_t i = 0; i < shown && o + 8 < cap;) {
        size_t n = s[i] >= 0x80 ? utf8_seq(s + i, len - i) : 1;
        if (s[i] < 0x20 || s[i] == 0x7F || s[i] == '\\' || n == 0) {
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", s[i]);
            i++;
        } else {
            n = S3L_MIN(n, cap - o - 8);
            memcpy(out + o, s + i, n);
            o += n;
            i += n;
        }
    }
    snprintf(out + o, cap - o, "%s", len > shown ? "..." : "");
}

int s3l_name_check(const char *name, size_t len, const char *what, struct s3l_error *err)
{
    const char *why = NULL;
    size_t at = len;
    if (!name || len == 0)
        why = "it is empty";
    else if (len > 255)
        why = "it is longer than 255 bytes";
    else if (name[0] == '/')
        why = "it is absolute (starts with '/')";
    else if (memchr(name, '/', len))
        why = "it holds a '/'";
    else if ((at = bad_char(name, len, &why)) < len)
        ; /* why is set */
    else if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
        why = "'.' and '..' are not names";
    else if (len >= 5 && memcmp(name, ".s3l-", 5) == 0)
        why = "names starting with '.s3l-' are reserved for temp and lock files";
    if (!why)
        return 0;
    char shown[64 * 4 + 8];
    show_name(name ? name : "", name ? len : 0, shown, sizeof(shown));
    if (at < len)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "%s name '%s' refused: %s (byte 0x%02x at offset %zu)", what, shown,
                             why, (unsigned char)name[at], at);
    return s3l_error_set(err, S3L_EINVALID_CONFIG, "%s name '%s' refused: %s", what, shown, why);
}

/* The prefix rule of s3l_store_sweep: "" or a key prefix (a trailing '/' allowed). */
static bool prefix_ok(const char *prefix)
{
    size_t n = strlen(prefix);
    return n == 0 || key_valid_n(prefix, prefix[n - 1] == '/' ? n - 1 : n);
}

int s3l_store_list_uploads(struct s3l_store *s, const char *prefix, s3l_store_uploads_cb cb,
                           void *ctx, struct s3l_error *err)
{
    if (!prefix_ok(prefix))
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "list uploads: bad prefix '%s'", prefix);
    if (!s->ops->list_uploads)
        return s3l_error_set(err, S3L_EUNSUPPORTED,
                             "%s: the %s backend has no multipart uploads", s->url, s->ops->name);
    count(&s->n_ops, 1);
    return said(s->ops->list_uploads(s, prefix, cb, ctx, err), err, "list uploads", prefix);
}

const char *s3l_store_url(const struct s3l_store *s)
{
    return s->url;
}

const char *s3l_store_backend(const struct s3l_store *s)
{
    return s->ops->name;
}

unsigned s3l_store_caps(const struct s3l_store *s)
{
    return s->ops->caps;
}

bool s3l_store_copies_in_batches(const struct s3l_store *s)
{
    return s->ops->copy_many != NULL;
}

bool s3l_store_puts_in_batches(const struct s3l_store *s)
{
    return s->ops->put_many != NULL;
}

uint64_t s3l_store_bytes_written(const struct s3l_store *s)
{
    return __atomic_load_n(&s->bytes_written, __ATOMIC_RELAXED);
}
