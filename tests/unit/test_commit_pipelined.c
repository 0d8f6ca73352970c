/*
 * The pipelined commit (docs/internals/commit.md "Pipelined commit", issue 14 item 1): epoch E
 * finishes on the destination's committer thread while the caller stages E+1.
 * - overlap: the committer is held at a point of E's finish until the stager has staged a file of
 *   E+1 (the crash store's hold mode); with pipelining the hold is released, with serial commits
 *   it can only time out (the same check, so the test shows it tells the two apart);
 * - requests per epoch: the same epochs committed serially and pipelined report the same
 *   requests, operation by operation (the committer's are told apart by its tally);
 * - a failure of E's finish: the next commit (or sync) returns it with its message, the
 *   destination refuses further commits, and a rerun recovers every row once;
 * - where s3l_dest_commit returns: after the commit point by default, before it with
 *   defer_commit_point (issue 14 item 3), whose failure before the point drops the epoch;
 *   s3l_dest_wait_finish tells a held finish from an ended one;
 * - options of versions 1 and 2 commit serially;
 * - the model's exactness with pipelining under failures at every operation is in
 *   test_commit.c (the model runner pipelines unless told otherwise).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <dirent.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "commit/commit.h"
#include "crash_store.h"
#include "model_runner.h"
#include "s3l/destination.h"
#include "s3l/store.h"
#include "schema/schema_int.h"
#include "test_format.h"
#include "util/util.h"

struct lake {
    char dir[64];
    char url[96];
};

static void lake_new(struct lake *l)
{
    snprintf(l->dir, sizeof(l->dir), "%s/s3l-pipelined-XXXXXX",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    assert_non_null(mkdtemp(l->dir));
    snprintf(l->url, sizeof(l->url), "file://%s", l->dir);
}

static void lake_rm(struct lake *l)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", l->dir);
    assert_int_equal(system(cmd), 0);
}

static struct s3l_test_run model(const char *url, bool serial)
{
    struct s3l_test_run r = {.url = url,
                             .pipeline = "pp",
                             .lanes = 1,
                             .tables = 1,
                             .file_size = 30,
                             .total_rows = 36,
                             .epoch_rows = 12,
                             .serial = serial};
    return r;
}

static void verify_complete(struct s3l_test_run *r, const char *what)
{
    char why[300] = "";
    if (s3l_test_verify(r, true, why, sizeof(why)) != 0)
        fail_msg("%s: %s", what, why);
    struct s3l_test_census c;
    assert_int_equal(s3l_test_census(r, &c), 0);
    assert_int_equal(c.committed_epoch, 3);
    assert_int_equal(c.staged, 0);
    assert_false(c.pending);
}

/* Held at each point of epoch 1's finish until epoch 2 stages a file: released only when the
 * finish and the staging overlap. */
static void overlap_at_every_point(void **state)
{
    (void)state;
    /* after-prepare: the model runner defers the commit point (as the runner does), so the
     * committer publishes epoch 1's last file and announces it before the commit point. */
    static const char *points[] = {"after-prepare", "after-checkpoint", "between-copies",
                                   "before-marker", "after-marker",     "after-commit"};
    for (size_t i = 0; i < S3L_ARRAY_LEN(points); i++) {
        for (int serial = 0; serial <= 1; serial++) {
            struct lake l;
            lake_new(&l);
            struct s3l_test_run r = model(l.url, serial);
            /* Epoch 1 stages 3 files (after-stage #1 to #3): #4 is epoch 2's first. Serial: the
             * stager waits for the finish, so the hold can only time out. */
            s3l_test_hold_arm(points[i], 1, "after-stage", 4, false, serial ? 300 : 20000);
            struct s3l_error err = {0};
            int rc = s3l_test_run(&r, &err);
            int held = s3l_test_hold_result();
            s3l_test_crash_disarm();
            if (rc)
                fail_msg("%s (%s): %s", points[i], serial ? "serial" : "pipelined", err.message);
            if (held != (serial ? 2 : 1))
                fail_msg("%s (%s): hold result %d, expected %d", points[i],
                         serial ? "serial" : "pipelined", held, serial ? 2 : 1);
            verify_complete(&r, points[i]);
            lake_rm(&l);
        }
    }
}

