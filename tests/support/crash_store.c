/*
 * The crash/fault store wrapper (crash_store.h). Production code has no test switches: this file
 * only uses the public wrapper hook and the generic event notification of s3l/sys/store.h.
 */
#include "crash_store.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "s3l/alloc.h"
#include "s3l/store.h"
#include "s3l/sys/store.h"

#define S3L_TEST_OPS_MAX 4096

static struct {
    int mode; /* 0 off, 1 crash, 2 fail (before), 3 fail (op k done, then reported failed) */
    uint64_t at;
    char point[64];
    unsigned nth;
    unsigned seen;
    uint64_t ops;
    uint8_t mutates[4096]; /* per operation (1-based, while counting): 1 if it changes the store */
    const char *names[4096]; /* per operation: its name (static strings) */
    /* Hold mode (with crash mode's point and nth): the thread reaching the point waits until
     * the point `until` is announced again (by another thread), then dies or goes on. */
    char until[64];
    unsigned until_seen, until_nth;
    bool hold_kill;
    int holding; /* a thread reached the hold point (atomic) */
    int hold_ms;
    int held; /* 1 held and released, 2 held and timed out */
    /* Mode 4: the nth operation named fail_op fails (S3L_EIO); the others work. */
    char fail_op[32];
    unsigned fail_seen, fail_nth; /* fail_nth 0: every one */
} g;

struct cs {
    struct s3l_store base;
    struct s3l_store *inner;
    struct s3l_store_ops ops; /* cs_ops with the inner store's capabilities */
};

struct cu {
    struct s3l_upload base;
    struct s3l_upload *inner;
};

static void die(const char *what)
{
    char msg[160];
    int n = snprintf(msg, sizeof(msg), "crash_store: SIGKILL at %s\n", what);
    if (write(2, msg, (size_t)n) < 0) {
        /* nothing to do: we die anyway */
    }
    kill(getpid(), SIGKILL);
    pause();
}

/* Counts one operation; returns non-zero when it must fail. */
static int step(const char *op, const char *key, struct s3l_error *err)
{
    if (!g.mode)
        return 0;
    uint64_t n = __atomic_add_fetch(&g.ops, 1, __ATOMIC_SEQ_CST);
    if (n < sizeof(g.mutates))
        g.names[n] = op;
    if (n < sizeof(g.mutates))
        g.mutates[n] = strcmp(op, "upload_publish") == 0 || strcmp(op, "put") == 0 ||
                       strcmp(op, "remove") == 0 || strcmp(op, "copy") == 0 ||
                       strcmp(op, "staged_complete") == 0;
    if (g.mode == 1 && g.at && n == g.at) {
        char what[128];
        snprintf(what, sizeof(what), "op %llu (%s %.80s)", (unsigned long long)n, op,
                 key ? key : "");
        die(what);
    }
    if (g.mode == 2 && n >= g.at)
        return s3l_error_set(err, S3L_EIO, "injected failure at op %llu (%s %s)",
                             (unsigned long long)n, op, key ? key : "");
    if (g.fail_op[0] && strcmp(op, g.fail_op) == 0) {
        unsigned seen = __atomic_add_fetch(&g.fail_seen, 1, __ATOMIC_SEQ_CST);
        if (g.fail_nth == 0 || seen == g.fail_nth)
            return s3l_error_set(err, S3L_EIO, "injected failure of %s #%u (%s)", op, seen,
                                 key ? key : "");
    }
    return 0;
}

/* Mode 3: after op k was performed, report it failed (a reply lost after the store acted). */
static int lost_reply(int rc, struct s3l_error *err)
{
    if (g.mode == 3 && rc == 0 && __atomic_load_n(&g.ops, __ATOMIC_SEQ_CST) == g.at)
        return s3l_error_set(err, S3L_EIO, "injected lost reply at op %llu",
                             (unsigned long long)g.at);
    return rc;
}

