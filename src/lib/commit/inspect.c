/*
 * Reading a destination without a pipeline: the tables (from their schema records), the markers
 * of a table, its data files (with whether a marker covers them) and its schema record. This is
 * what `s3land ls` and `s3land schema` print; a reader that wants only committed data uses the
 * files that markers list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commit/commit.h"
#include "util/util.h"

/*
 * Listings are collected before any callback runs: a backend may hold a lock while it lists (the
 * s3 backend does), so neither we nor the caller's callback may call the store from inside a
 * list callback.
 */
struct listing {
    struct s3l_object_info *items;
    size_t n, cap;
};

static int collect(void *ctx, const struct s3l_object_info *info)
{
    struct listing *l = ctx;
    if (s3l__array_reserve(&l->items, &l->cap, l->n + 1, sizeof(*l->items), 64))
        return S3L_ENOMEM;
    l->items[l->n] = *info;
    if (!(l->items[l->n].key = s3l_strdup(info->key)))
        return S3L_ENOMEM;
    l->n++;
    return 0;
}

static void listing_free(struct listing *l)
{
    for (size_t i = 0; i < l->n; i++)
        s3l_free(l->items[i].key);
    s3l_free(l->items);
    memset(l, 0, sizeof(*l));
}

static int list_all(struct s3l_store *s, const char *prefix, struct listing *l,
                    struct s3l_error *err)
{
    memset(l, 0, sizeof(*l));
    int rc = s3l_store_list(s, prefix, collect, l, err);
    if (rc)
        listing_free(l);
    return rc;
}

struct tables_ctx {
    int (*cb)(void *ctx, const char *table);
    void *ctx;
};

static int on_schema(void *ctx, const struct s3l_object_info *info)
{
    struct tables_ctx *t = ctx;
    char *table = NULL;
    int rc = s3l__key_schema_parse(info->key, &table);
    if (rc <= 0)
        return rc;
    rc = t->cb(t->ctx, table);
    s3l_free(table);
    return rc;
}

int s3l_dest_list_tables(struct s3l_store *s, int (*cb)(void *ctx, const char *table), void *ctx,
                         struct s3l_error *err)
{
    struct tables_ctx t = {cb, ctx};
    struct listing l;
    int rc = list_all(s, s3l__key_schemas_prefix(), &l, err);
    for (size_t i = 0; rc == 0 && i < l.n; i++)
        rc = on_schema(&t, &l.items[i]);
    listing_free(&l);
    return rc;
}

struct markers_ctx {
    struct s3l_store *s;
    size_t prefix_len;
    int (*cb)(void *ctx, const struct s3l_dest_marker *m);
    void *ctx;
    struct s3l_error *err;
};

static int on_marker(void *ctx, const struct s3l_object_info *info)
{
    struct markers_ctx *m = ctx;
    /* Only this table's markers, not those of tables under it (T/x/...). */
    if (strchr(info->key + m->prefix_len, '/'))
        return 0;
    uint8_t *data = NULL;
    size_t len = 0;
    int rc = s3l_store_get(m->s, info->key, 0, UINT64_MAX, S3L__DOC_MAX, &data, &len, NULL, m->err);
    if (rc == 0)
        rc = s3l__marker_decode((const char *)data, len, info->key, m->cb, m->ctx, m->err);
    s3l_free(data);
    return rc;
}

int s3l_dest_list_markers(struct s3l_store *s, const char *table,
                          int (*cb)(void *ctx, const struct s3l_dest_marker *m), void *ctx,
                          struct s3l_error *err)
{
    char *prefix = s3l__key_markers_prefix(table);
    if (!prefix)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory listing the markers of %s", table);
    struct markers_ctx m = {s, strlen(prefix), cb, ctx, err};
    struct listing l;
    int rc = list_all(s, prefix, &l, err);
    for (size_t i = 0; rc == 0 && i < l.n; i++)
        rc = on_marker(&m, &l.items[i]);
    listing_free(&l);
    s3l_free(prefix);
    return s3l__oom(err, rc, "listing the markers");
}