static struct s3l_field fields[] = {
    {"id", {.id = S3L_TYPE_INT64}, false, true},
    {"name", {.id = S3L_TYPE_UTF8}, true, false},
};
static const struct s3l_schema schema2 = {2, fields};

static void put_row(struct s3l_row_sink *k, int64_t id)
{
    assert_int_equal(k->ops->row_begin(k->ctx), 0);
    assert_int_equal(k->ops->put_int(k->ctx, id), 0);
    assert_int_equal(k->ops->put_bytes(k->ctx, "abcdef", 6), 0);
    struct s3l_error err = {0};
    assert_int_equal(k->ops->row_end(k->ctx, &err), 0);
}

static struct s3l_dest *open_dest_v(struct s3l_store *s, int version, bool serial, bool defer,
                                    struct s3l_error *err)
{
    struct s3l_dest_options o = {0};
    o.version = version;
    o.pipeline_id = "pr";
    o.file_size = 40;
    o.serial_commit = serial;
    o.defer_commit_point = defer;
    struct s3l__dest_format c;
    s3l_test_format(&c);
    struct s3l_dest *d = NULL;
    assert_int_equal(s3l__dest_open_format(s, &o, &c, &d, err), 0);
    return d;
}

static struct s3l_dest *open_dest(struct s3l_store *s, bool serial, struct s3l_error *err)
{
    return open_dest_v(s, S3L_DEST_OPTIONS_VERSION, serial, false, err);
}

/* A writer of table t on url (its own store, wrapped when the crash store is armed): options of
 * `version`, defer_commit_point when defer; k is lane 0's sink, one row (id 1) put. */
struct writer {
    struct s3l_store *s;
    struct s3l_dest *d;
    struct s3l_row_sink k;
};

static void writer_open(struct writer *w, const char *url, int version, bool defer)
{
    struct s3l_error err = {0};
    assert_int_equal(s3l_store_open(url, NULL, &w->s, &err), 0);
    w->d = open_dest_v(w->s, version, false, defer, &err);
    struct s3l_dest_stream *st;
    assert_int_equal(s3l_dest_stream(w->d, NULL, "t", &schema2, &st, &err), 0);
    assert_int_equal(s3l_dest_lane_sink(st, 0, &w->k), 0);
    put_row(&w->k, 1);
}

static void writer_free(struct writer *w)
{
    s3l_dest_free(w->d);
    s3l_store_free(w->s);
}

/* Three epochs of 10 rows (several files each, a schema record with the first), their reports
 * in epoch order (info[0..2]). */
static void three_epochs(const char *url, bool serial, struct s3l_dest_commit_info info[3])
{
    struct s3l_store *s = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_store_open(url, NULL, &s, &err), 0);
    struct s3l_dest *d = open_dest(s, serial, &err);
    struct s3l_dest_stream *st;
    assert_int_equal(s3l_dest_stream(d, "ns", "t", &schema2, &st, &err), 0);
    struct s3l_row_sink k;
    assert_int_equal(s3l_dest_lane_sink(st, 0, &k), 0);
    size_t got = 0;
    for (int e = 0; e < 3; e++) {
        for (int i = 0; i < 10; i++)
            put_row(&k, e * 10 + i);
        char state[32];
        snprintf(state, sizeof(state), "{\"next\": %d}", (e + 1) * 10);
        struct s3l_dest_commit_info ci;
        assert_int_equal(s3l_dest_commit(d, state, &ci, &err), 0);
        if (serial) {
            assert_int_equal(ci.epoch, e + 1); /* this call's */
            assert_int_equal(ci.finishing, 0);
        } else {
            assert_int_equal(ci.epoch, e); /* the one before (0: none) */
            assert_int_equal(ci.finishing, e + 1);
        }
        if (ci.epoch)
            info[got++] = ci;
    }
    struct s3l_dest_commit_info ci;
    assert_int_equal(s3l_dest_sync(d, &ci, &err), 0);
    assert_int_equal(ci.epoch, serial ? 0 : 3);
    if (ci.epoch)
        info[got++] = ci;
    assert_int_equal(got, 3);
    /* Nothing more to report. */
    assert_int_equal(s3l_dest_sync(d, &ci, &err), 0);
    assert_int_equal(ci.epoch, 0);
    s3l_dest_free(d);
    s3l_store_free(s);
}