static int cs_upload_begin(struct s3l_store *s, const char *key, const struct s3l_put_options *o,
                           struct s3l_upload **out, struct s3l_error *err)
{
    struct cs *c = (struct cs *)s;
    if (step("upload_begin", key, err))
        return S3L_EIO;
    struct cu *u = s3l_calloc(1, sizeof(*u));
    if (!u)
        return S3L_ENOMEM;
    int rc = s3l_store_upload_begin(c->inner, key, o, &u->inner, err);
    if (rc) {
        s3l_free(u);
        return rc;
    }
    u->base.store = s;
    u->base.key = u->inner->key;
    *out = &u->base;
    return 0;
}

static int cs_upload_write(struct s3l_upload *up, const void *d, size_t n, struct s3l_error *err)
{
    struct cu *u = (struct cu *)up;
    if (step("upload_write", up->key, err))
        return S3L_EIO;
    return s3l_store_upload_write(u->inner, d, n, err);
}

static int cs_upload_publish(struct s3l_upload *up, struct s3l_object_info *info,
                             struct s3l_error *err)
{
    struct cu *u = (struct cu *)up;
    if (step("upload_publish", up->key, err)) {
        s3l_store_upload_abort(u->inner);
        s3l_free(u);
        return S3L_EIO;
    }
    int rc = s3l_store_upload_publish(u->inner, info, err);
    s3l_free(u);
    return lost_reply(rc, err);
}

static void cs_upload_abort(struct s3l_upload *up)
{
    struct cu *u = (struct cu *)up;
    step("upload_abort", up->key, NULL);
    s3l_store_upload_abort(u->inner);
    s3l_free(u);
}

/* Not a step: it changes nothing at the store's side that a kill could cut in two. */
static void cs_upload_progress(struct s3l_upload *up)
{
    s3l_store_upload_progress(((struct cu *)up)->inner);
}

static int cs_put(struct s3l_store *s, const char *key, const void *d, size_t n,
                  const struct s3l_put_options *o, struct s3l_object_info *info,
                  struct s3l_error *err)
{
    if (step("put", key, err))
        return S3L_EIO;
    return lost_reply(s3l_store_put(((struct cs *)s)->inner, key, d, n, o, info, err), err);
}

static int cs_get(struct s3l_store *s, const char *key, uint64_t off, uint64_t len, size_t max,
                  uint8_t **data, size_t *data_len, struct s3l_object_info *info,
                  struct s3l_error *err)
{
    if (step("get", key, err))
        return S3L_EIO;
    return s3l_store_get(((struct cs *)s)->inner, key, off, len, max, data, data_len, info, err);
}

static int cs_stat(struct s3l_store *s, const char *key, struct s3l_object_info *info,
                   struct s3l_error *err)
{
    if (step("stat", key, err))
        return S3L_EIO;
    return s3l_store_stat(((struct cs *)s)->inner, key, info, err);
}

static int cs_list(struct s3l_store *s, const char *prefix, s3l_store_list_cb cb, void *ctx,
                   struct s3l_error *err)
{
    if (step("list", prefix, err))
        return S3L_EIO;
    return s3l_store_list(((struct cs *)s)->inner, prefix, cb, ctx, err);
}

static int cs_remove(struct s3l_store *s, const char *key, struct s3l_error *err)
{
    if (step("remove", key, err))
        return S3L_EIO;
    return lost_reply(s3l_store_remove(((struct cs *)s)->inner, key, err), err);
}

static int cs_copy(struct s3l_store *s, const char *src, const char *dst, struct s3l_error *err)
{
    if (step("copy", dst, err))
        return S3L_EIO;
    return lost_reply(s3l_store_copy(((struct cs *)s)->inner, src, dst, err), err);
}

static void cs_event(struct s3l_store *s, const char *name);