int s3l__marker_names(struct s3l_store *s, const char *table,
                      int (*cb)(void *ctx, const char *pipeline, uint64_t epoch), void *ctx,
                      struct s3l_error *err)
{
    char *prefix = s3l__key_markers_prefix(table);
    if (!prefix)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory listing the markers of %s", table);
    struct listing l;
    int rc = list_all(s, prefix, &l, err);
    for (size_t i = 0; rc == 0 && i < l.n; i++) {
        char pipeline[128];
        uint64_t epoch = 0;
        if (s3l__key_marker_parse(l.items[i].key, table, pipeline, sizeof(pipeline), &epoch))
            rc = cb(ctx, pipeline, epoch);
    }
    listing_free(&l);
    s3l_free(prefix);
    return rc;
}

int s3l__ckpt_list(struct s3l_store *s, int (*cb)(void *ctx, const char *id), void *ctx,
                   struct s3l_error *err)
{
    struct listing l;
    int rc = list_all(s, s3l__key_checkpoints_prefix(), &l, err);
    for (size_t i = 0; rc == 0 && i < l.n; i++) {
        char id[256];
        if (s3l__key_checkpoint_parse(l.items[i].key, id, sizeof(id)))
            rc = cb(ctx, id); /* after the listing: cb may call the store */
    }
    listing_free(&l);
    return rc;
}

/* A sorted set of distinct strings (the tables of s3l_dest_pipeline_tables). */
struct strset {
    char **v;
    size_t n, cap;
};

static int strset_add(struct strset *s, const char *str)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], str) == 0)
            return 0;
    if (s3l__array_reserve(&s->v, &s->cap, s->n + 1, sizeof(*s->v), 8))
        return S3L_ENOMEM;
    if (!(s->v[s->n] = s3l_strdup(str)))
        return S3L_ENOMEM;
    s->n++;
    return 0;
}

static void strset_free(struct strset *s)
{
    for (size_t i = 0; i < s->n; i++)
        s3l_free(s->v[i]);
    s3l_free(s->v);
}

static int collect_table(void *ctx, const char *table)
{
    return strset_add(ctx, table);
}

struct has_marker {
    const char *pipeline;
    bool found;
};

static int marker_of(void *ctx, const char *pipeline, uint64_t epoch)
{
    struct has_marker *h = ctx;
    (void)epoch;
    h->found |= strcmp(pipeline, h->pipeline) == 0;
    return 0;
}

static int cmp_str(const void *a, const void *b);

/* Tables with a marker of pipeline, or in its pending epoch, or in its staging area. */
static int tables_of(struct s3l_store *s, const char *pipeline, struct strset *out,
                     struct s3l_error *err)
{
    struct strset all = {0};
    int rc = s3l_dest_list_tables(s, collect_table, &all, err);
    for (size_t i = 0; rc == 0 && i < all.n; i++) {
        struct has_marker h = {pipeline, false};
        rc = s3l__marker_names(s, all.v[i], marker_of, &h, err);
        if (rc == 0 && h.found)
            rc = strset_add(out, all.v[i]);
    }
    strset_free(&all);
    struct s3l__ckpt c;
    if (rc == 0 && (rc = s3l__ckpt_read(s, pipeline, &c, err)) == 0) {
        for (size_t i = 0; rc == 0 && i < c.n_files; i++)
            rc = strset_add(out, c.files[i].table);
        s3l__ckpt_cleanup(&c);
    }
    char *prefix = rc == 0 ? s3l__key_staging_prefix(pipeline) : NULL;
    struct listing l = {0};
    if (rc == 0)
        rc = prefix ? list_all(s, prefix, &l, err) : S3L_ENOMEM;
    for (size_t i = 0; rc == 0 && i < l.n; i++) {
        char *t = NULL;
        rc = s3l__key_staged_table(l.items[i].key, pipeline, &t);
        if (rc == 1)
            rc = strset_add(out, t);
        s3l_free(t);
    }
    listing_free(&l);
    s3l_free(prefix);
    return s3l__oom(err, rc, "listing the tables of a pipeline");
}