static void requests_per_epoch_as_serial(void **state)
{
    (void)state;
    struct lake a, b;
    lake_new(&a);
    lake_new(&b);
    struct s3l_dest_commit_info ser[3], pip[3];
    three_epochs(a.url, true, ser);
    three_epochs(b.url, false, pip);
    for (int e = 0; e < 3; e++) {
        assert_int_equal(ser[e].epoch, e + 1);
        assert_int_equal(pip[e].epoch, e + 1);
        assert_int_equal(pip[e].files, ser[e].files);
        assert_int_equal(pip[e].rows, 10);
        assert_int_equal(pip[e].rows, ser[e].rows);
        assert_true(ser[e].files >= 2);
        /* By hand, on file:// (store operations): f uploads, 3 puts (commit point, marker,
         * committed), f copies and f removes (no batch delete); the first epoch also the claim
         * and the schema record (2 puts). */
        uint64_t f = ser[e].files;
        assert_int_equal(s3l_counts_get(&ser[e].requests, "upload"), f);
        assert_int_equal(s3l_counts_get(&ser[e].requests, "put"), 3 + (e == 0 ? 2 : 0));
        assert_int_equal(s3l_counts_get(&ser[e].requests, "copy"), f);
        assert_int_equal(s3l_counts_get(&ser[e].requests, "remove"), f);
        if (pip[e].requests.total != ser[e].requests.total)
            fail_msg("epoch %d: pipelined %llu requests, serial %llu", e + 1,
                     (unsigned long long)pip[e].requests.total,
                     (unsigned long long)ser[e].requests.total);
        for (size_t i = 0; i < ser[e].requests.n; i++) {
            const char *op = ser[e].requests.ops[i].op;
            if (s3l_counts_get(&pip[e].requests, op) != ser[e].requests.ops[i].n)
                fail_msg("epoch %d, %s: pipelined %llu, serial %llu", e + 1, op,
                         (unsigned long long)s3l_counts_get(&pip[e].requests, op),
                         (unsigned long long)ser[e].requests.ops[i].n);
        }
    }
    lake_rm(&a);
    lake_rm(&b);
}

/* Epoch 1's finish fails on the committer's thread (held just after its commit point until the
 * test says "go"; the store fails from then on) while epoch 2 stages: the commit of epoch 2
 * returns that failure with its message, once; the destination then refuses commits, and a
 * reopening recovers epoch 1. */
static void finish_failure_reaches_the_next_commit(void **state)
{
    (void)state;
    struct lake l;
    lake_new(&l);
    struct s3l_error err = {0};
    s3l_test_hold_arm("after-checkpoint", 1, "go", 1, false, 20000);
    struct writer w;
    writer_open(&w, l.url, S3L_DEST_OPTIONS_VERSION, false); /* its store wrapped */
    struct s3l_dest *d = w.d;
    struct s3l_store *ws = w.s;
    struct s3l_row_sink k = w.k;
    struct s3l_dest_commit_info ci;
    assert_int_equal(s3l_dest_commit(d, "{\"n\": 1}", &ci, &err), 0);
    assert_int_equal(ci.epoch, 0);
    assert_int_equal(ci.finishing, 1);
    put_row(&k, 2); /* epoch 2 stages while epoch 1 is held */
    /* Epoch 1's file is published and its commit point written on the committer's thread. */
    assert_true(s3l_test_hold_wait(20000));
    s3l_test_fail_from_now();
    s3l_store_event(ws, "go");
    s3l_error_clear(&err);
    int rc = s3l_dest_commit(d, "{\"n\": 2}", &ci, &err);
    assert_int_equal(s3l_test_hold_result(), 1);
    s3l_test_crash_disarm();
    assert_int_equal(rc, S3L_EIO);
    if (!strstr(err.message, "committing epoch 1") || !strstr(err.message, "injected"))
        fail_msg("message: %s", err.message);
    s3l_error_clear(&err);
    assert_int_equal(s3l_dest_sync(d, &ci, &err), 0); /* reported once */
    assert_int_equal(ci.epoch, 0);
    assert_int_equal(s3l_dest_commit(d, "{\"n\": 2}", &ci, &err), S3L_ESTATE);
    s3l_dest_abort(d); /* epoch 2's staged file: never recorded, removed */
    s3l_dest_free(d);
    s3l_store_free(ws);
    /* Epoch 1 passed its commit point: the next open finishes it. */
    struct s3l_store *s = NULL;
    assert_int_equal(s3l_store_open(l.url, NULL, &s, &err), 0);
    d = open_dest(s, false, &err);
    assert_int_equal(s3l_dest_recovered(d), 1);
    assert_int_equal(s3l_dest_committed_epoch(d), 1);
    s3l_dest_free(d);
    struct s3l_object_info info;
    assert_int_equal(s3l_store_stat(s, "_openetl/markers/t/pr-00000000000000000001.json", &info,
                                    &err),
                     0);
    s3l_store_free(s);
    struct s3l_test_run r = model(l.url, false);
    r.pipeline = "pr";
    struct s3l_test_census c;
    assert_int_equal(s3l_test_census(&r, &c), 0);
    assert_false(c.pending);
    assert_int_equal(c.committed_epoch, 1);
    lake_rm(&l);
}

