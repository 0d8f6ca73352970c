/*
 * Pending multipart uploads under a destination (issue 13 item 6): which a checkpoint or a live
 * writer holds, and which are orphans that `s3land gc --uploads` aborts. A killed writer's
 * Parquet staging upload is never completed nor aborted by anyone else, and its parts are stored
 * (and billed) until something aborts it. The rule (s3l_dest_uploads in destination.h):
 *   - a staging upload (_openetl/staging/<pipeline>/g<G>/...) of a pipeline with a checkpoint:
 *     held when its key is a file the checkpoint's pending epoch holds, or when G is the
 *     checkpoint's current generation or newer (its writer may be live); an orphan when G is
 *     below it (that writer was fenced or killed: its upload can never commit);
 *   - any other upload: held when --keep lists its id, the caller's holds name it (s3land: the
 *     committables of `pipe` state files) or a checkpoint of this destination holds its id (an
 *     engine's committable); an orphan when older than older_than; else
 *     kept as young.
 */
#include <string.h>

#include "commit/commit.h"
#include "os/os.h"
#include "s3l/store.h"
#include "util/util.h"

/* One checkpoint of the destination: its decoded document and its raw text (ids are searched in
 * the text, so that any field that names an upload holds it). */
struct ck_entry {
    struct s3l__ckpt ck;
    char *text;
};

struct collected {
    struct s3l_pending_upload *v;
    size_t n, cap;
};

static int collect_upload(void *ctx, const struct s3l_pending_upload *u)
{
    struct collected *c = ctx;
    if (s3l__array_reserve(&c->v, &c->cap, c->n + 1, sizeof(*c->v), 16))
        return S3L_ENOMEM;
    struct s3l_pending_upload *d = &c->v[c->n];
    d->key = s3l_strdup(u->key);
    d->upload_id = s3l_strdup(u->upload_id);
    d->initiated_ns = u->initiated_ns;
    if (!d->key || !d->upload_id) {
        s3l_free((char *)d->key);
        s3l_free((char *)d->upload_id);
        return S3L_ENOMEM;
    }
    c->n++;
    return 0;
}

struct ck_list {
    struct s3l_store *s;
    char **ids;
    size_t n, cap;
};

static int collect_ckpt(void *ctx, const struct s3l_object_info *info)
{
    struct ck_list *l = ctx;
    char id[80];
    if (!s3l__key_checkpoint_parse(info->key, id, sizeof(id)))
        return 0;
    if (s3l__array_reserve(&l->ids, &l->cap, l->n + 1, sizeof(*l->ids), 16))
        return S3L_ENOMEM;
    if (!(l->ids[l->n] = s3l_strdup(id)))
        return S3L_ENOMEM;
    l->n++;
    return 0;
}

/* Reads every checkpoint of the destination into *out (n entries). */
static int read_checkpoints(struct s3l_store *s, struct ck_entry **out, size_t *n,
                            struct s3l_error *err)
{
    struct ck_list l = {s, NULL, 0, 0};
    int rc = s3l_store_list(s, s3l__key_checkpoints_prefix(), collect_ckpt, &l, err);
    struct ck_entry *v = rc == 0 ? s3l_calloc(l.n ? l.n : 1, sizeof(*v)) : NULL;
    if (rc == 0 && !v)
        rc = S3L_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < l.n; i++) {
        if (rc == 0) {
            /* One GET: the decoded document and the text searched for ids are one version. */
            char *key = s3l__key_checkpoint(l.ids[i]);
            uint8_t *text = NULL;
            size_t len = 0;
            rc = key ? s3l_store_get(s, key, 0, UINT64_MAX, S3L__DOC_MAX, &text, &len, NULL, err)
                     : S3L_ENOMEM;
            if (rc == 0)
                rc = s3l__ckpt_decode((const char *)text, len, key, &v[k].ck, err);
            if (rc == 0 && strcmp(v[k].ck.pipeline, l.ids[i]) != 0)
                rc = s3l_error_set(err, S3L_ECORRUPT, "checkpoint %s: it belongs to another "
                                   "pipeline", key);
            s3l_free(key);
            v[k].text = (char *)text;
            if (rc == 0) {
                k++;
            } else {
                s3l__ckpt_cleanup(&v[k].ck);
                s3l_free(v[k].text);
                v[k].text = NULL;
            }
            if (rc == S3L_ENOT_FOUND) { /* removed since the listing */
                s3l_error_clear(err);
                rc = 0;
            }
        }
        s3l_free(l.ids[i]);
    }
    s3l_free(l.ids);
    *out = v;
    *n = k;
    return s3l__oom(err, rc, "reading the checkpoints");
}

static void free_checkpoints(struct ck_entry *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        s3l__ckpt_cleanup(&v[i].ck);
        s3l_free(v[i].text);
    }
    s3l_free(v);
}

/* "7d", "2h", "15m", "30s", "500ms": a duration for messages. */
static void fmt_dur(int64_t ns, char *buf, size_t cap)
{
    int64_t ms = ns / 1000000;
    if (ms % 86400000 == 0 && ms)
        snprintf(buf, cap, "%lldd", (long long)(ms / 86400000));
    else if (ms % 3600000 == 0 && ms)
        snprintf(buf, cap, "%lldh", (long long)(ms / 3600000));
    else if (ms % 60000 == 0 && ms)
        snprintf(buf, cap, "%lldm", (long long)(ms / 60000));
    else if (ms % 1000 == 0)
        snprintf(buf, cap, "%llds", (long long)(ms / 1000));
    else
        snprintf(buf, cap, "%lldms", (long long)ms);
}