/* A batch of copies (the destination's batched path, as on S3): passed on item by item, each
 * item its own step, so a kill (or a failure, or a lost reply) after any number of the batch's
 * copies is enumerated; between two items the point between-copies is announced, as the
 * destination does between sequential copies: on S3 the copies travel at once, and a kill when
 * some have been done and the others not is that same state. */
static int cs_copy_many(struct s3l_store *s, const struct s3l_copy_item *items, size_t n,
                        struct s3l_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            cs_event(s, "between-copies");
        if (step("copy", items[i].dst, err))
            return S3L_EIO;
        int rc = lost_reply(s3l_store_copy_sized(((struct cs *)s)->inner, items[i].src,
                                                 items[i].size, items[i].dst, err), err);
        if (rc)
            return rc;
    }
    return 0;
}

/* A batch of puts (the markers of an epoch's streams, or its schema records, sent at once on
 * S3): item by item, each its own step, so a kill after any number of the batch's puts is
 * enumerated; between two markers the point between-markers is announced, as the destination
 * announces it between sequential marker puts. */
static int cs_put_many(struct s3l_store *s, struct s3l_put_item *items, size_t n)
{
    int first = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && strstr(items[i].key, "_openetl/markers/"))
            cs_event(s, "between-markers");
        items[i].rc = cs_put(s, items[i].key, items[i].data, items[i].len, items[i].opts, NULL,
                             &items[i].err);
        first = first ? first : items[i].rc;
    }
    return first;
}

/* Reads sent ahead: passed on, not a step (nothing changes); the reads they answer are steps
 * when they are made, as before. */
static void cs_read_ahead(struct s3l_store *s, const struct s3l_read_item *items, size_t n)
{
    s3l_store_read_ahead(((struct cs *)s)->inner, items, n);
}

static void cs_destroy(struct s3l_store *s)
{
    struct cs *c = (struct cs *)s;
    s3l_store_free(c->inner);
    s3l_free(c->base.url);
    s3l_free(c);
}

/* Hold mode: waits (1 ms steps, hold_ms at most) until `until` was announced until_nth times. */
static void hold(const char *name)
{
    __atomic_store_n(&g.holding, 1, __ATOMIC_SEQ_CST);
    int waited = 0;
    while (__atomic_load_n(&g.until_seen, __ATOMIC_SEQ_CST) < g.until_nth &&
           waited < g.hold_ms) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        waited++;
    }
    bool timed_out = __atomic_load_n(&g.until_seen, __ATOMIC_SEQ_CST) < g.until_nth;
    __atomic_store_n(&g.held, timed_out ? 2 : 1, __ATOMIC_SEQ_CST);
    if (!g.hold_kill)
        return;
    if (timed_out) {
        /* Not the interleaving asked for: say so, and exit rather than be killed. */
        char msg[200];
        int n = snprintf(msg, sizeof(msg), "crash_store: held at %s #%u, %s #%u never came\n",
                         name, g.nth, g.until, g.until_nth);
        if (write(2, msg, (size_t)n) < 0) {
            /* exiting anyway */
        }
        _exit(4);
    }
    char what[192];
    snprintf(what, sizeof(what), "point %s #%u, held until %s #%u", name, g.nth, g.until,
             g.until_nth);
    die(what);
}

/* Crash mode: dies at the nth time the armed point is reached (hold mode: holds there first). */
static void reached(const char *name)
{
    if (g.until[0] && strcmp(name, g.until) == 0)
        __atomic_add_fetch(&g.until_seen, 1, __ATOMIC_SEQ_CST);
    if ((g.mode == 1 || g.until[0]) && g.point[0] && strcmp(name, g.point) == 0 &&
        __atomic_add_fetch(&g.seen, 1, __ATOMIC_SEQ_CST) == g.nth) {
        if (g.until[0]) {
            hold(name);
            return;
        }
        char what[96];
        snprintf(what, sizeof(what), "point %s #%u", name, g.nth);
        die(what);
    }
}