/* The checkpoint file as it is on disk now, read with jansson, not with our decoder:
 * {"committed_epoch": E, "pending": null | {"epoch": E, ...}, "state": ...}. */
struct ckpt_seen {
    bool pending;
    long long pending_epoch, committed_epoch;
    bool has_state;
};

static struct ckpt_seen read_ckpt(const struct lake *l)
{
    char path[160];
    snprintf(path, sizeof(path), "%s/_openetl/checkpoints/pr.json", l->dir);
    json_error_t je;
    json_t *o = json_load_file(path, 0, &je);
    if (!o)
        fail_msg("%s: %s", path, je.text);
    json_t *p = json_object_get(o, "pending"), *st = json_object_get(o, "state");
    struct ckpt_seen c = {json_is_object(p),
                          json_is_object(p) ? json_integer_value(json_object_get(p, "epoch")) : 0,
                          json_integer_value(json_object_get(o, "committed_epoch")),
                          st && !json_is_null(st)};
    json_decref(o);
    return c;
}

/* Objects under path (regular files but the store's own .s3l- temp and lock files), counted on
 * disk; 0 when path does not exist. */
static unsigned count_files(const char *path)
{
    DIR *dir = opendir(path);
    if (!dir)
        return 0;
    unsigned n = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL;) {
        if (e->d_name[0] == '.')
            continue; /* ., .. and the store's .s3l- files */
        char sub[512];
        snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
        struct stat sb;
        assert_int_equal(lstat(sub, &sb), 0);
        n += S_ISDIR(sb.st_mode) ? count_files(sub) : S_ISREG(sb.st_mode);
    }
    closedir(dir);
    return n;
}

static unsigned count_under(const struct lake *l, const char *sub)
{
    char path[160];
    snprintf(path, sizeof(path), "%s/%s", l->dir, sub);
    return count_files(path);
}

/*
 * Where s3l_dest_commit returns (issue 14 item 3). By default (pipelined) after the commit
 * point: with the committer held just after it, the store already holds epoch 1 pending. With
 * defer_commit_point before it: with the committer held at after-prepare (its file published,
 * the commit point not yet written), the store holds the staged file and no pending epoch; once
 * released, sync reports epoch 1 committed.
 */
static void where_commit_returns(void **state)
{
    (void)state;
    for (int defer = 0; defer <= 1; defer++) {
        struct lake l;
        lake_new(&l);
        struct s3l_error err = {0};
        s3l_test_hold_arm(defer ? "after-prepare" : "after-checkpoint", 1, "go", 1, false,
                          20000);
        struct writer w;
        writer_open(&w, l.url, S3L_DEST_OPTIONS_VERSION, defer); /* its store wrapped */
        struct s3l_dest *d = w.d;
        struct s3l_dest_commit_info ci;
        assert_int_equal(s3l_dest_commit(d, "{\"n\": 1}", &ci, &err), 0);
        assert_int_equal(ci.finishing, 1);
        assert_true(s3l_test_hold_wait(20000)); /* the committer is there, after this return */
        struct ckpt_seen ck = read_ckpt(&l);
        if (defer) {
            assert_false(ck.pending);
            assert_int_equal(count_under(&l, "_openetl/staging"), 1);
        } else {
            assert_true(ck.pending);
            assert_int_equal(ck.pending_epoch, 1);
        }
        assert_int_equal(ck.committed_epoch, 0);
        assert_false(s3l_dest_wait_finish(d, 50)); /* held: still finishing after 50 ms */
        s3l_store_event(w.s, "go");
        assert_true(s3l_dest_wait_finish(d, 20000));
        assert_true(s3l_dest_wait_finish(d, 0));
        assert_int_equal(s3l_dest_sync(d, &ci, &err), 0);
        assert_int_equal(s3l_test_hold_result(), 1);
        s3l_test_crash_disarm();
        assert_int_equal(ci.epoch, 1);
        assert_int_equal(ci.rows, 1);
        ck = read_ckpt(&l);
        assert_false(ck.pending);
        assert_int_equal(ck.committed_epoch, 1);
        writer_free(&w);
        lake_rm(&l);
    }
}