/* A staging upload of a pipeline with a checkpoint: held or an orphan (1), or not one (0). */
static int judge_staging(const struct ck_entry *cks, size_t n, struct s3l_dest_upload *u,
                         char *why, size_t cap)
{
    char pipeline[80];
    uint64_t gen = 0;
    if (!s3l__key_staged_parse(u->key, pipeline, sizeof(pipeline), &gen))
        return 0;
    for (size_t i = 0; i < n; i++) {
        const struct s3l__ckpt *ck = &cks[i].ck;
        if (strcmp(ck->pipeline, pipeline) != 0)
            continue;
        u->pipeline = ck->pipeline;
        u->generation = gen;
        for (size_t j = 0; j < ck->n_files; j++)
            if (strcmp(ck->files[j].staged, u->key) == 0) {
                u->cls = S3L_DEST_UPLOAD_HELD;
                snprintf(why, cap, "a file of the pending epoch in the checkpoint of pipeline %s",
                         pipeline);
                return 1;
            }
        if (gen >= ck->generation) {
            u->cls = S3L_DEST_UPLOAD_HELD;
            snprintf(why, cap, "staged by generation %llu, pipeline %s's current one: its writer "
                     "may be running", (unsigned long long)gen, pipeline);
        } else {
            u->cls = S3L_DEST_UPLOAD_ORPHAN;
            snprintf(why, cap, "staged by generation %llu, below pipeline %s's current %llu, and "
                     "not pending: its writer was killed or fenced, so it can never commit",
                     (unsigned long long)gen, pipeline, (unsigned long long)ck->generation);
        }
        return 1;
    }
    return 0;
}

/* Any other upload: --keep, a checkpoint naming its id, its age. */
static void judge_other(const struct ck_entry *cks, size_t n,
                        const struct s3l_dest_uploads_options *o, int64_t now,
                        struct s3l_dest_upload *u, char *why, size_t cap)
{
    char d[32];
    fmt_dur(o->older_than_ns, d, sizeof(d));
    for (size_t i = 0; i < o->n_keep; i++)
        if (strcmp(o->keep[i], u->upload_id) == 0) {
            u->cls = S3L_DEST_UPLOAD_HELD;
            snprintf(why, cap, "listed in --keep");
            return;
        }
    for (size_t i = 0; i < o->n_holds; i++) {
        const struct s3l_dest_upload_hold *h = &o->holds[i];
        if (strcmp(h->upload_id, u->upload_id) == 0 && (!h->key || strcmp(h->key, u->key) == 0)) {
            u->cls = S3L_DEST_UPLOAD_HELD;
            snprintf(why, cap, "%s", h->why ? h->why : "held by the caller");
            return;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (cks[i].text && strstr(cks[i].text, u->upload_id)) {
            u->cls = S3L_DEST_UPLOAD_HELD;
            snprintf(why, cap, "named by the checkpoint of pipeline %s", cks[i].ck.pipeline);
            return;
        }
    if (u->initiated_ns > 0 && now - u->initiated_ns >= o->older_than_ns) {
        u->cls = S3L_DEST_UPLOAD_ORPHAN;
        snprintf(why, cap, "older than %s and held by no checkpoint of this destination", d);
    } else {
        u->cls = S3L_DEST_UPLOAD_YOUNG;
        snprintf(why, cap, "held by no checkpoint, but younger than %s (--older-than)%s", d,
                 u->initiated_ns > 0 ? "" : " as far as is known (the store gave no time)");
    }
}

int s3l_dest_uploads(struct s3l_store *s, const struct s3l_dest_uploads_options *o, bool abort,
                     int (*cb)(void *ctx, const struct s3l_dest_upload *u), void *ctx,
                     struct s3l_error *err)
{
    struct collected c = {NULL, 0, 0};
    char *prefix = NULL;
    int rc = 0;
    if (o->pipeline) {
        rc = s3l__pipeline_id_check(o->pipeline, err);
        if (rc == 0 && !(prefix = s3l__key_staging_prefix(o->pipeline)))
            rc = s3l_error_set(err, S3L_ENOMEM, "out of memory");
    }
    if (rc == 0)
        rc = s3l_store_list_uploads(s, prefix ? prefix : "", collect_upload, &c, err);
    s3l_free(prefix);
    struct ck_entry *cks = NULL;
    size_t n = 0;
    if (rc == 0)
        rc = read_checkpoints(s, &cks, &n, err);
    int64_t now = o->now_ns ? o->now_ns : s3l__os_now_ns();
    for (size_t i = 0; i < c.n; i++) {
        struct s3l_dest_upload u = {0};
        char why[400];
        u.key = c.v[i].key;
        u.upload_id = c.v[i].upload_id;
        u.initiated_ns = c.v[i].initiated_ns;
        u.why = why;
        if (rc == 0 && !judge_staging(cks, n, &u, why, sizeof(why)))
            judge_other(cks, n, o, now, &u, why, sizeof(why));
        if (rc == 0 && abort && u.cls == S3L_DEST_UPLOAD_ORPHAN) {
            /* staged_abort: one gone meanwhile (aborted, completed) is success. */
            rc = s3l_store_staged_abort(s, u.key, u.upload_id, err);
            u.aborted = rc == 0;
        }
        if (rc == 0)
            rc = cb(ctx, &u);
        s3l_free((char *)c.v[i].key);
        s3l_free((char *)c.v[i].upload_id);
    }
    s3l_free(c.v);
    free_checkpoints(cks, n);
    return rc;
}