static void cs_event(struct s3l_store *s, const char *name)
{
    reached(name);
    s3l_store_event(((struct cs *)s)->inner, name);
}

static int cs_upload_stage(struct s3l_upload *up, struct s3l_staged *out, struct s3l_error *err)
{
    struct cu *u = (struct cu *)up;
    if (step("upload_stage", up->key, err)) {
        s3l_store_upload_abort(u->inner);
        s3l_free(u);
        return S3L_EIO;
    }
    int rc = s3l_store_upload_stage(u->inner, out, err);
    s3l_free(u);
    return rc;
}

/* The point mid_complete: the store completed the upload, and the process dies before it
 * learns so (an answer lost with the process). */
static int cs_staged_complete(struct s3l_store *s, const char *key, const struct s3l_staged *st,
                              struct s3l_object_info *info, struct s3l_error *err)
{
    if (step("staged_complete", key, err))
        return S3L_EIO;
    int rc = s3l_store_staged_complete(((struct cs *)s)->inner, key, st, info, err);
    reached("mid_complete");
    return lost_reply(rc, err);
}

static int cs_staged_abort(struct s3l_store *s, const char *key, const char *upload_id,
                           struct s3l_error *err)
{
    if (step("staged_abort", key, err))
        return S3L_EIO;
    return s3l_store_staged_abort(((struct cs *)s)->inner, key, upload_id, err);
}

/* Housekeeping of the backend's hidden files: passed through, not a crash step. */
static int cs_sweep(struct s3l_store *s, const char *prefix, int64_t before_ns, uint64_t *removed,
                    struct s3l_error *err)
{
    return s3l_store_sweep(((struct cs *)s)->inner, prefix, before_ns, removed, err);
}

static const struct s3l_store_ops cs_ops = {
    .version = S3L_STORE_OPS_VERSION,
    .name = "crash",
    .caps = 0,
    .upload_begin = cs_upload_begin,
    .upload_write = cs_upload_write,
    .upload_publish = cs_upload_publish,
    .upload_abort = cs_upload_abort,
    .put = cs_put,
    .get = cs_get,
    .stat = cs_stat,
    .list = cs_list,
    .remove = cs_remove,
    .copy = cs_copy,
    .destroy = cs_destroy,
    .event = cs_event,
    .sweep = cs_sweep,
    .copy_many = cs_copy_many,
    .put_many = cs_put_many,
    .read_ahead = cs_read_ahead,
    .upload_stage = cs_upload_stage,
    .staged_complete = cs_staged_complete,
    .staged_abort = cs_staged_abort,
    .upload_progress = cs_upload_progress,
};

static int wrap(void *ctx, struct s3l_store *inner, struct s3l_store **outer, struct s3l_error *err)
{
    (void)ctx;
    (void)err;
    struct cs *c = s3l_calloc(1, sizeof(*c));
    if (!c)
        return S3L_ENOMEM;
    c->base.ops = &cs_ops;
    c->base.url = s3l_strdup(inner->url);
    c->inner = inner;
    if (!c->base.url) {
        s3l_free(c);
        return S3L_ENOMEM;
    }
    c->ops = cs_ops;
    c->ops.caps = inner->ops->caps;
    if (!inner->ops->upload_stage) {
        c->ops.upload_stage = NULL;
        c->ops.staged_complete = NULL;
        c->ops.staged_abort = NULL;
    }
    c->base.ops = &c->ops;
    *outer = &c->base;
    return 0;
}

void s3l_test_crash_arm(uint64_t at_op, const char *point, unsigned nth)
{
    memset(&g, 0, sizeof(g));
    g.mode = 1;
    g.at = at_op;
    if (point)
        snprintf(g.point, sizeof(g.point), "%s", point);
    g.nth = nth ? nth : 1;
    s3l_store_set_wrapper(wrap, NULL);
}