/*
 * Deferred: the upload of the epoch's last file fails on the committer's thread, before the commit
 * point. The next commit returns that failure with its message, once, then S3L_ESTATE; nothing of
 * epoch 1 was recorded (the checkpoint file, read with jansson: no pending epoch, no state) and
 * its staged file is removed (never recorded), as counted on disk.
 */
static void upload_failure_before_the_point(void **state)
{
    (void)state;
    struct lake l;
    lake_new(&l);
    struct s3l_error err = {0};
    s3l_test_fail_op_arm("upload_publish", 1);
    struct writer w;
    /* One row, one small file: closed by the commit, published by the committer. */
    writer_open(&w, l.url, S3L_DEST_OPTIONS_VERSION, true); /* its store wrapped */
    struct s3l_dest *d = w.d;
    struct s3l_dest_commit_info ci;
    assert_int_equal(s3l_dest_commit(d, "{\"n\": 1}", &ci, &err), 0);
    assert_int_equal(ci.finishing, 1);
    /* Ended before epoch 2 closes: its upload is then the committer's too, not published while
     * epoch 1 finishes (which would race epoch 1's for the failure armed). */
    assert_true(s3l_dest_wait_finish(d, 20000));
    put_row(&w.k, 2);
    s3l_error_clear(&err);
    assert_int_equal(s3l_dest_commit(d, "{\"n\": 2}", &ci, &err), S3L_EIO);
    if (!strstr(err.message, "injected failure of upload_publish") ||
        !strstr(err.message, "_openetl/staging/"))
        fail_msg("message: %s", err.message);
    s3l_error_clear(&err);
    assert_int_equal(s3l_dest_sync(d, &ci, &err), 0); /* reported once */
    assert_int_equal(s3l_dest_commit(d, "{\"n\": 2}", &ci, &err), S3L_ESTATE);
    s3l_dest_abort(d);
    writer_free(&w);
    s3l_test_crash_disarm();
    struct ckpt_seen ck = read_ckpt(&l);
    assert_false(ck.pending);
    assert_int_equal(ck.committed_epoch, 0);
    assert_false(ck.has_state); /* the positions of epoch 1 were never recorded */
    assert_int_equal(count_under(&l, "_openetl/staging"), 0);
    assert_int_equal(count_under(&l, "t"), 0);
    lake_rm(&l);
}

/*
 * Deferred, with epoch 1 still finishing (its committer held at after-checkpoint until the second
 * after-stage): the commit of epoch 2 completes epoch 2's upload while it waits for that finish,
 * so the second after-stage comes from there and releases the hold (result 1), and the call
 * reports epoch 1. Without defer_commit_point the commit waits for epoch 1's finish first, and
 * its hold can only time out (result 2): the check tells the two apart. Last, the same with
 * epoch 2's upload failing: that commit returns the failure, before epoch 2's commit point; it
 * has removed epoch 2's staged file and recorded nothing, a retried commit is refused
 * (S3L_ESTATE), and after a reopen epoch 2 staged again commits (the checkpoint file read with
 * jansson, files counted on disk).
 */
