/*
 * Garbage collection: files staged by generations below this writer's that the checkpoint does
 * not hold as pending can never commit (their epochs are re-read under a newer generation), and
 * hidden temp files of killed writers are dead; s3l_dest_gc removes both, after claiming the
 * pipeline so that a writer of the generation it judges dead is fenced. s3l_dest_gc_pipeline
 * (`s3land gc`) claims only a pipeline that looks dead (issue 10 item 12): its checkpoint not
 * updated for twice its commit interval; for a live one it removes what older generations left.
 */
#include <string.h>

#include "commit/commit.h"
#include "os/os.h"
#include "s3l/store.h"
#include "util/util.h"

struct gc_ctx {
    struct s3l_dest *d;
    uint64_t below; /* staged files of generations below this one are garbage */
    char **keys;
    size_t n, cap;
};

static int gc_collect(void *ctx, const struct s3l_object_info *info)
{
    struct gc_ctx *g = ctx;
    uint64_t gen = 0;
    if (!s3l__key_staged_generation(info->key, g->d->pipeline, &gen) || gen >= g->below)
        return 0;
    for (size_t i = 0; i < g->d->ck.n_files; i++)
        if (strcmp(g->d->ck.files[i].staged, info->key) == 0)
            return 0; /* pending: recovery will commit it */
    if (s3l__array_reserve(&g->keys, &g->cap, g->n + 1, sizeof(*g->keys), 32))
        return S3L_ENOMEM;
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

/* Removes the staged files of generations below `below` that are not pending, then the stale
 * temp files of the whole destination changed before `since` minus the grace. */
static int remove_garbage(struct s3l_dest *d, uint64_t below, int64_t since, uint64_t *removed,
                          struct s3l_error *err)
{
    char *prefix = s3l__key_staging_prefix(d->pipeline);
    if (!prefix)
        return s3l_error_set(err, S3L_ENOMEM,
                             "out of memory naming the staging prefix of pipeline %s", d->pipeline);
    struct gc_ctx g = {d, below, NULL, 0, 0};
    int rc = s3l_store_list(d->store, prefix, gc_collect, &g, err);
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
        rc = s3l__dest_sweep_temps(d, "", since, &swept, err);
    if (removed)
        *removed = n + swept;
    return rc;
}

int s3l_dest_gc(struct s3l_dest *d, uint64_t *removed, struct s3l_error *err)
{
    /* The epoch finishing owns the checkpoint: wait for it. Then claim first: a writer of the
     * generation gc is about to judge dead must be fenced. */
    int rc = s3l__dest_join_err(d, err);
    if (rc == 0)
        rc = s3l__dest_claim(d, err);
    if (rc)
        return rc;
    return remove_garbage(d, d->generation, d->claim_ns, removed, err);
}

/*
 * The liveness rule of s3l_dest_gc_pipeline: live when the checkpoint was modified less than
 * twice its interval ago (a writer commits, and so writes its checkpoint, at least once per
 * interval while it has rows), or when its interval is 0 (by rows only: age says nothing).
 */
static void judge(const struct s3l__ckpt *ck, struct s3l_dest_gc_report *r)
{
    r->exists = ck->exists;
    r->interval_recorded = ck->has_interval;
    r->interval_ms = ck->has_interval ? ck->commit_interval_ms : S3L_DEST_GC_DEFAULT_INTERVAL_MS;
    r->updated_ns = ck->mtime_ns;
    r->now_ns = s3l__os_now_ns();
    int64_t limit_ns = (int64_t)(r->interval_ms * 2 * 1000000ull);
    /* An unknown modification time (a store that gave none) is taken as live: never fence on a
     * guess. */
    r->live = ck->exists && (r->interval_ms == 0 || r->updated_ns == 0 ||
                             r->now_ns - r->updated_ns < limit_ns);
}

int s3l_dest_gc_pipeline(struct s3l_store *store, const char *pipeline, bool force,
                         struct s3l_dest_gc_report *r, struct s3l_error *err)
{
    memset(r, 0, sizeof(*r));
    struct s3l_dest_options o = {0};
    o.version = S3L_DEST_OPTIONS_VERSION;
    o.pipeline_id = pipeline;
    struct s3l_dest *d = NULL;
    int rc = s3l__dest_open_parquet(store, &o, false, &d, err);
    if (rc)
        return rc;
    judge(&d->ck, r);
    if (!d->ck.exists) {
        /* Nothing was ever claimed, so nothing staged: no checkpoint is created for it. */
        rc = remove_garbage(d, 0, s3l__os_now_ns(), &r->removed, err);
    } else if (!r->live || force) {
        r->forced = r->live;
        r->recovered = d->ck.has_pending;
        rc = s3l__dest_recover(d, err);
        if (rc == 0)
            rc = s3l_dest_gc(d, &r->removed, err);
        r->claimed = rc == 0;
        if (rc == S3L_EFENCED) {
            /* The claim is conditional on the checkpoint gc judged: it moved meanwhile. */
            s3l_error_clear(err);
            /* The caller names the pipeline (the CLI prefixes every gc error with it). */
            rc = s3l_error_set(err, S3L_EFENCED,
                               "a writer updated its checkpoint while gc was judging it, so it "
                               "is live: gc claimed nothing and removed nothing");
        }
    } else {
        /* Live: the writers of older generations are fenced already (their commit points are
         * conditional on a checkpoint that moved on), so their staged files can never commit;
         * the current generation's are the live writer's. Nothing pending is touched. */
        rc = remove_garbage(d, d->ck.generation, s3l__os_now_ns(), &r->removed, err);
    }
    r->generation = d->ck.generation;
    s3l_dest_free(d);
    return rc;
}

/* ---- What killed `s3land check` runs left under _openetl/check/ (issue 11 item 6) ---- */

struct leftover {
    char *key;
    int64_t mtime_ns;
};

struct leftovers {
    struct leftover *v;
    size_t n, cap;
};

static int leftover_add(void *ctx, const struct s3l_object_info *info)
{
    struct leftovers *l = ctx;
    if (s3l__array_reserve(&l->v, &l->cap, l->n + 1, sizeof(*l->v), 64))
        return S3L_ENOMEM;
    if (!(l->v[l->n].key = s3l_strdup(info->key)))
        return S3L_ENOMEM;
    l->v[l->n++].mtime_ns = info->mtime_ns;
    return 0;
}

/* The length of the scratch area's name in key (after the prefix): up to the next '/', or the
 * whole rest for an object directly under _openetl/check/. */
static size_t area_len(const char *key, size_t plen)
{
    return strcspn(key + plen, "/");
}

int s3l_dest_gc_check_leftovers(struct s3l_store *s, int64_t min_age_ns, uint64_t *removed,
                                struct s3l_error *err)
{
    const char *prefix = s3l_dest_scratch_prefix();
    size_t plen = strlen(prefix);
    struct leftovers l = {0};
    int rc = s3l_store_list(s, prefix, leftover_add, &l, err);
    if (rc == S3L_ENOMEM && err && !err->code)
        s3l_error_set(err, rc, "out of memory listing %s", prefix);
    int64_t now = s3l__os_now_ns();
    /* The listing is in byte order of keys, so an area's objects are neighbours. An area is
     * stale when its newest object is older than min_age_ns; an unknown time (0) is taken as
     * fresh: never remove what a running check may still use. */
    for (size_t i = 0; rc == 0 && i < l.n;) {
        size_t a = area_len(l.v[i].key, plen), j = i;
        int64_t newest = 0;
        bool unknown = false;
        for (; j < l.n && area_len(l.v[j].key, plen) == a &&
               memcmp(l.v[j].key + plen, l.v[i].key + plen, a) == 0; j++) {
            unknown = unknown || l.v[j].mtime_ns == 0;
            newest = l.v[j].mtime_ns > newest ? l.v[j].mtime_ns : newest;
        }
        if (!unknown && now - newest > min_age_ns) {
            const char **keys = s3l_calloc(j - i, sizeof(*keys));
            if (!keys)
                rc = s3l_error_set(err, S3L_ENOMEM, "out of memory removing %s", l.v[i].key);
            for (size_t k = i; keys && k < j; k++)
                keys[k - i] = l.v[k].key;
            if (keys)
                rc = s3l_store_remove_many(s, keys, j - i, err);
            if (rc == 0 && removed)
                *removed += j - i;
            s3l_free(keys);
        }
        i = j;
    }
    for (size_t i = 0; i < l.n; i++)
        s3l_free(l.v[i].key);
    s3l_free(l.v);
    return rc;
}