int s3l_dest_pipeline_tables(struct s3l_store *s, const char *pipeline,
                             int (*cb)(void *ctx, const char *table), void *ctx,
                             struct s3l_error *err)
{
    struct strset tables = {0};
    int rc = tables_of(s, pipeline, &tables, err);
    if (rc == S3L_ENOMEM && err && err->code == 0)
        s3l_error_set(err, rc, "out of memory listing the tables of pipeline %s", pipeline);
    if (rc == 0 && tables.n > 1)
        qsort(tables.v, tables.n, sizeof(*tables.v), cmp_str);
    for (size_t i = 0; rc == 0 && i < tables.n; i++)
        rc = cb(ctx, tables.v[i]);
    strset_free(&tables);
    return rc;
}

/* The set of committed keys, gathered from the markers (sorted for bsearch). */
struct keyset {
    char **keys;
    size_t n, cap;
};

static int add_marker_keys(void *ctx, const struct s3l_dest_marker *m)
{
    struct keyset *k = ctx;
    for (size_t i = 0; i < m->n_files; i++) {
        if (s3l__array_reserve(&k->keys, &k->cap, k->n + 1, sizeof(*k->keys), 64))
            return S3L_ENOMEM;
        if (!(k->keys[k->n] = s3l_strdup(m->files[i].key)))
            return S3L_ENOMEM;
        k->n++;
    }
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

struct files_ctx {
    struct keyset *set;
    size_t prefix_len;
    bool committed_only;
    int (*cb)(void *ctx, const struct s3l_object_info *info, bool committed);
    void *ctx;
};

static int on_file(void *ctx, const struct s3l_object_info *info)
{
    struct files_ctx *f = ctx;
    if (strchr(info->key + f->prefix_len, '/'))
        return 0;
    const char *key = info->key;
    bool committed =
        f->set->n && bsearch(&key, f->set->keys, f->set->n, sizeof(char *), cmp_str) != NULL;
    if (f->committed_only && !committed)
        return 0;
    return f->cb(f->ctx, info, committed);
}

int s3l_dest_list_files(struct s3l_store *s, const char *table, bool committed_only,
                        int (*cb)(void *ctx, const struct s3l_object_info *info, bool committed),
                        void *ctx, struct s3l_error *err)
{
    struct keyset set = {0};
    int rc = s3l_dest_list_markers(s, table, add_marker_keys, &set, err);
    if (rc == 0 && set.n > 1)
        qsort(set.keys, set.n, sizeof(*set.keys), cmp_str);
    char *prefix = rc == 0 ? s3l__key_table_prefix(table) : NULL;
    if (rc == 0 && !prefix)
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory listing the files of %s", table);
    if (rc == 0) {
        struct files_ctx f = {&set, strlen(prefix), committed_only, cb, ctx};
        struct listing l;
        rc = list_all(s, prefix, &l, err);
        for (size_t i = 0; rc == 0 && i < l.n; i++)
            rc = on_file(&f, &l.items[i]);
        listing_free(&l);
    }
    for (size_t i = 0; i < set.n; i++)
        s3l_free(set.keys[i]);
    s3l_free(set.keys);
    s3l_free(prefix);
    return rc;
}

int s3l_dest_read_schema(struct s3l_store *s, const char *table, char **json, size_t *len,
                         struct s3l_error *err)
{
    char *key = s3l__key_schema(table);
    if (!key)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory reading the schema record of %s",
                             table);
    uint8_t *data = NULL;
    int rc = s3l_store_get(s, key, 0, UINT64_MAX, S3L__DOC_MAX, &data, len, NULL, err);
    if (rc == 0)
        *json = (char *)data;
    s3l_free(key);
    return rc;
}