static void early_publish_overlaps_the_finish(void **state)
{
    (void)state;
    for (int mode = 0; mode < 3; mode++) {
        bool defer = mode != 1, fail = mode == 2;
        struct lake l;
        lake_new(&l);
        struct s3l_error err = {0};
        s3l_test_hold_arm("after-checkpoint", 1, "after-stage", 2, false,
                          defer && !fail ? 20000 : 300);
        if (fail)
            s3l_test_fail_op_also("upload_publish", 2);
        struct writer w;
        writer_open(&w, l.url, S3L_DEST_OPTIONS_VERSION, defer); /* its store wrapped */
        struct s3l_dest *d = w.d;
        struct s3l_dest_commit_info ci;
        assert_int_equal(s3l_dest_commit(d, "{\"n\": 1}", &ci, &err), 0);
        assert_true(s3l_test_hold_wait(20000)); /* epoch 1's committer is held */
        put_row(&w.k, 2);
        int rc = s3l_dest_commit(d, "{\"n\": 2}", &ci, &err);
        if (fail) {
            assert_int_equal(rc, S3L_EIO);
            if (!strstr(err.message, "injected failure of upload_publish") ||
                !strstr(err.message, "_openetl/staging/"))
                fail_msg("message: %s", err.message);
            assert_int_equal(s3l_test_hold_result(), 2); /* no second after-stage came */
            /* Dropped by the failing call itself: nothing of epoch 2 is left staged, nothing
             * recorded, and a commit retried without an abort is refused. */
            assert_int_equal(count_under(&l, "_openetl/staging"), 0);
            struct ckpt_seen ck = read_ckpt(&l);
            assert_false(ck.pending);
            assert_int_equal(ck.committed_epoch, 1);
            s3l_error_clear(&err);
            assert_int_equal(s3l_dest_commit(d, "{\"n\": 2}", &ci, &err), S3L_ESTATE);
            s3l_dest_abort(d);
            s3l_test_crash_disarm();
            writer_free(&w); /* reopened: epoch 2 staged again commits */
            writer_open(&w, l.url, S3L_DEST_OPTIONS_VERSION, defer);
            d = w.d;
            s3l_error_clear(&err);
            put_row(&w.k, 2);
            assert_int_equal(s3l_dest_commit(d, "{\"n\": 2}", &ci, &err), 0);
        } else {
            if (rc)
                fail_msg("%s: %s", defer ? "deferred" : "not deferred", err.message);
            assert_int_equal(s3l_test_hold_result(), defer ? 1 : 2);
        }
        assert_int_equal(ci.epoch, fail ? 0 : 1); /* reopened: nothing finished before */
        assert_int_equal(ci.finishing, 2);
        assert_int_equal(s3l_dest_sync(d, &ci, &err), 0);
        assert_int_equal(ci.epoch, 2);
        s3l_test_crash_disarm();
        writer_free(&w);
        struct ckpt_seen ck = read_ckpt(&l);
        assert_false(ck.pending);
        assert_int_equal(ck.committed_epoch, 2);
        assert_int_equal(count_under(&l, "_openetl/staging"), 0);
        assert_int_equal(count_under(&l, "t"), 2);
        lake_rm(&l);
    }
}

/* Options of versions 1 and 2 predate the pipelined commit: their commits finish before they
 * return (the epoch reported by the same call). s3l_dest_open takes every version up to the
 * current one (it took only 1 and the current), and refuses 0 and the next. */
static void old_versions_are_serial(void **state)
{
    (void)state;
    for (int v = 1; v <= S3L_DEST_OPTIONS_VERSION; v++) {
        struct lake l;
        lake_new(&l);
        struct s3l_error err = {0};
        struct writer w;
        writer_open(&w, l.url, v, false);
        struct s3l_dest *d = w.d, *o_d = NULL;
        struct s3l_dest_commit_info ci;
        assert_int_equal(s3l_dest_commit(d, "{\"n\": 1}", &ci, &err), 0);
        assert_int_equal(ci.epoch, v < 3 ? 1 : 0);
        assert_int_equal(ci.finishing, v < 3 ? 0 : 1);
        if (v < 3)
            assert_true(s3l_dest_wait_finish(d, 0)); /* nothing ever finishes behind */
        assert_int_equal(s3l_dest_sync(d, &ci, &err), 0);
        struct s3l_dest_options o = {.version = v, .pipeline_id = "pq"};
        assert_int_equal(s3l_dest_open(w.s, &o, &o_d, &err), 0);
        s3l_dest_free(o_d);
        writer_free(&w);
        lake_rm(&l);
    }
    struct lake l;
    lake_new(&l);
    struct s3l_store *s = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_store_open(l.url, NULL, &s, &err), 0);
    struct s3l_dest *d = NULL;
    struct s3l_dest_options bad[] = {{.version = 0, .pipeline_id = "pq"},
                                     {.version = S3L_DEST_OPTIONS_VERSION + 1, .pipeline_id = "pq"}};
    for (size_t i = 0; i < 2; i++) {
        s3l_error_clear(&err);
        assert_int_equal(s3l_dest_open(s, &bad[i], &d, &err), S3L_EINVALID_CONFIG);
    }
    s3l_store_free(s);
    lake_rm(&l);
}