void s3l_test_hold_arm(const char *point, unsigned nth, const char *until, unsigned until_nth,
                       bool kill, int timeout_ms)
{
    s3l_test_crash_arm(0, point, nth);
    snprintf(g.until, sizeof(g.until), "%s", until);
    g.until_nth = until_nth ? until_nth : 1;
    g.hold_kill = kill;
    g.hold_ms = timeout_ms;
}

void s3l_test_fail_from_now(void)
{
    __atomic_store_n(&g.at, __atomic_load_n(&g.ops, __ATOMIC_SEQ_CST) + 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&g.mode, 2, __ATOMIC_SEQ_CST);
}

bool s3l_test_hold_wait(int timeout_ms)
{
    for (int waited = 0; !__atomic_load_n(&g.holding, __ATOMIC_SEQ_CST) && waited < timeout_ms;
         waited++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return __atomic_load_n(&g.holding, __ATOMIC_SEQ_CST) != 0;
}

int s3l_test_hold_result(void)
{
    return __atomic_load_n(&g.held, __ATOMIC_SEQ_CST);
}

void s3l_test_fail_arm(uint64_t from_op)
{
    memset(&g, 0, sizeof(g));
    g.mode = 2;
    g.at = from_op;
    s3l_store_set_wrapper(wrap, NULL);
}

void s3l_test_fail_op_arm(const char *op, unsigned nth)
{
    memset(&g, 0, sizeof(g));
    g.mode = 4;
    snprintf(g.fail_op, sizeof(g.fail_op), "%s", op);
    g.fail_nth = nth ? nth : 1;
    s3l_store_set_wrapper(wrap, NULL);
}

void s3l_test_fail_op_every(const char *op)
{
    s3l_test_fail_op_arm(op, 1);
    g.fail_nth = 0;
}

void s3l_test_fail_op_also(const char *op, unsigned nth)
{
    snprintf(g.fail_op, sizeof(g.fail_op), "%s", op);
    g.fail_nth = nth ? nth : 1;
    __atomic_store_n(&g.fail_seen, 0, __ATOMIC_SEQ_CST);
}

void s3l_test_fail_after_arm(uint64_t at_op)
{
    memset(&g, 0, sizeof(g));
    g.mode = 3;
    g.at = at_op;
    s3l_store_set_wrapper(wrap, NULL);
}

void s3l_test_crash_disarm(void)
{
    memset(&g, 0, sizeof(g));
    s3l_store_set_wrapper(NULL, NULL);
}

const char *s3l_test_crash_op_name(uint64_t k)
{
    return k < S3L_TEST_OPS_MAX && g.names[k] ? g.names[k] : "";
}

bool s3l_test_crash_op_mutates(uint64_t k)
{
    return k < sizeof(g.mutates) && g.mutates[k];
}

uint64_t s3l_test_crash_ops(void)
{
    return __atomic_load_n(&g.ops, __ATOMIC_SEQ_CST);
}

__attribute__((constructor)) static void arm_from_env(void)
{
    const char *at = getenv("S3L_CRASH_AT");
    const char *point = getenv("S3L_CRASH_POINT");
    const char *held = getenv("S3L_CRASH_HOLD");
    if (held && *held) {
        /* point:n:until:m (point #n held until `until` was announced m times, then killed) */
        char name[64], until[64];
        unsigned nth = 1, m = 1;
        if (sscanf(held, "%63[^:]:%u:%63[^:]:%u", name, &nth, until, &m) == 4)
            s3l_test_hold_arm(name, nth, until, m, true, 30000);
    } else if (at && *at) {
        s3l_test_crash_arm(strtoull(at, NULL, 10), NULL, 0);
    } else if (point && *point) {
        char name[64];
        snprintf(name, sizeof(name), "%s", point);
        char *colon = strchr(name, ':');
        unsigned nth = 1;
        if (colon) {
            *colon = 0;
            nth = (unsigned)strtoul(colon + 1, NULL, 10);
        }
        s3l_test_crash_arm(0, name, nth);
    }
}
