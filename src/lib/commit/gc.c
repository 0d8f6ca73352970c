/*
 * Garbage collection: files staged by generations below this writer's that the checkpoint does
 * not hold as pending can never commit (their epochs are re-read under a newer generation), and
 * hidden temp files of killed writers are dead; s3l_dest_gc removes both, after claiming the
 * pipeline so that a writer of the generation it judges dead is fenced.
 */
#include <string.h>

#include "commit/commit.h"
#include "s3l/store.h"
#include "util/util.h"

struct gc_ctx {
    struct s3l_dest *d;
    char **keys;
    size_t n, cap;
};

static int gc_collect(void *ctx, const struct s3l_object_info *info)
{
    struct gc_ctx *g = ctx;
    uint64_t gen = 0;
    if (!s3l__key_staged_generation(info->key, g->d->pipeline, &gen) || gen >= g->d->generation)
        return 0;
    for (size_t i = 0; i < g->d->ck.n_files; i++)
        if (strcmp(g->d->ck.files[i].staged, info->key) == 0)
            return 0; /* pending: recovery will commit it */
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 32;
        char **k = s3l_realloc(g->keys, cap * sizeof(*k));
        if (!k)
            return S3L_ENOMEM;
        g->keys = k;
        g->cap = cap;
    }
    if (!(g->keys[g->n] = s3l_strdup(info->key)))
        return S3L_ENOMEM;
    g->n++;
    return 0;
}

/*
 * Temp files of uploads that died (docs/internals/store.md, "Stale temp files"): a temp file is
 * removed only when no live process holds it AND its inode changed more than the grace before
 * `since` (the claim of this generation, or now): the grace covers the instants in which a live
 * writer's new temp file is not locked yet, and clocks of coarse granularity.
 */
#define SWEEP_GRACE_NS 1000000000LL

int s3l__dest_sweep_temps(struct s3l_dest *d, const char *prefix, int64_t since, uint64_t *n,
                          struct s3l_error *err)
{
    return s3l_store_sweep(d->store, prefix, since - SWEEP_GRACE_NS, n, err);
}

int s3l_dest_gc(struct s3l_dest *d, uint64_t *removed, struct s3l_error *err)
{
    /* Claim first: a writer of the generation gc is about to judge dead must be fenced. */
    int rc = s3l__dest_claim(d, err);
    if (rc)
        return rc;
    char *prefix = s3l__key_staging_prefix(d->pipeline);
    if (!prefix)
        return S3L_ENOMEM;
    struct gc_ctx g = {d, NULL, 0, 0};
    rc = s3l_store_list(d->store, prefix, gc_collect, &g, err);
    uint64_t n = 0;
    for (size_t i = 0; i < g.n; i++) {
        if (rc == 0) {
            s3l_store_event(d->store, S3L__EV_IN_GC);
            rc = s3l_store_remove(d->store, g.keys[i], err);
            n += rc == 0;
        }
        s3l_free(g.keys[i]);
    }
    s3l_free(g.keys);
    s3l_free(prefix);
    /* Then the hidden temp files of killed writers, anywhere in the destination (staging and
     * table directories: a kill during a copy leaves one next to the table's files). */
    uint64_t swept = 0;
    if (rc == 0)
        rc = s3l__dest_sweep_temps(d, "", d->claim_ns, &swept, err);
    if (removed)
        *removed = n + swept;
    return rc;
}