/* The staged files' deletion after a committed epoch fails (every remove of epoch 1, as a store
 * refusing DeleteObject): the epoch is committed all the same, and its report, the destination
 * and the disk agree on how many were left, with the store's answer kept; epoch 2 deletes its
 * own; a later writer's gc removes epoch 1's. */
static void staged_deletes_that_fail_are_counted(void **state)
{
    (void)state;
    struct lake l;
    lake_new(&l);
    struct s3l_error err = {0};
    s3l_test_fail_op_every("remove");
    struct writer w;
    writer_open(&w, l.url, S3L_DEST_OPTIONS_VERSION, false); /* its store wrapped */
    for (int i = 2; i <= 5; i++)
        put_row(&w.k, i);
    struct s3l_dest_commit_info ci;
    assert_int_equal(s3l_dest_commit(w.d, "{\"n\": 1}", &ci, &err), 0);
    assert_int_equal(s3l_dest_sync(w.d, &ci, &err), 0);
    assert_int_equal(ci.epoch, 1);
    assert_true(ci.files >= 2);
    char staging[160];
    snprintf(staging, sizeof(staging), "%s/_openetl/staging", l.dir);
    assert_int_equal(count_files(staging), ci.files); /* what is left, counted on disk */
    assert_int_equal(ci.staged_left, ci.files);
    if (!ci.staged_left_why || !strstr(ci.staged_left_why, "injected failure of remove"))
        fail_msg("why: %s", ci.staged_left_why ? ci.staged_left_why : "(null)");
    uint64_t left = ci.files;
    struct ckpt_seen ck = read_ckpt(&l);
    assert_false(ck.pending);
    assert_int_equal(ck.committed_epoch, 1);
    /* Epoch 2 deletes its own (the store works again); the count since open stays. */
    s3l_test_crash_disarm();
    put_row(&w.k, 6);
    assert_int_equal(s3l_dest_commit(w.d, "{\"n\": 2}", &ci, &err), 0);
    assert_int_equal(s3l_dest_sync(w.d, &ci, &err), 0);
    assert_int_equal(ci.epoch, 2);
    assert_int_equal(ci.staged_left, 0);
    assert_null(ci.staged_left_why);
    const char *why = NULL;
    assert_int_equal(s3l_dest_staged_left(w.d, &why), left);
    assert_non_null(why);
    assert_int_equal(count_files(staging), left);
    writer_free(&w);
    /* A later writer (a newer generation) removes them with gc. */
    struct s3l_store *s = NULL;
    assert_int_equal(s3l_store_open(l.url, NULL, &s, &err), 0);
    struct s3l_dest *d = open_dest(s, false, &err);
    assert_int_equal(s3l_dest_staged_left(d, &why), 0);
    assert_null(why);
    uint64_t removed = 0;
    assert_int_equal(s3l_dest_gc(d, &removed, &err), 0);
    assert_int_equal(removed, left);
    assert_int_equal(count_files(staging), 0);
    s3l_dest_free(d);
    s3l_store_free(s);
    lake_rm(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(overlap_at_every_point),
        cmocka_unit_test(requests_per_epoch_as_serial),
        cmocka_unit_test(finish_failure_reaches_the_next_commit),
        cmocka_unit_test(where_commit_returns),
        cmocka_unit_test(upload_failure_before_the_point),
        cmocka_unit_test(early_publish_overlaps_the_finish),
        cmocka_unit_test(old_versions_are_serial),
        cmocka_unit_test(staged_deletes_that_fail_are_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
